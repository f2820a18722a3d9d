// tg_ranges_*: counting a forward graph whose columns stay in host memory
// (trigrid.h). A range's rows are copied into the work area and checked;
// the count kernel then reads each entry's columns from host memory over
// the bus (mapped, registered memory) into shared memory, a tile at a
// time, and searches there every column of the range's rows it names.
#include <algorithm>
#include <cstdio>

#include "tg_core.cuh"

namespace {

constexpr int kWarps = 8;     // warps of a block of the count kernel
constexpr int kTile = 1024;   // columns of an entry a warp holds at once
constexpr unsigned kAll = 0xffffffffu;

// Rebases the range's offsets to its first and flags offsets outside
// [base, end] (words[0]); tg_check_block then checks their order.
__global__ void ranges_rebase(uint64_t *off, uint64_t nrows, uint64_t base, uint64_t end,
                              unsigned long long *words) {
    bool bad = false;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= nrows;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t o = off[i];
        bad |= o < base || o > end;
        off[i] = o - base;
    }
    if (__any_sync(kAll, bad) && (threadIdx.x & 31) == 0) atomicOr(&words[0], 1ull);
}

// The index of the first of s[0, n) that is not below x.
__device__ __forceinline__ uint32_t lower(const uint32_t *s, uint32_t n, uint32_t x) {
    uint32_t lo = 0;
    while (n > 0) {
        const uint32_t h = n >> 1;
        if (s[lo + h] < x) {
            lo += h + 1;
            n -= h + 1;
        } else {
            n = h;
        }
    }
    return lo;
}

// The index of the first of g[0, n) (device memory) that is not below x.
__device__ __forceinline__ uint32_t lower_global(const uint32_t *__restrict__ g, uint32_t n, uint32_t x) {
    uint32_t lo = 0;
    while (n > 0) {
        const uint32_t h = n >> 1;
        if (__ldg(g + lo + h) < x) {
            lo += h + 1;
            n -= h + 1;
        } else {
            n = h;
        }
    }
    return lo;
}

