// tg_ranges_*: counting a forward graph whose columns stay in host memory
// (trigrid.h). A range's rows are copied into the work area and checked;
// the dense rows get bitmaps (tg_ranges_bm_words); a count kernel then
// reads each entry's columns from host memory over the bus (mapped,
// registered memory) into shared memory, a tile at a time or, for the
// ranges near the vertices' end (ranges_dense), as a bitmap of the whole
// tail, and intersects them with the range's rows they name.
#include <algorithm>
#include <cstdio>

#include "tg_core.cuh"

namespace {

constexpr int kWarps = 8;     // warps of a block of the count kernel
constexpr int kTile = 1024;   // columns of an entry a warp holds at once
constexpr unsigned kAll = 0xffffffffu;

// Rebases the range's offsets to its first and flags offsets outside
// [base, end] (words[0]); tg_check_block then checks their order. The
// bitmaps' offsets likewise, to bmbase, within [bmbase, bmbase + nwords].
__global__ void ranges_rebase(uint64_t *off, uint64_t *bmoff, uint64_t nrows, uint64_t base, uint64_t end,
                              uint64_t bmbase, uint64_t nwords, unsigned long long *words) {
    bool bad = false;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= nrows;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t o = off[i], b = bmoff[i];
        bad |= o < base || o > end || b < bmbase || b - bmbase > nwords;
        off[i] = o - base;
        bmoff[i] = b - bmbase;
    }
    if (__any_sync(kAll, bad) && (threadIdx.x & 31) == 0) atomicOr(&words[0], 1ull);
}

// Flags (words[0]) a row whose bitmap words are not the rule's. Offsets
// outside the columns (flagged by the rebase) read nothing.
__global__ void ranges_check_bitmaps(const uint64_t *__restrict__ off, const uint32_t *__restrict__ rcols,
                                     const uint64_t *__restrict__ bmoff, uint64_t nrows, uint64_t ncols,
                                     uint32_t ratio, unsigned long long *words) {
    bool bad = false;
    for (uint64_t v = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; v < nrows;
         v += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t o0 = off[v], o1 = off[v + 1], b0 = bmoff[v], b1 = bmoff[v + 1];
        uint64_t want = 0;
        if (o0 < o1 && o1 <= ncols) want = tg_ranges_bm_words(o1 - o0, rcols[o0], rcols[o1 - 1], ratio);
        bad |= b1 < b0 || b1 - b0 != want;
    }
    if (__any_sync(kAll, bad) && (threadIdx.x & 31) == 0) atomicOr(&words[0], 1ull);
}

// Sets the bits of the checked rows' bitmaps (zeroed before): lane l of a
// warp tests row 32 w + l, then the warp fills each of them that has one.
__global__ void ranges_fill_bitmaps(const uint64_t *__restrict__ off, const uint32_t *__restrict__ rcols,
                                    const uint64_t *__restrict__ bmoff, uint64_t nrows, uint32_t *bm) {
    const int lane = threadIdx.x & 31;
    const uint64_t v = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x);
    const bool mine = v < nrows && bmoff[v + 1] > bmoff[v];
    unsigned todo = __ballot_sync(kAll, mine);
    while (todo) {
        const int src = __ffs(todo) - 1;
        todo &= todo - 1;
        const uint64_t r = __shfl_sync(kAll, v, src);
        const uint64_t r0 = off[r], r1 = off[r + 1];
        const uint32_t lo = rcols[r0];
        uint32_t *row = bm + bmoff[r];
        for (uint64_t i = r0 + lane; i < r1; i += 32) {
            const uint32_t d = rcols[i] - lo;
            atomicOr(row + (d >> 5), 1u << (d & 31));
        }
    }
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

// Whether an entry names at least one column in the range, no more than
// its row holds, and only columns of the graph's nnz.
__device__ __forceinline__ bool entry_ok(const tg_range_row &r, uint64_t nnz) {
    return r.seg > 0 && r.seg <= r.len && r.start <= nnz && r.len <= nnz - r.start;
}

