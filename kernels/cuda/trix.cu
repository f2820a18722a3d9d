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
// - Which list is searched: the paper's rule (the longer one) is RATIO 1.
//   Since u's list is usually in the shared window, searching it is cheaper
//   than searching v's list in device memory, so by default u's list stays
//   the searched one unless v's list is more than twice as long (rmat 23:
//   178 ms against 189 ms with the paper's rule).
// - Optional value-range checks (TG_TRIX_RANGE=1): lists with disjoint value
//   ranges give no lookups; a lookup outside its searched list's value range
//   is not searched. Off by default (four extra loads per edge, measured
//   slower).
// - Registers are capped (__launch_bounds__(256, 8): 32 per thread) so that
//   8 blocks stay resident per multiprocessor; occupancy hides the
//   dependent loads of the searches (rmat 23: 180 ms capped, 200 uncapped).
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

template <int S, bool G, int MINB>
__global__ void __launch_bounds__(kTrixThreads, MINB) trix_kernel(tg_dblock ij, tg_dblock ik, tg_dblock jk, bool self,
                                                            int ratio, int win_cap, bool range, unsigned long long *out) {
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
            uint32_t alo = 0, ahi = 0xffffffffu, blo = 0, bhi = 0xffffffffu;
            if (range) {
                alo = __ldg(ik.cols + ab); ahi = __ldg(ik.cols + ae - 1);
                blo = __ldg(jk.cols + bb); bhi = __ldg(jk.cols + be - 1);
            }
            if (alo <= bhi && blo <= ahi) {
                const bool win = ae - ws <= (int64_t)win_cap;
                if (win) {
                    fl |= kUInWindow;
                    atomicMax(&s_wlen, (int)(ae - ws));
                }
                const int64_t ua = win ? ab - ws : ab, ue = win ? ae - ws : ae;
                // Ratio 1 is the paper's rule (the shorter list is the lookup
                // list); a larger ratio keeps u's (cached) list searched.
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
                const bool kwin = (f & (kKeysFromU | kUInWindow)) == (kKeysFromU | kUInWindow);
                uint32_t key;
                if (G) key = (kwin ? (const uint32_t *)s_win : ((f & kKeysFromU) ? ik.cols : jk.cols))[ki];
                else if (kwin) key = s_win[ki];
                else key = __ldg(((f & kKeysFromU) ? ik.cols : jk.cols) + ki);
                if (key >= s_tlo[wid][k] && key <= s_thi[wid][k]) {
                    const long long lo = k == prev_owner ? prev_pos : s_tbeg[wid][k];
                    const long long hi = s_tend[wid][k];
                    bool found;
                    if (G) {
                        const uint32_t *tp =
                            (f & kKeysFromU) ? jk.cols : ((f & kUInWindow) ? (const uint32_t *)s_win : ik.cols);
                        prev_pos = tg_any_search(tp, lo, hi, key, &found);
                    } else if (f & kKeysFromU) {
                        prev_pos = tg_search(jk.cols, lo, hi, key, &found);
                    } else if (f & kUInWindow) {
                        prev_pos = tg_win_search(s_win, (int)lo, (int)hi, key, &found);
                    } else {
                        prev_pos = tg_search(ik.cols, lo, hi, key, &found);
                    }
                    prev_owner = k;
                    count += found;
                }
            }
        }
        __syncwarp(); // own is rewritten by the next round
    }
    tg_block_add(count, out);
}

template <int S, bool G, int MINB>
void launch(unsigned grid, cudaStream_t st, const tg_dblock &ij, const tg_dblock &ik, const tg_dblock &jk, bool self,
            int ratio, int win, bool range, unsigned long long *d_count) {
    trix_kernel<S, G, MINB><<<grid, kTrixThreads, 0, st>>>(ij, ik, jk, self, ratio, win, range, d_count);
}

template <int S>
void launch_s(bool generic, bool full, unsigned grid, cudaStream_t st, const tg_dblock &ij, const tg_dblock &ik,
              const tg_dblock &jk, bool self, int ratio, int win, bool range, unsigned long long *d_count) {
    if (generic) {
        if (full) launch<S, true, 8>(grid, st, ij, ik, jk, self, ratio, win, range, d_count);
        else launch<S, true, 1>(grid, st, ij, ik, jk, self, ratio, win, range, d_count);
    } else {
        if (full) launch<S, false, 8>(grid, st, ij, ik, jk, self, ratio, win, range, d_count);
        else launch<S, false, 1>(grid, st, ij, ik, jk, self, ratio, win, range, d_count);
    }
}

} // namespace

// Overrides for measurements, every setting exact (defaults first):
// TG_TRIX_RATIO (2: lookups come from u's list when v's is longer than RATIO
// times u's; 1 = the paper's rule), TG_TRIX_WINDOW (2048 shared window
// entries, 0 = off), TG_TRIX_SPREAD (8; 4 or 16 lookups per owner search),
// TG_TRIX_MINB (8: registers capped for 8 resident blocks; 1 = uncapped),
// TG_TRIX_RANGE (0; 1 = value-range checks), TG_TRIX_GENERIC (0; 1 = one
// search loop through generic pointers, slower).
cudaError_t tg_kernel_trix(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                           unsigned long long *d_count) {
    if (ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0) return cudaSuccess;
    const bool self = ij == ik && ik == jk && ij->upper;
    long ratio = tg_env_long("TG_TRIX_RATIO", 2);
    if (ratio < 0) ratio = 0;
    if (ratio > 1 << 20) ratio = 1 << 20;
    long win = tg_env_long("TG_TRIX_WINDOW", kTrixWindow);
    if (win < 0) win = 0;
    if (win > kTrixWindow) win = kTrixWindow;
    const long spread = tg_env_long("TG_TRIX_SPREAD", 8);
    const int64_t blocks = (ij->nnz + kTrixThreads - 1) / kTrixThreads;
    if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
    const bool generic = tg_env_long("TG_TRIX_GENERIC", 0) != 0;
    const bool full = tg_env_long("TG_TRIX_MINB", 8) >= 8;
    const bool range = tg_env_long("TG_TRIX_RANGE", 0) != 0;
    const unsigned grid = (unsigned)blocks;
    cudaError_t err = env->begin(env);
    if (err != cudaSuccess) return err;
    if (spread == 4) launch_s<4>(generic, full, grid, env->stream, *ij, *ik, *jk, self, (int)ratio, (int)win, range, d_count);
    else if (spread == 16) launch_s<16>(generic, full, grid, env->stream, *ij, *ik, *jk, self, (int)ratio, (int)win, range, d_count);
    else launch_s<8>(generic, full, grid, env->stream, *ij, *ik, *jk, self, (int)ratio, (int)win, range, d_count);
    return cudaGetLastError();
}