// One warp per entry: its columns, a tile of kTile at a time in shared
// memory; the entry's first seg columns v (in the range) in batches of
// 32. For each v the shorter side is walked and searched in the other:
// v's row (device memory) searched in the tile, or the tile's columns
// after v searched in v's row. The items of the 32 v's are spread over
// the lanes. words[3] counts the triangles; words[0] |= 2 for an entry or
// a column that breaks the contract.
__global__ void __launch_bounds__(kWarps * 32) ranges_count(const tg_range_row *__restrict__ ent, uint64_t nent,
                                                           const uint32_t *__restrict__ hcols, uint64_t nnz,
                                                           const uint64_t *__restrict__ off,
                                                           const uint32_t *__restrict__ rcols, uint64_t first,
                                                           uint64_t nrows, unsigned long long *words) {
    __shared__ uint32_t tiles[kWarps][kTile];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    uint32_t *s = tiles[wib];
    unsigned long long found = 0, bad = 0;
    for (uint64_t e = (uint64_t)blockIdx.x * kWarps + wib; e < nent; e += (uint64_t)gridDim.x * kWarps) {
        const tg_range_row r = ent[e];
        if (r.seg == 0 || r.seg > r.len || r.start > nnz || r.len > nnz - r.start) {
            bad += lane == 0;
            continue;
        }
        const uint32_t *suf = hcols + r.start;
        for (uint32_t t0 = 0; t0 < r.len; t0 += kTile) {
            const uint32_t tl = min((uint32_t)kTile, r.len - t0);
            __syncwarp();
            for (uint32_t i = lane; i < tl; i += 32) s[i] = suf[t0 + i];
            __syncwarp();
            const uint32_t lo = s[0], hi = s[tl - 1];
            for (uint32_t j0 = 0; j0 < r.seg && j0 < t0 + tl; j0 += 32) {
                const uint32_t j = j0 + lane;
                uint64_t b = 0;
                uint32_t d = 0, dv = 0, p0 = 0;
                bool walkv = false; // walk v's row (else the tile after v)
                if (j < r.seg) {
                    const uint32_t v = j >= t0 && j - t0 < tl ? s[j - t0] : suf[j];
                    if ((uint64_t)v < first || (uint64_t)v - first >= nrows) {
                        bad += j >= t0 && j - t0 < tl; // in the tile that holds it
                    } else if (v < hi) { // cols(v) > v: none in the tile otherwise
                        b = off[v - first];
                        dv = (uint32_t)(off[v - first + 1] - b);
                        p0 = max(j + 1, t0) - t0; // the tile's columns after v
                        const uint32_t rest = p0 < tl ? tl - p0 : 0;
                        walkv = dv <= rest;
                        d = rest == 0 ? 0 : min(dv, rest);
                    }
                }
                uint32_t incl = d; // inclusive scan of the lanes' items
                for (int o = 1; o < 32; o <<= 1) {
                    const uint32_t x = __shfl_up_sync(kAll, incl, o);
                    if (lane >= o) incl += x;
                }
                const uint32_t total = __shfl_sync(kAll, incl, 31), excl = incl - d;
                for (uint32_t k0 = 0; k0 < total; k0 += 32) {
                    const uint32_t k = k0 + lane;
                    int owner = 0; // the last lane whose items start at or before k
                    for (int step = 16; step > 0; step >>= 1) {
                        const uint32_t ex = __shfl_sync(kAll, excl, owner + step);
                        if (ex <= k) owner += step;
                    }
                    const uint64_t ob = __shfl_sync(kAll, b, owner);
                    const uint32_t oe = __shfl_sync(kAll, excl, owner);
                    const uint32_t odv = __shfl_sync(kAll, dv, owner);
                    const uint32_t op0 = __shfl_sync(kAll, p0, owner);
                    const bool ow = __shfl_sync(kAll, walkv, owner);
                    if (k < total) {
                        const uint32_t i = k - oe;
                        if (ow) {
                            const uint32_t w = __ldg(rcols + ob + i);
                            if (w >= lo && w <= hi) {
                                const uint32_t at = lower(s, tl, w);
                                found += at < tl && s[at] == w;
                            }
                        } else {
                            const uint32_t w = s[op0 + i];
                            const uint32_t at = lower_global(rcols + ob, odv, w);
                            found += at < odv && __ldg(rcols + ob + at) == w;
                        }
                    }
                }
            }
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        found += __shfl_down_sync(kAll, found, o);
        bad += __shfl_down_sync(kAll, bad, o);
    }
    if (lane == 0 && found) atomicAdd(&words[3], found);
    if (lane == 0 && bad) atomicOr(&words[0], 2ull);
}

int32_t need_ranges(tg_ctx *ctx, const char *fn, char *err, uint64_t errlen) {
    if (ctx == nullptr) {
        tg_set_err(err, errlen, "%s: NULL context", fn);
        return TG_ERR_INVALID;
    }
    if (ctx->ranges.arena == nullptr) {
        tg_set_err(err, errlen, "%s: no work area (tg_ranges_begin)", fn);
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, fn);
    return TG_OK;
}

// The device address of registered host memory at p.
cudaError_t mapped(const void *p, const void **out) {
    void *d = nullptr;
    cudaError_t e = cudaHostGetDevicePointer(&d, const_cast<void *>(p), 0);
    *out = d;
    return e;
}

} // namespace

void tg_ranges_drop(tg_ctx *ctx) {
    tg_ctx_free(ctx, ctx->ranges.arena);
    ctx->ranges = {};
}

