// trix: warp-cooperative binary-search intersection.
//
// Paper: Yasar et al., "TriX: Triangle Counting at Extreme Scale" (HPEC
// 2020), section V: the shorter neighbour list is the lookup list, its
// elements are spread over a warp's lanes (consecutive lanes take
// consecutive lookups: coalesced reads), and each lane binary-searches its
// element in the longer list, which the whole warp searches (cache hits).
//
// Preconditions (tg_internal.cuh): three CSR blocks with sorted,
// duplicate-free rows; ij.nrows == ik.nrows, ij.ncols == jk.nrows,
// ik.ncols == jk.ncols. Index spaces: for edge (u, v) of ij, u indexes rows
// of ik (I-local) and v rows of jk (J-local); lookups and searched lists are
// both K-local. Exact for any blocks, including empty ones and hub rows.
//
// Speed on degree-ordered graphs, where most lists are a few entries long,
// all exact:
// - A warp per edge would leave most lanes idle, so a warp takes 32
//   consecutive edges at once and deals out the lookups of all of them (a
//   prefix sum of per-edge lookup counts): a long list still uses the whole
//   warp as in the paper, short ones share it. Each lane finds the edges of
//   `S` consecutive lookups with one search of the prefix sums and leaves
//   them in shared memory; then lane l takes lookup l, l + 32, ... A lane's
//   successive lookups in one list resume the search where the last ended.
// - Edges are sorted by u, so the u-side lists of a block's 256 edges are
//   one contiguous run of ik's columns; the block copies it into shared
//   memory once (up to kTrixWindow entries) and lookups in, or from, a
//   u-side list inside it use the copy.
// - When ij, ik and jk are one upper block only the tail of row u after the
//   edge can match (every entry of row v is > v).
// - Lists with disjoint value ranges give no lookups; a lookup outside its
//   searched list's value range is not searched.
// - One block per 256 edges and warps independent after the block's single
//   setup barrier, so the hardware balances uneven runs.
#include <cstdlib>

#include "tg_kcommon.cuh"

