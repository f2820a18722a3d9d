// The 2D split of a forward graph on the device (tg_split_blocks) and the
// copy of a slot's block back to the host (tg_block_out).
//
// The split is the host's (partition.SplitLayout) in two passes over the
// forward graph's rows, a warp per row: the first counts each row's
// columns per column group into the blocks' offsets (a row of group I has
// one local id, so its counts land in one entry of each block (I, *)),
// a scan per block turns counts into offsets, and the second writes each
// column's local id at its row's cursor in its group's block, lanes in
// column order (a ballot per group), so that rows stay sorted.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <cub/device/device_scan.cuh>

#include "tg_core.cuh"

namespace {

// kMaxP bounds p: p*p blocks go into distinct slots.
constexpr int kMaxP = 4;
static_assert(kMaxP * kMaxP <= TG_MAX_SLOTS, "p x p blocks need p*p slots");

// Where a vertex goes: the hash scheme when nranges is 0, else the ranges
// (device arrays of nranges+1 starts, and per range its group and what its
// ids lose to become local ids).
struct split_map {
    int32_t p;
    int32_t nranges;
    const uint64_t *bounds;
    const int32_t *group;
    const uint64_t *delta;
};

__device__ __forceinline__ void locate(const split_map &m, uint32_t v, int &g, uint32_t &l) {
    if (m.nranges == 0) {
        g = (int)(v % (uint32_t)m.p);
        l = v / (uint32_t)m.p;
        return;
    }
    // The last range whose start is <= v: bounds[0] = 0 <= v < bounds[nranges].
    int lo = 0, hi = m.nranges;
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (m.bounds[mid] <= v) lo = mid;
        else hi = mid;
    }
    g = m.group[lo];
    l = (uint32_t)(v - m.delta[lo]);
}

// Pass 1: offs[I*p+J][local(u)+1] = the columns of row u in group J.
__global__ void split_count(const uint64_t *__restrict__ rowptr, const uint32_t *__restrict__ cols, int64_t n,
                            split_map m, uint64_t *const *__restrict__ offs) {
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t u = warp; u < n; u += nwarps) {
        int gi;
        uint32_t lu;
        locate(m, (uint32_t)u, gi, lu);
        uint32_t cnt[kMaxP] = {};
        const uint64_t e = rowptr[u + 1];
        for (uint64_t k = rowptr[u] + lane; k < e; k += 32) {
            int g;
            uint32_t l;
            locate(m, cols[k], g, l);
#pragma unroll
            for (int j = 0; j < kMaxP; j++) cnt[j] += g == j;
        }
#pragma unroll
        for (int j = 0; j < kMaxP; j++) {
            uint32_t c = cnt[j];
            for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
            if (lane == 0 && j < m.p) offs[gi * m.p + j][lu + 1] = c;
        }
    }
}

// Pass 2: every column's local id at its row's cursor in its group's block.
__global__ void split_scatter(const uint64_t *__restrict__ rowptr, const uint32_t *__restrict__ cols, int64_t n,
                              split_map m, uint64_t *const *__restrict__ offs, uint32_t *const *__restrict__ dst) {
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t u = warp; u < n; u += nwarps) {
        int gi;
        uint32_t lu;
        locate(m, (uint32_t)u, gi, lu);
        uint64_t at[kMaxP];
#pragma unroll
        for (int j = 0; j < kMaxP; j++) at[j] = j < m.p ? offs[gi * m.p + j][lu] : 0;
        const uint64_t e = rowptr[u + 1];
        for (uint64_t k0 = rowptr[u]; k0 < e; k0 += 32) {
            const uint64_t k = k0 + lane;
            int g = -1;
            uint32_t l = 0;
            if (k < e) locate(m, cols[k], g, l);
#pragma unroll
            for (int j = 0; j < kMaxP; j++) {
                const unsigned mask = __ballot_sync(0xffffffffu, g == j);
                if (g == j) dst[gi * m.p + j][at[j] + __popc(mask & below)] = l;
                at[j] += __popc(mask);
            }
        }
    }
}

// nnz[b] = offs[b][rows[b]].
__global__ void split_nnz(uint64_t *const *__restrict__ offs, const int64_t *__restrict__ rows, int nb,
                          uint64_t *nnz) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) nnz[b] = offs[b][rows[b]];
}