// Adds a warp's triangles to words[3] and flags (words[0] |= 2) the
// entries or columns it found breaking the contract.
__device__ __forceinline__ void report(unsigned long long found, unsigned long long bad, unsigned long long *words) {
    for (int o = 16; o > 0; o >>= 1) {
        found += __shfl_down_sync(kAll, found, o);
        bad += __shfl_down_sync(kAll, bad, o);
    }
    if ((threadIdx.x & 31) == 0 && found) atomicAdd(&words[3], found);
    if ((threadIdx.x & 31) == 0 && bad) atomicOr(&words[0], 2ull);
}

#ifdef TG_RANGES_PROFILE
// Adds a warp's profile counters to words[8, 16) (tg_ranges_count prints them).
__device__ __forceinline__ void report_profile(const unsigned long long *prof, unsigned long long *words) {
    for (int i = 0; i < 8; i++) {
        unsigned long long x = prof[i];
        for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(kAll, x, o);
        if ((threadIdx.x & 31) == 0 && x) atomicAdd(&words[8 + i], x);
    }
}
#endif

// How a column v of an entry is intersected with the tile.
enum : uint32_t {
    kWalkV = 0,    // v's row walked, each column searched in the tile
    kSearchV = 1,  // the tile after v walked, each column searched in v's row
    kBitmapV = 2,  // the tile after v within v's values walked, each looked up in v's bitmap
    kNone = 3,     // no item
};

constexpr int kItems = 4; // items a lane of the count kernel has in flight