extern "C" int32_t tg_ranges_begin(tg_ctx *ctx, const uint32_t *cols, uint64_t nnz, uint64_t nvertices,
                                   uint64_t bytes, char *err, uint64_t errlen) {
    const char *fn = "tg_ranges_begin";
    if (ctx == nullptr || (cols == nullptr && nnz > 0)) {
        tg_set_err(err, errlen, "%s: NULL context or columns", fn);
        return TG_ERR_INVALID;
    }
    if (nvertices >= 0xffffffffull || bytes < tg_ranges_bytes(1, 0)) {
        tg_set_err(err, errlen, "%s: %llu vertices (< 2^32-1) and %llu bytes (at least %llu)", fn,
                   (unsigned long long)nvertices, (unsigned long long)bytes,
                   (unsigned long long)tg_ranges_bytes(1, 0));
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, fn);
    tg_ranges_drop(ctx);
    const void *h = nullptr;
    if (nnz > 0 && (e = mapped(cols, &h)) != cudaSuccess) {
        cudaGetLastError();
        tg_set_err(err, errlen, "%s: the columns at %p are not registered host memory (tg_host_register): %s", fn,
                   (const void *)cols, cudaGetErrorString(e));
        return TG_ERR_INVALID;
    }
    void *a = nullptr;
    if ((e = tg_ctx_malloc(ctx, &a, bytes)) != cudaSuccess) {
        if (e != cudaErrorMemoryAllocation) return tg_cuda_status(e, err, errlen, fn);
        tg_set_err(err, errlen, "%s: out of device memory: %llu bytes, %llu of %llu in use", fn,
                   (unsigned long long)bytes, (unsigned long long)ctx->used, (unsigned long long)ctx->limit);
        return TG_ERR_OOM;
    }
    ctx->ranges.arena = a;
    ctx->ranges.bytes = bytes;
    ctx->ranges.nnz = nnz;
    ctx->ranges.nvert = nvertices;
    ctx->ranges.host = cols;
    ctx->ranges.hcols = (const uint32_t *)h;
    return TG_OK;
}