namespace {

constexpr int kTrixThreads = 256;
constexpr int kTrixWarps = kTrixThreads / 32;
constexpr int kTrixWindow = 2048; // shared copy of the block's u-side lists (entries, 8 KB)

constexpr unsigned char kKeysFromU = 1; // lookups: u's list; searched: v's list
constexpr unsigned char kUInWindow = 2; // u's list lies inside the shared window

// tg_search on a list in shared memory: position of the last entry <= key
// in t[lo, hi) (lo when there is none), *found when it equals key.
__device__ __forceinline__ int win_search(const uint32_t *t, int lo, int hi, uint32_t key, bool *found) {
    int base = lo, n = hi - lo;
    while (n > 1) {
        const int half = n >> 1;
        base = (t[base + half] <= key) ? base + half : base;
        n -= half;
    }
    *found = n > 0 && t[base] == key;
    return base;
}

template <int S>
__global__ void __launch_bounds__(kTrixThreads) trix_kernel(tg_dblock ij, tg_dblock ik, tg_dblock jk, bool self,
                                                            int ratio, int win_cap, unsigned long long *out) {
    // Per warp: its 32 edges' lookup prefix sums ([32] = total), where
    // lookup w of edge k sits (kofs[k] + w), the searched range and its
    // value range, flags, and the edge of each lookup slot in a round.
    __shared__ long long s_excl[kTrixWarps][33];
    __shared__ long long s_kofs[kTrixWarps][32];
    __shared__ long long s_tbeg[kTrixWarps][32];
    __shared__ long long s_tend[kTrixWarps][32];
    __shared__ uint32_t s_tlo[kTrixWarps][32];
    __shared__ uint32_t s_thi[kTrixWarps][32];
    __shared__ unsigned char s_flags[kTrixWarps][32];
    __shared__ unsigned char s_own[kTrixWarps][32 * S];
    __shared__ uint32_t s_win[kTrixWindow];
    __shared__ long long s_rows[2];
    __shared__ int s_wlen;

    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const int64_t m = ij.nnz;
    const int64_t b0 = (int64_t)blockIdx.x * kTrixThreads;
    const int64_t blast = min(b0 + kTrixThreads - 1, m - 1);
    if (threadIdx.x < 2) s_rows[threadIdx.x] = tg_row_search(ij.rowptr, 0, ij.nrows, threadIdx.x == 0 ? b0 : blast);
    if (threadIdx.x == 0) s_wlen = 0;
    __syncthreads();
    const int64_t r0 = s_rows[0], r1 = s_rows[1];
    // Start of the window: no edge of the block uses a u-side entry before it.
    const int64_t ws = self ? b0 + 1 : (int64_t)__ldg(ik.rowptr + r0);

    // Lane-per-edge setup: edge e = b0 + threadIdx.x.
    long long klen = 0, kbeg = 0, tbeg = 0, tend = 0;
    uint32_t tlo = 0, thi = 0;
    unsigned char fl = 0;
    const int64_t e = b0 + threadIdx.x;
    if (e <= blast) {
        const int64_t u = tg_row_search(ij.rowptr, r0, r1 + 1, e);
        const uint32_t v = __ldg(ij.cols + e);
        const int64_t ab = self ? e + 1 : (int64_t)__ldg(ik.rowptr + u);
        const int64_t ae = (int64_t)__ldg(ik.rowptr + u + 1);
        const int64_t bb = (int64_t)__ldg(jk.rowptr + v);
        const int64_t be = (int64_t)__ldg(jk.rowptr + v + 1);
        const int64_t alen = ae - ab, blen = be - bb;
        if (alen > 0 && blen > 0) {
            const uint32_t alo = __ldg(ik.cols + ab), ahi = __ldg(ik.cols + ae - 1);
            const uint32_t blo = __ldg(jk.cols + bb), bhi = __ldg(jk.cols + be - 1);
            if (alo <= bhi && blo <= ahi) {
                const bool win = ae - ws <= (int64_t)win_cap;
                if (win) {
                    fl |= kUInWindow;
                    atomicMax(&s_wlen, (int)(ae - ws));
                }
                const int64_t ua = win ? ab - ws : ab, ue = win ? ae - ws : ae;
                // The shorter list is the lookup list (ratio 1, the paper's
                // rule); a larger ratio keeps u's list searched longer.
                if (blen > (int64_t)ratio * alen) {
                    fl |= kKeysFromU;
                    klen = alen; kbeg = ua;
                    tbeg = bb; tend = be; tlo = blo; thi = bhi;
                } else {
                    klen = blen; kbeg = bb;
                    tbeg = ua; tend = ue; tlo = alo; thi = ahi;
                }
            }
        }
    }
    __syncthreads(); // s_wlen is final
    const int wlen = s_wlen;
    for (int i = threadIdx.x; i < wlen; i += kTrixThreads) s_win[i] = __ldg(ik.cols + ws + i);

    // Inclusive prefix sum of lookup counts across the warp.
    long long incl = klen;
    for (int o = 1; o < 32; o <<= 1) {
        const long long y = __shfl_up_sync(TG_FULL_MASK, incl, o);
        if (lane >= o) incl += y;
    }
    const long long total = __shfl_sync(TG_FULL_MASK, incl, 31);
    const long long excl = incl - klen;
    s_excl[wid][lane] = excl;
    if (lane == 31) s_excl[wid][32] = incl;
    s_kofs[wid][lane] = kbeg - excl;
    s_tbeg[wid][lane] = tbeg;
    s_tend[wid][lane] = tend;
    s_tlo[wid][lane] = tlo;
    s_thi[wid][lane] = thi;
    s_flags[wid][lane] = fl;
    __syncthreads(); // the window (written by the whole block) is ready

    const long long *px = s_excl[wid];
    unsigned char *own = s_own[wid];
    unsigned long long count = 0;
    int prev_owner = -1;
    long long prev_pos = 0;
    for (long long base = 0; base < total; base += 32 * S) {
        const long long w0 = base + (long long)lane * S;
        if (w0 < total) {
            int lo = 0, hi = 32; // last edge with px <= w0
            while (hi - lo > 1) {
                const int mid = (lo + hi) >> 1;
                if (px[mid] <= w0) lo = mid; else hi = mid;
            }
            int k = lo;
#pragma unroll
            for (int j = 0; j < S; j++) {
                const long long w = w0 + j;
                if (w < total) {
                    while (px[k + 1] <= w) k++; // skips edges without lookups
                    own[lane * S + j] = (unsigned char)k;
                }
            }
        }
        __syncwarp();
#pragma unroll
        for (int j = 0; j < S; j++) {
            const int q = j * 32 + lane;
            const long long w = base + q;
            if (w < total) {
                const int k = own[q];
                const unsigned char f = s_flags[wid][k];
                const long long ki = s_kofs[wid][k] + w;
                uint32_t key;
                if ((f & (kKeysFromU | kUInWindow)) == (kKeysFromU | kUInWindow)) key = s_win[ki];
                else key = __ldg(((f & kKeysFromU) ? ik.cols : jk.cols) + ki);
                if (key >= s_tlo[wid][k] && key <= s_thi[wid][k]) {
                    const long long lo = k == prev_owner ? prev_pos : s_tbeg[wid][k];
                    const long long hi = s_tend[wid][k];
                    bool found;
                    if (f & kKeysFromU) prev_pos = tg_search(jk.cols, lo, hi, key, &found);
                    else if (f & kUInWindow) prev_pos = win_search(s_win, (int)lo, (int)hi, key, &found);
                    else prev_pos = tg_search(ik.cols, lo, hi, key, &found);
                    prev_owner = k;
                    count += found;
                }
            }
        }
        __syncwarp(); // own is rewritten by the next round
    }
    tg_block_add(count, out);
}

long env_long(const char *name, long dflt) {
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end = nullptr;
    const long v = strtol(s, &end, 10);
    return (end && *end == 0) ? v : dflt;
}

} // namespace

// TG_TRIX_RATIO (lookups come from u's list when v's is longer than RATIO
// times u's), TG_TRIX_WINDOW (shared window entries, 0 = off) and
// TG_TRIX_SPREAD (4 or 8 lookups per owner search) override the defaults for
// measurements; every setting is exact.
cudaError_t tg_kernel_trix(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                           unsigned long long *d_count) {
    if (ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0) return cudaSuccess;
    const bool self = ij == ik && ik == jk && ij->upper;
    long ratio = env_long("TG_TRIX_RATIO", 1);
    if (ratio < 0) ratio = 0;
    if (ratio > 1 << 20) ratio = 1 << 20;
    long win = env_long("TG_TRIX_WINDOW", kTrixWindow);
    if (win < 0) win = 0;
    if (win > kTrixWindow) win = kTrixWindow;
    const long spread = env_long("TG_TRIX_SPREAD", 8);
    const int64_t blocks = (ij->nnz + kTrixThreads - 1) / kTrixThreads;
    if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
    if (spread == 4)
        trix_kernel<4><<<(unsigned)blocks, kTrixThreads, 0, env->stream>>>(*ij, *ik, *jk, self, (int)ratio, (int)win,
                                                                           d_count);
    else
        trix_kernel<8><<<(unsigned)blocks, kTrixThreads, 0, env->stream>>>(*ij, *ik, *jk, self, (int)ratio, (int)win,
                                                                           d_count);
    return cudaGetLastError();
}