// One warp per entry: its columns, a tile of kTile at a time in shared
// memory; the entry's first seg columns v (in the range) in batches of
// 32. For each v the cheapest way is taken: walk v's row and search the
// tile; or walk the tile's columns after v and look each up in v's bitmap
// (those within v's values only) or, without one, search v's row (device
// memory) when it is the longer. The items of the 32 v's are spread over
// the lanes. words[3] counts the triangles; words[0] |= 2 for an entry or
// a column that breaks the contract.
__global__ void __launch_bounds__(kWarps * 32) ranges_count(const tg_range_row *__restrict__ ent, uint64_t nent,
                                                           const uint32_t *__restrict__ hcols, uint64_t nnz,
                                                           const uint64_t *__restrict__ off,
                                                           const uint32_t *__restrict__ rcols,
                                                           const uint64_t *__restrict__ bmoff,
                                                           const uint32_t *__restrict__ bm, uint64_t first,
                                                           uint64_t nrows, unsigned long long *words) {
    __shared__ uint32_t tiles[kWarps][kTile];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    uint32_t *s = tiles[wib];
    unsigned long long found = 0, bad = 0;
#ifdef TG_RANGES_PROFILE
    unsigned long long prof[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#endif
    for (uint64_t e = (uint64_t)blockIdx.x * kWarps + wib; e < nent; e += (uint64_t)gridDim.x * kWarps) {
        const tg_range_row r = ent[e];
        if (!entry_ok(r, nnz)) {
            bad += lane == 0;
            continue;
        }
        const uint32_t *suf = hcols + r.start;
        for (uint32_t t0 = 0; t0 < r.len; t0 += kTile) {
            const uint32_t tl = min((uint32_t)kTile, r.len - t0);
            __syncwarp();
            for (uint32_t i = lane; i < tl; i += 32) s[i] = suf[t0 + i];
            __syncwarp();
            const uint32_t lo = s[0], hi = s[tl - 1], lg = 32 - __clz(tl);
#ifdef TG_RANGES_PROFILE
            if (lane == 0) {
                prof[6] += 1;
                prof[7] += tl;
            }
#endif
            for (uint32_t j0 = 0; j0 < r.seg && j0 < t0 + tl; j0 += 32) {
                const uint32_t j = j0 + lane;
                // base: v's row (kWalkV, kSearchV) or bitmap (kBitmapV);
                // dv: v's length, or its first value (kBitmapV); p0: the
                // tile's first column walked; d: the items.
                uint64_t base = 0;
                uint32_t d = 0, dv = 0, p0 = 0, mode = kWalkV;
                if (j < r.seg) {
                    const uint32_t v = j >= t0 && j - t0 < tl ? s[j - t0] : suf[j];
                    if ((uint64_t)v < first || (uint64_t)v - first >= nrows) {
                        bad += j >= t0 && j - t0 < tl; // in the tile that holds it
                    } else if (v < hi) { // cols(v) > v: none in the tile otherwise
                        const uint64_t x = v - first;
                        base = off[x];
                        dv = (uint32_t)(off[x + 1] - base);
                        p0 = max(j + 1, t0) - t0; // the tile's columns after v
                        const uint32_t rest = p0 < tl ? tl - p0 : 0;
                        if (rest == 0 || dv == 0) {
                            d = 0;
                        } else if (bmoff[x + 1] > bmoff[x]) {
                            const uint32_t vlo = __ldg(rcols + base), vhi = __ldg(rcols + base + dv - 1);
                            const uint32_t q0 = max(p0, lower(s, tl, vlo)), q1 = lower(s, tl, vhi + 1);
                            const uint32_t in = q1 > q0 ? q1 - q0 : 0;
                            if (2ull * in <= (uint64_t)dv * lg) {
                                mode = kBitmapV;
                                base = bmoff[x];
                                dv = vlo;
                                p0 = q0;
                                d = in;
                            } else {
                                d = dv;
                            }
                        } else if (dv <= rest) {
                            d = dv;
                        } else {
                            mode = kSearchV;
                            d = rest;
                        }
                    }
                }
#ifdef TG_RANGES_PROFILE
                if (d > 0) {
                    prof[mode] += 1;
                    prof[3 + mode] += d;
                }
#endif
                uint32_t incl = d; // inclusive scan of the lanes' items
                for (int o = 1; o < 32; o <<= 1) {
                    const uint32_t x = __shfl_up_sync(kAll, incl, o);
                    if (lane >= o) incl += x;
                }
                const uint32_t total = __shfl_sync(kAll, incl, 31), excl = incl - d;
                for (uint32_t k0 = 0; k0 < total; k0 += 32 * kItems) {
                    // Each lane takes kItems items, kItems * 32 apart from
                    // the warp's, and issues their loads together: the
                    // kernel waits on memory, so the loads of one lane's
                    // items are in flight at once.
                    uint32_t key[kItems], len[kItems], at[kItems], how[kItems];
                    const uint32_t *row[kItems];
                    bool hit[kItems];
#pragma unroll
                    for (int q = 0; q < kItems; q++) {
                        const uint32_t k = k0 + q * 32 + lane;
                        int owner = 0; // the last lane whose items start at or before k
                        for (int step = 16; step > 0; step >>= 1) {
                            const uint32_t ex = __shfl_sync(kAll, excl, owner + step);
                            if (ex <= k) owner += step;
                        }
                        const uint64_t ob = __shfl_sync(kAll, base, owner);
                        const uint32_t oe = __shfl_sync(kAll, excl, owner);
                        const uint32_t odv = __shfl_sync(kAll, dv, owner);
                        const uint32_t op0 = __shfl_sync(kAll, p0, owner);
                        const uint32_t om = __shfl_sync(kAll, mode, owner);
                        const uint32_t i = k - oe;
                        how[q] = k < total ? om : kNone;
                        hit[q] = false;
                        at[q] = 0;
                        len[q] = 0;
                        if (how[q] == kBitmapV) {
                            const uint32_t x = s[op0 + i] - odv;
                            key[q] = x & 31;
                            row[q] = bm + ob + (x >> 5);
                        } else if (how[q] == kWalkV) {
                            row[q] = rcols + ob + i;
                        } else { // kSearchV, or nothing (an empty search)
                            key[q] = how[q] == kSearchV ? s[op0 + i] : 0;
                            row[q] = rcols + ob;
                            len[q] = how[q] == kSearchV ? odv : 0;
                        }
                    }
                    // The bitmaps' words and the walked columns: one load each.
#pragma unroll
                    for (int q = 0; q < kItems; q++) {
                        if (how[q] == kBitmapV || how[q] == kWalkV) at[q] = __ldg(row[q]);
                    }
#pragma unroll
                    for (int q = 0; q < kItems; q++) {
                        if (how[q] == kBitmapV) {
                            found += (at[q] >> key[q]) & 1u;
                        } else if (how[q] == kWalkV && at[q] >= lo && at[q] <= hi) {
                            const uint32_t w = at[q], p = lower(s, tl, w);
                            found += p < tl && s[p] == w;
                        }
                    }
                    // The searches in v's rows, a step of each at a time. A
                    // key in the row is read by some probe: a search ends
                    // at a position one of its probes read, or at the end.
                    bool more = true;
                    while (more) {
                        more = false;
#pragma unroll
                        for (int q = 0; q < kItems; q++) {
                            if (len[q] > 0) {
                                const uint32_t h = len[q] >> 1, x = __ldg(row[q] + at[q] + h);
                                hit[q] |= x == key[q];
                                if (x < key[q]) {
                                    at[q] += h + 1;
                                    len[q] -= h + 1;
                                } else {
                                    len[q] = h;
                                }
                                more |= len[q] > 0;
                            }
                        }
                    }
#pragma unroll
                    for (int q = 0; q < kItems; q++) found += hit[q];
                }
            }
        }
    }
    report(found, bad, words);
#ifdef TG_RANGES_PROFILE
    report_profile(prof, words);
#endif
}

constexpr int kDenseWarps = 4;    // warps of a block of the dense count kernel
constexpr uint32_t kDenseTile = 1024; // columns of a tail the dense kernel also keeps in order

// How the dense count kernel intersects a column v of an entry with its tail.
enum : uint32_t {
    kDenseNone = 0,
    kDenseAnd = 1,    // v's bitmap ANDed with the tail's, word by word
    kDenseWalk = 2,   // v's row walked, each column looked up in the tail's bitmap
    kDenseLookup = 3, // the tail's columns after v within v's values looked up in v's bitmap
    kDenseSearch = 4, // the tail's columns after v searched in v's row
};

// The shared memory of a block of the dense count kernel for W words.
inline size_t dense_smem(uint32_t W) { return (size_t)kDenseWarps * ((W + 1) + kDenseTile) * 4; }

// Counts a range whose rows start within 32 * W values of the last vertex
// (W = ranges_dense): every column of an entry's tail lies in [first,
// first + 32 W), so a warp holds the whole tail as a bitmap of W words in
// shared memory (W + 1 words a warp, the last one zero) and, when it has
// at most kDenseTile columns, in order beside it. For each column v of the
// entry in the range it takes the way that reads the fewest words: v's
// bitmap ANDed with the tail's; v's row walked and looked up in the tail's
// bitmap; or (tail in order) the tail's columns after v looked up in v's
// bitmap, or searched in v's row when it has none. A warp an entry;
// words[3] counts the triangles, words[0] |= 2 for an entry, a column of
// an entry or a tail column that breaks the contract.
__global__ void __launch_bounds__(kDenseWarps * 32) ranges_count_dense(
    const tg_range_row *__restrict__ ent, uint64_t nent, const uint32_t *__restrict__ hcols, uint64_t nnz,
    const uint64_t *__restrict__ off, const uint32_t *__restrict__ rcols, const uint64_t *__restrict__ bmoff,
    const uint32_t *__restrict__ bm, uint64_t first, uint64_t nrows, uint32_t W, unsigned long long *words) {
    extern __shared__ uint32_t dense_smem_words[];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    uint32_t *B = dense_smem_words + (size_t)wib * ((W + 1) + kDenseTile);
    uint32_t *T = B + (W + 1);
    const uint64_t span = 32ull * W;
    for (uint32_t i = lane; i <= W; i += 32) B[i] = 0;
    __syncwarp();
    unsigned long long found = 0, bad = 0;
#ifdef TG_RANGES_PROFILE
    unsigned long long prof[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#endif
    for (uint64_t e = (uint64_t)blockIdx.x * kDenseWarps + wib; e < nent; e += (uint64_t)gridDim.x * kDenseWarps) {
        const tg_range_row r = ent[e];
        if (!entry_ok(r, nnz)) {
            bad += lane == 0;
            continue;
        }
        const uint32_t *tail = hcols + r.start;
        const bool inOrder = r.len <= kDenseTile;
        // The tail's bits (and columns, when in order); lane l keeps
        // column l (the first 32 v's).
        uint32_t mine = 0, lastw = 0;
        bool oob = false;
        for (uint32_t i0 = 0; i0 < r.len; i0 += 128) {
            uint32_t x[4];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const uint32_t i = i0 + q * 32 + lane;
                x[q] = i < r.len ? tail[i] : 0;
            }
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const uint32_t i = i0 + q * 32 + lane;
                if (i >= r.len) continue;
                if (i0 == 0 && q == 0) mine = x[q];
                if (inOrder) T[i] = x[q];
                const uint64_t y = (uint64_t)x[q] - first;
                if ((uint64_t)x[q] < first || y >= span) {
                    oob = true;
                    continue;
                }
                atomicOr(B + (y >> 5), 1u << (y & 31));
                lastw = max(lastw, (uint32_t)(y >> 5));
            }
        }
        bad += oob;
        const uint32_t firstw = (uint32_t)(((uint64_t)__shfl_sync(kAll, mine, 0) - first) >> 5);
        lastw = __reduce_max_sync(kAll, lastw);
        __syncwarp();
        for (uint32_t j0 = 0; j0 < r.seg; j0 += 32) {
            const uint32_t j = j0 + lane;
            // This lane's v: the way, where it reads (base: v's row or
            // bitmap), how many items, and a = the tail's bit of v's first
            // value (kDenseAnd), v's first value (kDenseLookup), v's length
            // (kDenseSearch), or the tail's first column after v.
            uint64_t base = 0;
            uint32_t how = kDenseNone, n = 0, a = 0, at = 0;
            if (j < r.seg) {
                const uint32_t v = j0 == 0 ? mine : tail[j];
                if ((uint64_t)v < first || (uint64_t)v - first >= nrows) {
                    bad++;
                } else {
                    const uint64_t x = v - first;
                    const uint64_t o = off[x], b0 = bmoff[x];
                    const uint32_t dv = (uint32_t)(off[x + 1] - o), nw = (uint32_t)(bmoff[x + 1] - b0);
                    if (dv > 0) {
                        how = kDenseWalk;
                        base = o;
                        n = dv;
                        const uint32_t vlo = __ldg(rcols + o);
                        if (nw > 0 && nw < n) {
                            how = kDenseAnd;
                            base = b0;
                            n = nw;
                            a = vlo - (uint32_t)first;
                        }
                        if (inOrder) {
                            const uint32_t rest = r.len - j - 1;
                            if (nw > 0) {
                                const uint32_t vhi = __ldg(rcols + o + dv - 1);
                                const uint32_t q0 = max(j + 1, lower(T, r.len, vlo)), q1 = lower(T, r.len, vhi + 1);
                                const uint32_t in = q1 > q0 ? q1 - q0 : 0;
                                if (in < n) {
                                    how = kDenseLookup;
                                    base = b0;
                                    n = in;
                                    a = vlo;
                                    at = q0;
                                }
                            } else if ((uint64_t)rest * (32 - __clz(dv)) < n) {
                                how = kDenseSearch;
                                base = o;
                                n = rest;
                                a = dv;
                                at = j + 1;
                            }
                        }
                    }
                }
            }
            unsigned todo = __ballot_sync(kAll, n > 0);
            while (todo) {
                const int t = __ffs(todo) - 1;
                todo &= todo - 1;
                const uint32_t th = __shfl_sync(kAll, how, t), tn = __shfl_sync(kAll, n, t);
                const uint32_t ta = __shfl_sync(kAll, a, t), tat = __shfl_sync(kAll, at, t);
                const uint64_t tb = __shfl_sync(kAll, base, t);
#ifdef TG_RANGES_PROFILE
                prof[th - 1] += lane == 0;
                prof[th + 3] += lane == 0 ? tn : 0;
#endif
                if (th == kDenseAnd) {
                    const uint32_t sh = ta & 31;
                    for (uint32_t w = lane; w < tn; w += 32) {
                        const uint32_t at2 = (ta >> 5) + w; // at most W - 1: v's values lie below first + 32 W
                        found += __popc(__ldg(bm + tb + w) & __funnelshift_r(B[at2], B[at2 + 1], sh));
                    }
                } else if (th == kDenseWalk) {
                    for (uint32_t i = lane; i < tn; i += 32) {
                        const uint64_t y = (uint64_t)__ldg(rcols + tb + i) - first; // > v - first
                        if (y < span) found += (B[y >> 5] >> (y & 31)) & 1u;
                    }
                } else if (th == kDenseLookup) {
                    for (uint32_t i = lane; i < tn; i += 32) {
                        const uint32_t x = T[tat + i] - ta;
                        found += (__ldg(bm + tb + (x >> 5)) >> (x & 31)) & 1u;
                    }
                } else {
                    for (uint32_t i = lane; i < tn; i += 32) {
                        const uint32_t key = T[tat + i];
                        const uint32_t p = lower_global(rcols + tb, ta, key);
                        found += p < ta && __ldg(rcols + tb + p) == key;
                    }
                }
            }
        }
        __syncwarp();
        for (uint32_t w = firstw + lane; w <= lastw && w < W; w += 32) B[w] = 0;
        __syncwarp();
    }
    report(found, bad, words);
#ifdef TG_RANGES_PROFILE
    report_profile(prof, words);
#endif
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
                                   uint64_t bytes, uint32_t bm_ratio, char *err, uint64_t errlen) {
    const char *fn = "tg_ranges_begin";
    if (ctx == nullptr || (cols == nullptr && nnz > 0)) {
        tg_set_err(err, errlen, "%s: NULL context or columns", fn);
        return TG_ERR_INVALID;
    }
    if (nvertices >= 0xffffffffull || bytes < tg_ranges_bytes(1, 0, 0) || bm_ratio > TG_RANGES_BM_MAX_RATIO) {
        tg_set_err(err, errlen, "%s: %llu vertices (< 2^32-1), %llu bytes (at least %llu), bitmap ratio %u (at most %u)",
                   fn, (unsigned long long)nvertices, (unsigned long long)bytes,
                   (unsigned long long)tg_ranges_bytes(1, 0, 0), bm_ratio, (unsigned)TG_RANGES_BM_MAX_RATIO);
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
    ctx->ranges.ratio = bm_ratio;
    ctx->ranges.host = cols;
    ctx->ranges.hcols = (const uint32_t *)h;
    return TG_OK;
}

extern "C" int32_t tg_ranges_count(tg_ctx *ctx, const uint64_t *rowptr, const uint64_t *bmoff, uint64_t first,
                                   uint64_t nrows, const tg_range_row *entries, uint64_t nentries,
                                   uint64_t *triangles, double *kernel_ms, char *err, uint64_t errlen) {
    const char *fn = "tg_ranges_count";
    char where[160];
    int32_t rc = need_ranges(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    auto &rg = ctx->ranges;
    if (rowptr == nullptr || bmoff == nullptr || triangles == nullptr || (entries == nullptr && nentries > 0)) {
        tg_set_err(err, errlen, "%s: NULL offsets, bitmap offsets, entries or result", fn);
        return TG_ERR_INVALID;
    }
    *triangles = 0;
    if (kernel_ms) *kernel_ms = 0;
    const uint64_t base = rowptr[0], end = rowptr[nrows], bmbase = bmoff[0], bmend = bmoff[nrows];
    if (first > rg.nvert || nrows > rg.nvert - first || base > end || end > rg.nnz || bmbase > bmend ||
        bmend - bmbase > rg.bytes || tg_ranges_bytes(nrows, end - base, bmend - bmbase) > rg.bytes) {
        tg_set_err(err, errlen,
                   "%s: rows [%llu, +%llu) with columns [%llu, %llu) and bitmap words [%llu, %llu) do not fit a "
                   "graph of %llu rows and %llu columns or a work area of %llu bytes",
                   fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)base,
                   (unsigned long long)end, (unsigned long long)bmbase, (unsigned long long)bmend,
                   (unsigned long long)rg.nvert, (unsigned long long)rg.nnz, (unsigned long long)rg.bytes);
        return TG_ERR_INVALID;
    }
    const uint64_t nwords = bmend - bmbase;
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
    // The work area (tg_ranges_bytes): the check words (words[0]: 1
    // malformed rows, 2 a bad entry; words[3] the triangles), the offsets,
    // the bitmaps' offsets, the columns, the bitmaps.
    const uint64_t offBytes = tg_ranges_granules((nrows + 1) * 8);
    unsigned long long *words = (unsigned long long *)rg.arena;
    uint64_t *off = (uint64_t *)((char *)rg.arena + 256);
    uint64_t *dbmoff = (uint64_t *)((char *)off + offBytes);
    uint32_t *rcols = (uint32_t *)((char *)dbmoff + offBytes);
    uint32_t *bm = (uint32_t *)((char *)rcols + tg_ranges_granules((end - base) * 4));
    cudaStream_t st = ctx->stream;
    TG_STEP(cudaEventRecord(ctx->ev_start, st), "timing");
    TG_STEP(cudaMemsetAsync(words, 0, 4 * sizeof(unsigned long long), st), "reset");
    TG_STEP(cudaMemcpyAsync(off, rowptr, (nrows + 1) * 8, cudaMemcpyHostToDevice, st), "copy offsets");
    TG_STEP(cudaMemcpyAsync(dbmoff, bmoff, (nrows + 1) * 8, cudaMemcpyHostToDevice, st), "copy bitmap offsets");
    if (end > base)
        TG_STEP(cudaMemcpyAsync(rcols, rg.host + base, (end - base) * 4, cudaMemcpyHostToDevice, st), "copy columns");
    if (nwords > 0) TG_STEP(cudaMemsetAsync(bm, 0, nwords * 4, st), "clear bitmaps");
    const unsigned grid = (unsigned)std::max<uint64_t>(
        1, std::min<uint64_t>((nrows + 256) / 256, (uint64_t)ctx->env.sm_count * 16));
    ranges_rebase<<<grid, 256, 0, st>>>(off, dbmoff, nrows, base, end, bmbase, nwords, words);
    TG_STEP(cudaGetLastError(), "rebase kernel");
    if (nrows > 0) {
        const uint64_t warps = std::min<uint64_t>(nrows, (uint64_t)ctx->env.sm_count * 64);
        tg_check_block<<<(unsigned)((warps + 7) / 8), 256, 0, st>>>(off, rcols, (int64_t)nrows,
                                                                    (int64_t)rg.nvert, end - base, words);
        TG_STEP(cudaGetLastError(), "check kernel");
        ranges_check_bitmaps<<<grid, 256, 0, st>>>(off, rcols, dbmoff, nrows, end - base, rg.ratio, words);
        TG_STEP(cudaGetLastError(), "bitmap check kernel");
    }
    TG_STEP(cudaMemcpyAsync(ctx->h_count, words, sizeof(unsigned long long), cudaMemcpyDeviceToHost, st),
               "read check");
    TG_STEP(cudaStreamSynchronize(st), "check");
    if (ctx->h_count[0] != 0) {
        tg_set_err(err, errlen,
                   "%s: malformed rows [%llu, +%llu) (offsets decreasing or outside [%llu, %llu], a column >= %llu, "
                   "a row not strictly increasing, or bitmap offsets other than tg_ranges_bm_words's)",
                   fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)base,
                   (unsigned long long)end, (unsigned long long)rg.nvert);
        return TG_ERR_INVALID;
    }
    if (nwords > 0) {
        ranges_fill_bitmaps<<<(unsigned)((nrows + 255) / 256), 256, 0, st>>>(off, rcols, dbmoff, nrows, bm);
        TG_STEP(cudaGetLastError(), "bitmap kernel");
    }
#ifdef TG_RANGES_PROFILE
    cudaEvent_t pk0, pk1;
    cudaEventCreate(&pk0);
    cudaEventCreate(&pk1);
    cudaMemsetAsync(words + 8, 0, 8 * sizeof(unsigned long long), st);
    cudaEventRecord(pk0, st);
#endif
    const uint32_t W = (uint32_t)ctx->set.ranges_dense;
    const bool dense = W > 0 && rg.nvert - first <= 32ull * W;
    if (nentries > 0 && dense) {
        // Every tail lies in [first, nvert): the dense kernel.
        const size_t smem = dense_smem(W);
        if (smem > 48 * 1024)
            TG_STEP(cudaFuncSetAttribute(ranges_count_dense, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                    "dense kernel's shared memory");
        const uint64_t blocks = std::min<uint64_t>((nentries + kDenseWarps - 1) / kDenseWarps, 1ull << 30);
        ranges_count_dense<<<(unsigned)blocks, kDenseWarps * 32, smem, st>>>(
            (const tg_range_row *)dent, nentries, rg.hcols, rg.nnz, off, rcols, dbmoff, bm, first, nrows, W, words);
        TG_STEP(cudaGetLastError(), "dense count kernel");
    } else if (nentries > 0) {
        // A warp an entry: the hardware hands the blocks out as SMs free
        // up, so entries of uneven work leave no partial wave behind.
        const uint64_t blocks = std::min<uint64_t>((nentries + kWarps - 1) / kWarps, 1ull << 30);
        ranges_count<<<(unsigned)blocks, kWarps * 32, 0, st>>>((const tg_range_row *)dent, nentries, rg.hcols,
                                                              rg.nnz, off, rcols, dbmoff, bm, first, nrows, words);
        TG_STEP(cudaGetLastError(), "count kernel");
    }
    TG_STEP(cudaEventRecord(ctx->ev_stop, st), "timing");
#ifdef TG_RANGES_PROFILE
    {
        unsigned long long pw[8];
        cudaEventRecord(pk1, st);
        cudaMemcpyAsync(pw, words + 8, sizeof pw, cudaMemcpyDeviceToHost, st);
        cudaStreamSynchronize(st);
        float all = 0, kern = 0;
        cudaEventElapsedTime(&all, ctx->ev_start, ctx->ev_stop);
        cudaEventElapsedTime(&kern, pk0, pk1);
        // The tile kernel's p0-p2: the pairs walked in v's row, searched
        // in v's row, looked up in v's bitmap; p3-p5 their items; p6, p7
        // the tiles and their columns. The dense kernel's p0-p3: the pairs
        // ANDed, walked, looked up, searched; p4-p7 their items.
        fprintf(stderr,
                "ranges-profile dense=%d rows=%llu cols=%llu bmwords=%llu entries=%llu all_ms=%.3f count_ms=%.3f "
                "p0=%llu p1=%llu p2=%llu p3=%llu p4=%llu p5=%llu p6=%llu p7=%llu\n",
                (int)dense, (unsigned long long)nrows,
                (unsigned long long)(end - base), (unsigned long long)nwords,
                (unsigned long long)nentries, all, kern, pw[0], pw[1], pw[2], pw[3], pw[4], pw[5], pw[6], pw[7]);
        cudaEventDestroy(pk0);
        cudaEventDestroy(pk1);
    }
#endif
    TG_STEP(cudaMemcpyAsync(ctx->h_count, words, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, st),
               "read count");
    TG_STEP(cudaStreamSynchronize(st), "count");
    if (ctx->h_count[0] != 0) {
        tg_set_err(err, errlen,
                   "%s: rows [%llu, +%llu): an entry past the %llu columns, with no column in the range or more "
                   "than its row, or a column of an entry outside the range or of its row's tail below it",
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