extern "C" int32_t tg_ranges_count(tg_ctx *ctx, const uint64_t *rowptr, uint64_t first, uint64_t nrows,
                                   const tg_range_row *entries, uint64_t nentries, uint64_t *triangles,
                                   double *kernel_ms, char *err, uint64_t errlen) {
    const char *fn = "tg_ranges_count";
    char where[160];
    int32_t rc = need_ranges(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    auto &rg = ctx->ranges;
    if (rowptr == nullptr || triangles == nullptr || (entries == nullptr && nentries > 0)) {
        tg_set_err(err, errlen, "%s: NULL offsets, entries or result", fn);
        return TG_ERR_INVALID;
    }
    *triangles = 0;
    if (kernel_ms) *kernel_ms = 0;
    const uint64_t base = rowptr[0], end = rowptr[nrows];
    if (first > rg.nvert || nrows > rg.nvert - first || base > end || end > rg.nnz ||
        tg_ranges_bytes(nrows, end - base) > rg.bytes) {
        tg_set_err(err, errlen,
                   "%s: rows [%llu, +%llu) with columns [%llu, %llu) do not fit a graph of %llu rows and %llu "
                   "columns or a work area of %llu bytes",
                   fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)base,
                   (unsigned long long)end, (unsigned long long)rg.nvert, (unsigned long long)rg.nnz,
                   (unsigned long long)rg.bytes);
        return TG_ERR_INVALID;
    }
    const void *dent = nullptr;
    if (nentries > 0) {
        cudaError_t e = mapped(entries, &dent);
        if (e != cudaSuccess) {
            cudaGetLastError();
            tg_set_err(err, errlen, "%s: the entries at %p are not registered host memory (tg_host_register): %s",
                       fn, (const void *)entries, cudaGetErrorString(e));
            return TG_ERR_INVALID;
        }
    }
    // The work area: the check words (words[0]: 1 malformed rows, 2 a bad
    // entry; words[3] the triangles), the offsets, the columns.
    unsigned long long *words = (unsigned long long *)rg.arena;
    uint64_t *off = (uint64_t *)((char *)rg.arena + 256);
    uint32_t *rcols = (uint32_t *)((char *)off + ((nrows + 1) * 8 + 255) / 256 * 256);
    cudaStream_t st = ctx->stream;
    TG_STEP(cudaEventRecord(ctx->ev_start, st), "timing");
    TG_STEP(cudaMemsetAsync(words, 0, 4 * sizeof(unsigned long long), st), "reset");
    TG_STEP(cudaMemcpyAsync(off, rowptr, (nrows + 1) * 8, cudaMemcpyHostToDevice, st), "copy offsets");
    if (end > base)
        TG_STEP(cudaMemcpyAsync(rcols, rg.host + base, (end - base) * 4, cudaMemcpyHostToDevice, st), "copy columns");
    const unsigned grid = (unsigned)std::max<uint64_t>(
        1, std::min<uint64_t>((nrows + 256) / 256, (uint64_t)ctx->env.sm_count * 16));
    ranges_rebase<<<grid, 256, 0, st>>>(off, nrows, base, end, words);
    TG_STEP(cudaGetLastError(), "rebase kernel");
    if (nrows > 0) {
        const uint64_t warps = std::min<uint64_t>(nrows, (uint64_t)ctx->env.sm_count * 64);
        tg_check_block<<<(unsigned)((warps + 7) / 8), 256, 0, st>>>(off, rcols, (int64_t)nrows,
                                                                    (int64_t)rg.nvert, end - base, words);
        TG_STEP(cudaGetLastError(), "check kernel");
    }
    TG_STEP(cudaMemcpyAsync(ctx->h_count, words, sizeof(unsigned long long), cudaMemcpyDeviceToHost, st),
               "read check");
    TG_STEP(cudaStreamSynchronize(st), "check");
    if (ctx->h_count[0] != 0) {
        tg_set_err(err, errlen,
                   "%s: malformed rows [%llu, +%llu) (offsets decreasing or outside [%llu, %llu], a column >= %llu, "
                   "or a row not strictly increasing)",
                   fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)base,
                   (unsigned long long)end, (unsigned long long)rg.nvert);
        return TG_ERR_INVALID;
    }
    if (nentries > 0) {
        const uint64_t blocks = std::min<uint64_t>((nentries + kWarps - 1) / kWarps, (uint64_t)ctx->env.sm_count * 8);
        ranges_count<<<(unsigned)blocks, kWarps * 32, 0, st>>>((const tg_range_row *)dent, nentries, rg.hcols,
                                                              rg.nnz, off, rcols, first, nrows, words);
        TG_STEP(cudaGetLastError(), "count kernel");
    }
    TG_STEP(cudaEventRecord(ctx->ev_stop, st), "timing");
    TG_STEP(cudaMemcpyAsync(ctx->h_count, words, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, st),
               "read count");
    TG_STEP(cudaStreamSynchronize(st), "count");
    if (ctx->h_count[0] != 0) {
        tg_set_err(err, errlen,
                   "%s: rows [%llu, +%llu): an entry past the %llu columns, with no column in the range or more "
                   "than its row, or a column of an entry outside the range",
                   fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)rg.nnz);
        return TG_ERR_INVALID;
    }
    *triangles = ctx->h_count[3];
    if (kernel_ms) {
        float ms = 0;
        TG_STEP(cudaEventElapsedTime(&ms, ctx->ev_start, ctx->ev_stop), "timing");
        *kernel_ms = ms;
    }
    return TG_OK;
}

extern "C" int32_t tg_ranges_end(tg_ctx *ctx, char *err, uint64_t errlen) {
    if (ctx == nullptr) {
        tg_set_err(err, errlen, "tg_ranges_end: NULL context");
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_ranges_end");
    tg_ranges_drop(ctx);
    return TG_OK;
}