// Releases what slot s holds, keeping its event (tg_free_block's rule).
cudaError_t slot_clear(tg_ctx *ctx, tg_slot *s) {
    cudaError_t e = tg_slot_settle(s);
    tg_slot_drop_index(ctx, s);
    tg_ctx_free(ctx, s->rowptr);
    tg_ctx_free(ctx, s->cols);
    const cudaEvent_t copied = s->copied;
    *s = tg_slot{};
    s->copied = copied;
    return e;
}

// The buffers of one call, freed at its end unless handed to a slot.
struct split_bufs {
    tg_ctx *ctx;
    void *small = nullptr, *tmp = nullptr;
    uint64_t *off[kMaxP * kMaxP] = {};
    uint32_t *col[kMaxP * kMaxP] = {};
    explicit split_bufs(tg_ctx *c) : ctx(c) {}
    ~split_bufs() {
        cudaStreamSynchronize(ctx->stream);
        tg_ctx_free(ctx, small);
        tg_ctx_free(ctx, tmp);
        for (int b = 0; b < kMaxP * kMaxP; b++) {
            tg_ctx_free(ctx, off[b]);
            tg_ctx_free(ctx, col[b]);
        }
    }
};

int32_t split_check(tg_ctx *ctx, int32_t src, int32_t p, const int32_t *slots, int32_t nranges,
                    const uint64_t *bounds, const int32_t *groups, const int64_t *nnz_out, char *err,
                    uint64_t errlen) {
    const char *fn = "tg_split_blocks";
    if (ctx == nullptr || slots == nullptr || nnz_out == nullptr) {
        tg_set_err(err, errlen, "%s: NULL context, slots or nnz_out", fn);
        return TG_ERR_INVALID;
    }
    if (src < 0 || src >= TG_MAX_SLOTS) {
        tg_set_err(err, errlen, "%s: source slot %d out of range [0, %d)", fn, src, TG_MAX_SLOTS);
        return TG_ERR_INVALID;
    }
    if (p < 1 || p > kMaxP) {
        tg_set_err(err, errlen, "%s: p = %d: the device splits into 1 to %d groups", fn, p, kMaxP);
        return TG_ERR_INVALID;
    }
    bool seen[TG_MAX_SLOTS] = {};
    for (int b = 0; b < p * p; b++) {
        if (slots[b] < 0 || slots[b] >= TG_MAX_SLOTS || seen[slots[b]]) {
            tg_set_err(err, errlen, "%s: target slot %d of block %d is out of range or named twice", fn, slots[b],
                       b);
            return TG_ERR_INVALID;
        }
        seen[slots[b]] = true;
    }
    if (nranges < 0 || (nranges > 0 && (bounds == nullptr || groups == nullptr))) {
        tg_set_err(err, errlen, "%s: %d ranges without bounds or groups", fn, nranges);
        return TG_ERR_INVALID;
    }
    const tg_slot &s = ctx->slots[src];
    if (!s.loaded || s.blk.nrows != s.blk.ncols) {
        tg_set_err(err, errlen, "%s: source slot %d holds no square forward graph", fn, src);
        return TG_ERR_INVALID;
    }
    if (nranges > 0) {
        if (bounds[0] != 0 || bounds[nranges] != (uint64_t)s.blk.nrows) {
            tg_set_err(err, errlen, "%s: range bounds run from %llu to %llu, want 0 to %lld", fn,
                       (unsigned long long)bounds[0], (unsigned long long)bounds[nranges], (long long)s.blk.nrows);
            return TG_ERR_INVALID;
        }
        for (int r = 0; r < nranges; r++) {
            if (bounds[r + 1] < bounds[r] || groups[r] < 0 || groups[r] >= p) {
                tg_set_err(err, errlen, "%s: range %d: bounds decrease or group %d is not below p = %d", fn, r,
                           groups[r], p);
                return TG_ERR_INVALID;
            }
        }
    }
    return TG_OK;
}

} // namespace

#define TG_TRY(call, what)                                                                                             \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) return tg_cuda_status(e_, err, errlen, "tg_split_blocks: " what);                      \
    } while (0)

