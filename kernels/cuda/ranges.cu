// tg_ranges_*: counting a forward graph whose columns stay in host memory
// (trigrid.h). A range's rows are copied into the work area and checked;
// the dense rows get bitmaps (tg_ranges_bm_words); the count kernel then
// reads each entry's columns from host memory over the bus (mapped,
// registered memory), those in the last 32 x ranges_dense values as a
// bitmap in shared memory and the rest a tile at a time, and intersects
// them with the range's rows they name.
#include <algorithm>
#include <cstdio>

#include "tg_core.cuh"
#include "tg_profile.h"

namespace {

constexpr int kWarps = 8;     // warps of a block of the count kernel
constexpr int kTile = 1024;   // columns of an entry a warp holds at once
constexpr unsigned kAll = 0xffffffffu;

// Flags (words[0]) malformed rows: offsets (off, and the bitmaps' bmoff)
// not from 0, decreasing or past the range's ncols columns, a column at
// or above nvert, a row not strictly increasing, or bitmap words other
// than tg_ranges_bm_words's. A warp a row, so that a hub's row does not
// serialize on one thread; no column past ncols is read.
__global__ void ranges_check_rows(const uint32_t *__restrict__ off, const uint32_t *__restrict__ bmoff,
                                  const uint32_t *__restrict__ rcols, uint64_t nrows, uint32_t ncols, uint64_t nvert,
                                  uint32_t ratio, unsigned long long *words) {
    const int lane = threadIdx.x & 31;
    const uint64_t warp = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    bool bad = warp == 0 && (off[0] != 0 || bmoff[0] != 0);
    for (uint64_t r = warp; r < nrows; r += nwarps) {
        const uint32_t b = off[r], e = off[r + 1];
        if (e < b || e > ncols) {
            bad = true;
            continue;
        }
        for (uint32_t k = b + lane; k < e; k += 32) {
            const uint32_t c = rcols[k];
            bad |= c >= nvert || (k + 1 < e && rcols[k + 1] <= c);
        }
        const uint32_t b0 = bmoff[r], b1 = bmoff[r + 1];
        const uint64_t want = e > b ? tg_ranges_bm_words(e - b, rcols[b], rcols[e - 1], ratio) : 0;
        bad |= b1 < b0 || b1 - b0 != want;
    }
    if (__any_sync(kAll, bad) && lane == 0) atomicOr(&words[0], 1ull);
}

// Sets the bits of the checked rows' bitmaps (zeroed before): lane l of a
// warp tests row 32 w + l, then the warp fills each of them that has one.
__global__ void ranges_fill_bitmaps(const uint32_t *__restrict__ off, const uint32_t *__restrict__ rcols,
                                    const uint32_t *__restrict__ bmoff, uint64_t nrows, uint32_t *bm) {
    const int lane = threadIdx.x & 31;
    const uint64_t v = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x);
    const bool mine = v < nrows && bmoff[v + 1] > bmoff[v];
    unsigned todo = __ballot_sync(kAll, mine);
    while (todo) {
        const int src = __ffs(todo) - 1;
        todo &= todo - 1;
        const uint64_t r = __shfl_sync(kAll, v, src);
        const uint32_t r0 = off[r], r1 = off[r + 1];
        const uint32_t lo = rcols[r0];
        uint32_t *row = bm + bmoff[r];
        for (uint32_t i = r0 + lane; i < r1; i += 32) {
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

#ifdef TG_PROFILE
// The measuring build (tg_profile.h): the count kernel adds the items of
// each way (prof[0, 8)) to words[8, 16) of the range's check words, and
// range_profile times the range's kernels and prints a line a range.
__device__ __forceinline__ void report_profile(const unsigned long long *prof, unsigned long long *words) {
    for (int i = 0; i < 8; i++) {
        unsigned long long x = prof[i];
        for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(kAll, x, o);
        if ((threadIdx.x & 31) == 0 && x) atomicAdd(&words[8 + i], x);
    }
}

// Built before the range's window and count kernels are enqueued on st;
// report runs after them, once ev_stop is recorded.
struct range_profile {
    cudaEvent_t k0 = nullptr, k1 = nullptr;
    range_profile(cudaStream_t st, unsigned long long *words) {
        cudaEventCreate(&k0);
        cudaEventCreate(&k1);
        cudaMemsetAsync(words + 8, 0, 8 * sizeof(unsigned long long), st);
        cudaEventRecord(k0, st);
    }
    ~range_profile() {
        cudaEventDestroy(k0);
        cudaEventDestroy(k1);
    }
    void report(const tg_ctx *ctx, cudaStream_t st, const unsigned long long *words, uint64_t hb, uint64_t nrows,
                uint64_t ncols, uint64_t nwords, uint64_t nentries) {
        unsigned long long pw[8];
        cudaEventRecord(k1, st);
        cudaMemcpyAsync(pw, words + 8, sizeof pw, cudaMemcpyDeviceToHost, st);
        cudaStreamSynchronize(st);
        float all = 0, kern = 0;
        cudaEventElapsedTime(&all, ctx->ev_start, ctx->ev_stop);
        cudaEventElapsedTime(&kern, k0, k1);
        fprintf(stderr,
                "ranges-profile hb=%llu rows=%llu cols=%llu bmwords=%llu entries=%llu all_ms=%.3f count_ms=%.3f "
                "p0=%llu p1=%llu p2=%llu p3=%llu p4=%llu p5=%llu p6=%llu p7=%llu\n",
                (unsigned long long)hb, (unsigned long long)nrows, (unsigned long long)ncols,
                (unsigned long long)nwords, (unsigned long long)nentries, all, kern, pw[0], pw[1], pw[2], pw[3], pw[4],
                pw[5], pw[6], pw[7]);
    }
};
#endif

// Each row's first column at or above hb (the window's base): hs[x] is its
// index within row x, the row's length when it has none.
__global__ void ranges_hi_start(const uint32_t *__restrict__ off, const uint32_t *__restrict__ rcols, uint64_t nrows,
                                uint32_t hb, uint32_t *hs) {
    for (uint64_t x = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; x < nrows;
         x += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t o = off[x];
        hs[x] = lower_global(rcols + o, off[x + 1] - o, hb);
    }
}

// The window of a tail: a warp keeps the tail's columns in [hb, hb + 32 W)
// as a bitmap of W words (W + 1 in shared memory, the last one zero).
// hb is the first row of a range within 32 W values of the vertices' end
// (the whole tail then lies in the window), else nvert - 32 W; with W = 0
// it is nvert (no window).
inline uint64_t window_base(uint64_t nvert, uint64_t first, uint32_t W) {
    const uint64_t span = 32ull * W;
    if (W == 0) return nvert;
    return nvert - first <= span ? first : nvert - span;
}

// How the items of a column v of an entry are found. The tile's columns
// below hb (lo) meet v's columns below hb, those at or above it (hi) meet
// v's columns at or above it.
enum : uint32_t {
    kWalkV = 0,   // v's lo columns walked, each searched in the tile
    kSearchV = 1, // the tile's columns after v searched in v's lo or hi columns
    kBitmapV = 2, // the tile's columns after v within v's values looked up in v's bitmap
    kWalkHi = 3,  // v's hi columns walked, each looked up in the window
    kAndHi = 4,   // v's bitmap words at or above hb ANDed with the window
    kNone = 5,    // no item
};

constexpr int kItems = 2;   // items a lane of the count kernel has in flight
constexpr uint32_t kVW = 4; // columns or words an item of every way but the searches

// The items of n columns or words walked, ANDed or looked up.
__device__ __forceinline__ uint32_t items(uint32_t n) { return (n + kVW - 1) / kVW; }

// The shared memory of a warp of the count kernel for W window words.
inline size_t count_smem_warp(uint32_t W) { return ((size_t)W + 1 + kTile) * 4; }

// A lane's group of items: how, where it reads (base: a row's columns or a
// bitmap's words), aux (kSearchV: the row's length; kBitmapV: v's first
// value; kAndHi: the window bit of the group's first word's first value,
// signed), p0 (the tile position of the first column), n (the columns,
// words or searches) and d (the items: a search each, else kVW of the n).
struct Group {
    uint32_t base, how, aux, p0, n, d;
};

// g with its items counted (d from n).
__device__ __forceinline__ Group with_items(Group g) {
    g.d = g.how == kSearchV ? g.n : items(g.n);
    return g;
}

// Finds the items of the warp's 32 groups, spread over the lanes kItems at
// a time (their loads issued together); s is the tile (tl columns from lo
// to hi), B the window. An item other than a search takes up to kVW
// consecutive columns or words (nv).
__device__ __forceinline__ unsigned long long count_groups(const Group &g, const uint32_t *s, uint32_t tl,
                                                           uint32_t lo, uint32_t hi, const uint32_t *B,
                                                           uint32_t hb, const uint32_t *__restrict__ rcols,
                                                           const uint32_t *__restrict__ bm) {
    const int lane = threadIdx.x & 31;
    unsigned long long found = 0;
    uint32_t incl = g.d; // inclusive scan of the lanes' items
    for (int o = 1; o < 32; o <<= 1) {
        const uint32_t x = __shfl_up_sync(kAll, incl, o);
        if (lane >= o) incl += x;
    }
    const uint32_t total = __shfl_sync(kAll, incl, 31), excl = incl - g.d;
    for (uint32_t k0 = 0; k0 < total; k0 += 32 * kItems) {
        uint32_t key[kItems], len[kItems], at[kItems], how[kItems], nv[kItems], w[kItems][kVW];
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
            const uint32_t ob = __shfl_sync(kAll, g.base, owner);
            const uint32_t oe = __shfl_sync(kAll, excl, owner);
            const uint32_t oa = __shfl_sync(kAll, g.aux, owner);
            const uint32_t op0 = __shfl_sync(kAll, g.p0, owner);
            const uint32_t om = __shfl_sync(kAll, g.how, owner);
            const uint32_t on = __shfl_sync(kAll, g.n, owner);
            const uint32_t i = k - oe;
            how[q] = k < total ? om : kNone;
            hit[q] = false;
            at[q] = 0;
            len[q] = 0;
            key[q] = 0;
            nv[q] = 1;
            row[q] = rcols;
            if (how[q] == kBitmapV) {
                at[q] = op0 + kVW * i; // the tile position of the item's first column
                nv[q] = min(kVW, on - kVW * i);
                key[q] = oa;
                row[q] = bm + ob;
            } else if (how[q] == kAndHi) {
                key[q] = oa + 32 * kVW * i; // the window bit of the item's first word's first value (signed)
                row[q] = bm + ob + kVW * i;
                nv[q] = min(kVW, on - kVW * i);
            } else if (how[q] == kWalkHi) {
                row[q] = rcols + ob + kVW * i;
                nv[q] = min(kVW, on - kVW * i);
            } else if (how[q] == kWalkV) {
                row[q] = rcols + ob + kVW * i;
                nv[q] = min(kVW, on - kVW * i);
            } else if (how[q] == kSearchV) {
                key[q] = s[op0 + i];
                row[q] = rcols + ob;
                len[q] = oa;
            }
        }
        // The single loads: bitmap words and walked columns, nv[q] an item.
#pragma unroll
        for (int q = 0; q < kItems; q++) {
#pragma unroll
            for (uint32_t t = 0; t < kVW; t++) {
                w[q][t] = 0;
                if (t < nv[q]) {
                    if (how[q] == kBitmapV) {
                        w[q][t] = __ldg(row[q] + ((s[at[q] + t] - key[q]) >> 5));
                    } else if (how[q] == kWalkHi || how[q] == kAndHi || how[q] == kWalkV) {
                        w[q][t] = __ldg(row[q] + t);
                    }
                }
            }
        }
#pragma unroll
        for (int q = 0; q < kItems; q++) {
            if (how[q] == kBitmapV) {
#pragma unroll
                for (uint32_t t = 0; t < kVW; t++)
                    if (t < nv[q]) found += (w[q][t] >> ((s[at[q] + t] - key[q]) & 31)) & 1u;
            } else if (how[q] == kWalkV) {
#pragma unroll
                for (uint32_t t = 0; t < kVW; t++) {
                    const uint32_t x = w[q][t];
                    if (t < nv[q] && x >= lo && x <= hi) {
                        const uint32_t p = lower(s, tl, x);
                        found += p < tl && s[p] == x;
                    }
                }
            } else if (how[q] == kWalkHi) {
#pragma unroll
                for (uint32_t t = 0; t < kVW; t++) {
                    const uint32_t y = w[q][t] - hb; // below 32 W: v's hi columns lie in the window
                    if (t < nv[q]) found += (B[y >> 5] >> (y & 31)) & 1u;
                }
            } else if (how[q] == kAndHi) {
                const int32_t o = (int32_t)key[q]; // above -32, below 32 W
                const uint32_t win = o >= 0 ? __funnelshift_r(B[o >> 5], B[(o >> 5) + 1], o & 31) : B[0] << -o;
                found += __popc(w[q][0] & win);
                // The item's further words lie at o + 32 t (positive, in the window).
                const int sh = o & 31, w0 = (o + 32) >> 5;
#pragma unroll
                for (uint32_t t = 1; t < kVW; t++)
                    if (t < nv[q]) found += __popc(w[q][t] & __funnelshift_r(B[w0 + t - 1], B[w0 + t], sh));
            }
        }
        // The searches in v's rows, a step of each at a time. A key in the
        // row is read by some probe: a search ends at a position one of
        // its probes read, or at the end.
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
    return found;
}

// The count kernel's blocks an SM at least: 64 registers a thread, so that
// an SM holds 32 of its warps (the shared memory's bound at the default
// window) while they wait on their loads.
constexpr int kMinBlocks = 4;

// One warp per entry. The entry's tail (its columns from the first in the
// range to the row's end) is read from host memory once into the warp's
// window (its columns in [hb, hb + 32 W)) and a tile of kTile at a time
// into shared memory; the entry's first seg columns v (in the range) are
// taken 32 at a time. Each v meets the tail in two parts, each the
// cheapest way (fewest items; count_groups):
//  - lo (the tile's columns below hb, per tile): v's lo columns walked and
//    searched in the tile; the tile's columns after v within v's values
//    looked up in v's bitmap; or, without one, searched in v's lo columns;
//  - hi (once): v's hi columns walked and looked up in the window, or v's
//    bitmap ANDed with it; or (a tail of one tile) the tail's hi columns
//    after v looked up in v's bitmap or searched in v's hi columns.
// hs[x] is row x's first column at or above hb. words[3] counts the
// triangles; words[0] |= 2 for an entry, or a column of an entry, outside
// its contract.
__global__ void __launch_bounds__(kWarps * 32, kMinBlocks) ranges_count(const tg_range_row *__restrict__ ent, uint64_t nent, const uint32_t *__restrict__ hcols,
                             uint64_t nnz, const uint32_t *__restrict__ off, const uint32_t *__restrict__ hs,
                             const uint32_t *__restrict__ rcols, const uint32_t *__restrict__ bmoff,
                             const uint32_t *__restrict__ bm, uint64_t first, uint64_t nrows, uint32_t hb,
                             uint32_t W, unsigned long long *words) {
    extern __shared__ uint32_t count_smem[];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, nw = blockDim.x >> 5;
    uint32_t *s = count_smem + (size_t)wib * (W + 1 + kTile);
    uint32_t *B = s + kTile;
    for (uint32_t i = lane; i <= W; i += 32) B[i] = 0;
    __syncwarp();
    unsigned long long found = 0, bad = 0;
    TG_PROF(unsigned long long prof[8] = {0, 0, 0, 0, 0, 0, 0, 0});
    for (uint64_t e = (uint64_t)blockIdx.x * nw + wib; e < nent; e += (uint64_t)gridDim.x * nw) {
        const tg_range_row r = ent[e];
        if (!entry_ok(r, nnz)) {
            bad += lane == 0;
            continue;
        }
        const uint32_t *suf = hcols + r.start;
        // The first tile, and the window of the whole tail; nlo: the
        // tail's columns below hb (its first ones).
        uint32_t nlo = 0, firstw = W, lastw = 0;
        bool oob = false; // a tail column at or above nvert
        for (uint32_t i0 = 0; i0 < r.len; i0 += 32 * kItems) {
            uint32_t x[kItems];
#pragma unroll
            for (int q = 0; q < kItems; q++) {
                const uint32_t i = i0 + q * 32 + lane;
                x[q] = i < r.len ? suf[i] : 0;
            }
#pragma unroll
            for (int q = 0; q < kItems; q++) {
                const uint32_t i = i0 + q * 32 + lane;
                if (i >= r.len) continue;
                if (i < kTile) s[i] = x[q];
                if (x[q] < hb) {
                    nlo++;
                } else {
                    // Below hb + 32 W: columns lie below nvert (checked
                    // with the rows), and nvert <= hb + 32 W.
                    const uint32_t y = x[q] - hb;
                    if (y >= 32 * W) {
                        oob = true;
                        continue;
                    }
                    atomicOr(B + (y >> 5), 1u << (y & 31));
                    firstw = min(firstw, y >> 5);
                    lastw = max(lastw, y >> 5);
                }
            }
        }
        bad += oob;
        nlo = __reduce_add_sync(kAll, nlo);
        firstw = __reduce_min_sync(kAll, firstw);
        lastw = __reduce_max_sync(kAll, lastw);
        const bool oneTile = r.len <= kTile;
        for (uint32_t t0 = 0; t0 < r.len; t0 += kTile) {
            const uint32_t tl = min((uint32_t)kTile, r.len - t0);
            if (t0 > 0) {
                __syncwarp();
                for (uint32_t i = lane; i < tl; i += 32) s[i] = suf[t0 + i];
            }
            __syncwarp();
            const uint32_t lo = s[0], hi = s[tl - 1], lg = 32 - __clz(tl);
            // The tile's lo columns: [0, loEnd).
            const uint32_t loEnd = nlo > t0 ? min(tl, nlo - t0) : 0;
            TG_PROF(if (lane == 0) prof[7] += 1);
            for (uint32_t j0 = 0; j0 < r.seg && j0 < t0 + tl; j0 += 32) {
                const uint32_t j = j0 + lane;
                Group gl = {0, kWalkV, 0, 0, 0}, gh = {0, kWalkHi, 0, 0, 0};
                if (j < r.seg) {
                    const uint32_t v = j >= t0 && j - t0 < tl ? s[j - t0] : suf[j];
                    const uint32_t p0 = max(j + 1, t0) - t0; // the tile's columns after v
                    const uint32_t after = max(j + 1, nlo);  // the tail's hi columns after v
                    // lo: cols(v) > v, so none in the tile when v >= hi.
                    const bool wantLo = v < hi && p0 < loEnd;
                    const bool wantHi = after < r.len && (oneTile || j0 >= t0);
                    if ((uint64_t)v < first || (uint64_t)v - first >= nrows) {
                        bad += j >= t0 && j - t0 < tl; // in the tile that holds it
                    } else if (wantLo || wantHi) {
                        const uint64_t x = v - first;
                        const uint32_t o = off[x], b0 = bmoff[x], dv = off[x + 1] - o, h = hs[x];
                        const uint32_t nwv = bmoff[x + 1] - b0;
                        uint32_t vlo = 0, vhi = 0;
                        if (dv > 0) {
                            vlo = __ldg(rcols + o);
                            vhi = __ldg(rcols + o + dv - 1);
                        }
                        // lo: the tile's columns [p0, loEnd) against v's [0, h).
                        if (wantLo && h > 0) {
                            const uint32_t rest = loEnd - p0;
                            if (nwv > 0) {
                                const uint32_t q0 = max(p0, lower(s, loEnd, vlo)), q1 = lower(s, loEnd, vhi + 1);
                                const uint32_t in = q1 > q0 ? q1 - q0 : 0;
                                if (2ull * items(in) <= (uint64_t)h * lg) {
                                    gl = {b0, kBitmapV, vlo, q0, in};
                                } else {
                                    gl = {o, kWalkV, 0, 0, h};
                                }
                            } else if (items(h) <= rest) {
                                gl = {o, kWalkV, 0, 0, h};
                            } else {
                                gl = {o, kSearchV, h, p0, rest};
                            }
                        }
                        // hi: the tail's hi columns after v against v's [h, dv).
                        if (wantHi && h < dv) {
                            const uint32_t dh = dv - h;
                            gh = {o + h, kWalkHi, 0, 0, dh};
                            if (nwv > 0) {
                                // v's words from the one holding hb (or its first).
                                const uint32_t k0 = vlo >= hb ? 0 : (hb - vlo) >> 5;
                                if (nwv - k0 < gh.n)
                                    gh = {b0 + k0, kAndHi, vlo + 32 * k0 - hb, 0, nwv - k0}; // in (-32, 32 W)
                            }
                            if (oneTile) {
                                // after = the tile's first hi column after v.
                                if (nwv > 0) {
                                    const uint32_t q0 = max(after, lower(s, tl, vlo)), q1 = lower(s, tl, vhi + 1);
                                    const uint32_t in = q1 > q0 ? q1 - q0 : 0;
                                    if (items(in) < items(gh.n)) gh = {b0, kBitmapV, vlo, q0, in};
                                } else if ((uint64_t)(tl - after) * (32 - __clz(dh)) < items(gh.n)) {
                                    gh = {o + h, kSearchV, dh, after, tl - after};
                                }
                            }
                        }
                    }
                }
                TG_PROF(prof[gl.how] += gl.n);
                TG_PROF(prof[gh.how == kWalkHi ? 3 : gh.how == kAndHi ? 4 : gh.how == kBitmapV ? 5 : 6] += gh.n);
                found += count_groups(with_items(gl), s, tl, lo, hi, B, hb, rcols, bm);
                found += count_groups(with_items(gh), s, tl, lo, hi, B, hb, rcols, bm);
            }
        }
        __syncwarp();
        // Clears the window: the tail's hi columns when the tile holds
        // them all, else the words between the first and last set.
        if (oneTile) {
            for (uint32_t i = nlo + lane; i < r.len; i += 32) {
                const uint32_t y = s[i] - hb;
                if (y < 32 * W) B[y >> 5] = 0;
            }
        } else {
            for (uint32_t w = firstw + lane; w <= lastw; w += 32) B[w] = 0;
        }
        __syncwarp();
    }
    report(found, bad, words);
    TG_PROF(report_profile(prof, words));
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

// Loads the ranges' kernels: under lazy loading (the default) a kernel's
// first launch loads it, which would fall within the first range's count.
cudaError_t load_kernels() {
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, ranges_check_rows);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, ranges_fill_bitmaps);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, ranges_hi_start);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, ranges_count);
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
    if (nvertices >= 0xffffffffull || bytes < tg_ranges_bytes(0, 0, 0) || bm_ratio > TG_RANGES_BM_MAX_RATIO) {
        tg_set_err(err, errlen, "%s: %llu vertices (< 2^32-1), %llu bytes (at least %llu), bitmap ratio %u (at most %u)",
                   fn, (unsigned long long)nvertices, (unsigned long long)bytes,
                   (unsigned long long)tg_ranges_bytes(0, 0, 0), bm_ratio, (unsigned)TG_RANGES_BM_MAX_RATIO);
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, fn);
    tg_ranges_drop(ctx);
    if ((e = load_kernels()) != cudaSuccess) return tg_cuda_status(e, err, errlen, fn);
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

extern "C" int32_t tg_ranges_count(tg_ctx *ctx, const uint32_t *rows, uint64_t base, uint64_t first, uint64_t nrows,
                                   const tg_range_row *entries, uint64_t nentries, uint64_t *triangles,
                                   double *kernel_ms, char *err, uint64_t errlen) {
    const char *fn = "tg_ranges_count";
    char where[160];
    int32_t rc = need_ranges(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    auto &rg = ctx->ranges;
    if (rows == nullptr || triangles == nullptr || (entries == nullptr && nentries > 0)) {
        tg_set_err(err, errlen, "%s: NULL rows, entries or result", fn);
        return TG_ERR_INVALID;
    }
    *triangles = 0;
    if (kernel_ms) *kernel_ms = 0;
    if (first > rg.nvert || nrows > rg.nvert - first) {
        tg_set_err(err, errlen, "%s: rows [%llu, +%llu) do not fit a graph of %llu rows", fn,
                   (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)rg.nvert);
        return TG_ERR_INVALID;
    }
    const void *drows = nullptr, *dent = nullptr;
    cudaError_t e = mapped(rows, &drows);
    if (e == cudaSuccess && nentries > 0) e = mapped(entries, &dent);
    if (e != cudaSuccess) {
        cudaGetLastError();
        tg_set_err(err, errlen, "%s: the rows at %p or the entries at %p are not registered host memory "
                   "(tg_host_register): %s", fn, (const void *)rows, (const void *)entries, cudaGetErrorString(e));
        return TG_ERR_INVALID;
    }
    const uint64_t ncols = rows[nrows], nwords = rows[2 * nrows + 1];
    if (base > rg.nnz || ncols > rg.nnz - base || tg_ranges_bytes(nrows, ncols, nwords) > rg.bytes) {
        tg_set_err(err, errlen,
                   "%s: rows [%llu, +%llu) with columns [%llu, +%llu) and %llu bitmap words do not fit a graph of "
                   "%llu columns or a work area of %llu bytes",
                   fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)base,
                   (unsigned long long)ncols, (unsigned long long)nwords, (unsigned long long)rg.nnz,
                   (unsigned long long)rg.bytes);
        return TG_ERR_INVALID;
    }
    // The work area (tg_ranges_bytes): the check words (words[0]: 1
    // malformed rows, 2 a bad entry; words[3] the triangles), the offsets
    // and the bitmaps' offsets (rows as given), the rows' first columns in
    // the window, the columns, the bitmaps.
    unsigned long long *words = (unsigned long long *)rg.arena;
    uint32_t *off = (uint32_t *)((char *)rg.arena + 256);
    uint32_t *dbmoff = off + nrows + 1;
    uint32_t *hs = (uint32_t *)((char *)off + tg_ranges_granules((nrows + 1) * 8));
    uint32_t *rcols = hs + nrows;
    uint32_t *bm = (uint32_t *)((char *)hs + tg_ranges_granules((nrows + ncols) * 4));
    cudaStream_t st = ctx->stream;
    TG_STEP(cudaEventRecord(ctx->ev_start, st), "timing");
    TG_STEP(cudaMemsetAsync(words, 0, 4 * sizeof(unsigned long long), st), "reset");
    TG_STEP(cudaMemcpyAsync(off, rows, 2 * (nrows + 1) * 4, cudaMemcpyHostToDevice, st), "copy offsets");
    if (ncols > 0)
        TG_STEP(cudaMemcpyAsync(rcols, rg.host + base, ncols * 4, cudaMemcpyHostToDevice, st), "copy columns");
    if (nwords > 0) TG_STEP(cudaMemsetAsync(bm, 0, nwords * 4, st), "clear bitmaps");
    const unsigned grid = (unsigned)std::max<uint64_t>(
        1, std::min<uint64_t>((nrows + 256) / 256, (uint64_t)ctx->env.sm_count * 16));
    {
        const uint64_t warps = std::max<uint64_t>(1, std::min<uint64_t>(nrows, (uint64_t)ctx->env.sm_count * 64));
        ranges_check_rows<<<(unsigned)((warps + 7) / 8), 256, 0, st>>>(off, dbmoff, rcols, nrows, (uint32_t)ncols,
                                                                        rg.nvert, rg.ratio, words);
        TG_STEP(cudaGetLastError(), "check kernel");
    }
    TG_STEP(cudaMemcpyAsync(ctx->h_count, words, sizeof(unsigned long long), cudaMemcpyDeviceToHost, st),
               "read check");
    TG_STEP(cudaStreamSynchronize(st), "check");
    if (ctx->h_count[0] != 0) {
        tg_set_err(err, errlen,
                   "%s: malformed rows [%llu, +%llu) (offsets not from 0, decreasing or past the range's %llu "
                   "columns, a column >= %llu, a row not strictly increasing, or bitmap offsets other than "
                   "tg_ranges_bm_words's)",
                   fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)ncols,
                   (unsigned long long)rg.nvert);
        return TG_ERR_INVALID;
    }
    if (nwords > 0) {
        ranges_fill_bitmaps<<<(unsigned)((nrows + 255) / 256), 256, 0, st>>>(off, rcols, dbmoff, nrows, bm);
        TG_STEP(cudaGetLastError(), "bitmap kernel");
    }
    TG_PROF(range_profile prof(st, words));
    const uint32_t W = (uint32_t)ctx->set.ranges_dense;
    const uint64_t hb = window_base(rg.nvert, first, W);
    if (nrows > 0) {
        ranges_hi_start<<<grid, 256, 0, st>>>(off, rcols, nrows, (uint32_t)hb, hs);
        TG_STEP(cudaGetLastError(), "window kernel");
    }
    if (nentries > 0) {
        // A warp an entry, as many warps a block (up to kWarps) as the
        // shared memory holds: the hardware hands the blocks out as SMs
        // free up, so entries of uneven work leave no partial wave behind.
        const size_t perWarp = count_smem_warp(W);
        const int warps = (int)std::max<size_t>(1, std::min<size_t>(kWarps, ctx->env.shared_mem_per_block_optin / perWarp));
        const size_t smem = perWarp * warps;
        if (smem > 48 * 1024)
            TG_STEP(cudaFuncSetAttribute(ranges_count, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                    "count kernel's shared memory");
        const uint64_t blocks = std::min<uint64_t>((nentries + warps - 1) / warps, 1ull << 30);
        ranges_count<<<(unsigned)blocks, warps * 32, smem, st>>>((const tg_range_row *)dent, nentries, rg.hcols,
                                                                rg.nnz, off, hs, rcols, dbmoff, bm, first, nrows,
                                                                (uint32_t)hb, W, words);
        TG_STEP(cudaGetLastError(), "count kernel");
    }
    TG_STEP(cudaEventRecord(ctx->ev_stop, st), "timing");
    TG_PROF(prof.report(ctx, st, words, hb, nrows, ncols, nwords, nentries));
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