extern "C" int32_t tg_split_blocks(tg_ctx *ctx, int32_t src, int32_t p, const int32_t *slots, int32_t nranges,
                                   const uint64_t *bounds, const int32_t *groups, int64_t *nnz_out, char *err,
                                   uint64_t errlen) {
    int32_t rc = split_check(ctx, src, p, slots, nranges, bounds, groups, nnz_out, err, errlen);
    if (rc != TG_OK) return rc;
    TG_TRY(cudaSetDevice(ctx->device), "cudaSetDevice");
    TG_TRY(cudaStreamSynchronize(ctx->stream), "synchronize");
    const int nb = p * p;
    for (int b = 0; b < nb; b++)
        if (slots[b] != src) TG_TRY(slot_clear(ctx, &ctx->slots[slots[b]]), "release a target slot");
    tg_slot *s = &ctx->slots[src];
    const int64_t n = s->blk.nrows;

    // Group sizes, and per range what its ids lose to become local ids.
    int64_t size[kMaxP] = {};
    const size_t nr = (size_t)nranges;
    uint64_t *h_delta = nullptr;
    if (nranges == 0) {
        for (int g = 0; g < p; g++) size[g] = g < n ? (n - g - 1) / p + 1 : 0;
    } else {
        h_delta = (uint64_t *)malloc(nr * sizeof(uint64_t) + 1);
        if (h_delta == nullptr) {
            tg_set_err(err, errlen, "tg_split_blocks: out of host memory");
            return TG_ERR_OOM;
        }
        for (size_t r = 0; r < nr; r++) {
            h_delta[r] = bounds[r] - (uint64_t)size[groups[r]];
            size[groups[r]] += (int64_t)(bounds[r + 1] - bounds[r]);
        }
    }
    int64_t rows[kMaxP * kMaxP];
    for (int b = 0; b < nb; b++) rows[b] = size[b / p];

    split_bufs buf(ctx);
    // Small arrays in one allocation: block pointers, rows, nnz, the ranges.
    const size_t ptr_bytes = (size_t)nb * 8;
    const size_t small_bytes = 4 * ptr_bytes + (nr + 1) * 8 + nr * 4 + nr * 8 + 64;
    cudaError_t ce = tg_ctx_malloc(ctx, &buf.small, small_bytes);
    if (ce != cudaSuccess) {
        free(h_delta);
        return tg_cuda_status(ce, err, errlen, "tg_split_blocks: tables");
    }
    char *sp = (char *)buf.small;
    uint64_t **d_offs = (uint64_t **)sp;
    uint32_t **d_dst = (uint32_t **)(sp + ptr_bytes);
    int64_t *d_rows = (int64_t *)(sp + 2 * ptr_bytes);
    uint64_t *d_nnz = (uint64_t *)(sp + 3 * ptr_bytes);
    uint64_t *d_bounds = (uint64_t *)(sp + 4 * ptr_bytes);
    uint64_t *d_delta = d_bounds + nr + 1;
    int32_t *d_groups = (int32_t *)(d_delta + nr);
    split_map m{p, nranges, d_bounds, d_groups, d_delta};
    if (nranges > 0) {
        ce = cudaMemcpyAsync(d_bounds, bounds, (nr + 1) * 8, cudaMemcpyHostToDevice, ctx->stream);
        if (ce == cudaSuccess) ce = cudaMemcpyAsync(d_delta, h_delta, nr * 8, cudaMemcpyHostToDevice, ctx->stream);
        if (ce == cudaSuccess) ce = cudaMemcpyAsync(d_groups, groups, nr * 4, cudaMemcpyHostToDevice, ctx->stream);
        if (ce == cudaSuccess) ce = cudaStreamSynchronize(ctx->stream); // h_delta is freed next
    }
    free(h_delta);
    if (ce != cudaSuccess) return tg_cuda_status(ce, err, errlen, "tg_split_blocks: upload ranges");

    for (int b = 0; b < nb; b++) {
        TG_TRY(tg_ctx_malloc(ctx, (void **)&buf.off[b], (size_t)(rows[b] + 1) * 8), "block offsets");
        TG_TRY(cudaMemsetAsync(buf.off[b], 0, 8, ctx->stream), "memset");
    }
    TG_TRY(cudaMemcpyAsync(d_offs, buf.off, ptr_bytes, cudaMemcpyHostToDevice, ctx->stream), "upload tables");
    TG_TRY(cudaMemcpyAsync(d_rows, rows, ptr_bytes, cudaMemcpyHostToDevice, ctx->stream), "upload tables");
    const int threads = 256;
    const unsigned grid = (unsigned)std::max<int64_t>(
        1, std::min<int64_t>((n * 32 + threads - 1) / threads, (int64_t)ctx->env.sm_count * 32));
    if (n > 0) {
        split_count<<<grid, threads, 0, ctx->stream>>>(s->rowptr, s->cols, n, m, d_offs);
        TG_TRY(cudaGetLastError(), "count kernel");
    }
    // In place: offs[b][1..rows] becomes the running sums.
    size_t tmp_bytes = 0;
    const int64_t most = *std::max_element(rows, rows + nb);
    TG_TRY(cub::DeviceScan::InclusiveSum(nullptr, tmp_bytes, buf.off[0] + 1, buf.off[0] + 1, std::max<int64_t>(most, 1),
                                         ctx->stream),
           "scan sizing");
    TG_TRY(tg_ctx_malloc(ctx, &buf.tmp, tmp_bytes), "scan scratch");
    for (int b = 0; b < nb; b++)
        if (rows[b] > 0)
            TG_TRY(cub::DeviceScan::InclusiveSum(buf.tmp, tmp_bytes, buf.off[b] + 1, buf.off[b] + 1, rows[b],
                                                 ctx->stream),
                   "scan");
    split_nnz<<<1, 32, 0, ctx->stream>>>(d_offs, d_rows, nb, d_nnz);
    TG_TRY(cudaGetLastError(), "nnz kernel");
    TG_TRY(cudaMemcpyAsync(nnz_out, d_nnz, (size_t)nb * 8, cudaMemcpyDeviceToHost, ctx->stream), "read sizes");
    TG_TRY(cudaStreamSynchronize(ctx->stream), "count");
    for (int b = 0; b < nb; b++)
        TG_TRY(tg_ctx_malloc(ctx, (void **)&buf.col[b], (size_t)std::max<int64_t>(nnz_out[b], 1) * 4),
               "block columns");
    TG_TRY(cudaMemcpyAsync(d_dst, buf.col, ptr_bytes, cudaMemcpyHostToDevice, ctx->stream), "upload tables");
    if (n > 0) {
        split_scatter<<<grid, threads, 0, ctx->stream>>>(s->rowptr, s->cols, n, m, d_offs, d_dst);
        TG_TRY(cudaGetLastError(), "scatter kernel");
    }
    TG_TRY(cudaStreamSynchronize(ctx->stream), "scatter");

    // The blocks are made: they take their slots, the source's last.
    if ((ce = slot_clear(ctx, s)) != cudaSuccess) return tg_cuda_status(ce, err, errlen, "tg_split_blocks: source");
    for (int b = 0; b < nb; b++) {
        tg_slot *t = &ctx->slots[slots[b]];
        t->rowptr = buf.off[b];
        t->cols = buf.col[b];
        t->rowptr_cap = (size_t)rows[b] + 1;
        t->cols_cap = (size_t)std::max<int64_t>(nnz_out[b], 1);
        buf.off[b] = nullptr;
        buf.col[b] = nullptr;
        t->blk = tg_dblock{};
        t->blk.nrows = rows[b];
        t->blk.nnz = nnz_out[b];
        t->blk.ncols = size[b % p];
    }
    for (int b = 0; b < nb; b++) {
        rc = tg_slot_finish(ctx, &ctx->slots[slots[b]], err, errlen);
        if (rc != TG_OK) {
            for (int c = 0; c < nb; c++) slot_clear(ctx, &ctx->slots[slots[c]]);
            return rc;
        }
    }
    return TG_OK;
}

extern "C" int32_t tg_block_out(tg_ctx *ctx, int32_t slot, uint64_t *rowptr_out, uint32_t *cols_out, char *err,
                                uint64_t errlen) {
    if (ctx == nullptr || slot < 0 || slot >= TG_MAX_SLOTS) {
        tg_set_err(err, errlen, "tg_block_out: bad context or slot %d", slot);
        return TG_ERR_INVALID;
    }
    cudaError_t e;
    if ((e = cudaSetDevice(ctx->device)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_block_out: cudaSetDevice");
    int32_t rc = tg_slot_complete(ctx, slot, err, errlen);
    if (rc != TG_OK) return rc;
    const tg_slot &s = ctx->slots[slot];
    if (!s.loaded) {
        tg_set_err(err, errlen, "tg_block_out: slot %d holds no block", slot);
        return TG_ERR_INVALID;
    }
    if (rowptr_out &&
        (e = cudaMemcpyAsync(rowptr_out, s.rowptr, (size_t)(s.blk.nrows + 1) * 8, cudaMemcpyDeviceToHost,
                             ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_block_out: copy offsets");
    if (cols_out && s.blk.nnz > 0 &&
        (e = cudaMemcpyAsync(cols_out, s.cols, (size_t)s.blk.nnz * 4, cudaMemcpyDeviceToHost, ctx->stream)) !=
            cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_block_out: copy columns");
    if ((e = cudaStreamSynchronize(ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_block_out: synchronize");
    return TG_OK;
}
