// The search-based intersection shared by trix (a warp deals out the
// lookups of its 32 edges) and grouptc (a block deals out the keys of its
// 256-edge chunk): one kernel, templated on the width W of the group of
// edges whose keys are pooled (32 or 256). trix.cu and grouptc.cu state
// their papers; this file states the mechanics.
//
// Preconditions (tg_internal.cuh): three CSR blocks with sorted,
// duplicate-free rows; ij.nrows == ik.nrows, ij.ncols == jk.nrows,
// ik.ncols == jk.ncols. For edge (u, v) of ij, u indexes rows of ik
// (I-local) and v rows of jk (J-local); keys and searched tables are both
// K-local. Exact for any blocks, including empty ones and hub rows.
//
// Per block of kThreads edges, all exact:
// - Edges are sorted by u, so the u-side lists of the block's edges are one
//   contiguous run of ik's columns (for one upper block: from just after
//   the first edge to the end of its last row). The block copies that run
//   into shared memory once (up to `window` entries); an edge whose u-side
//   list lies inside it searches (or reads its keys) there.
// - When ij, ik and jk are one upper block only the tail of row u after the
//   edge can match (every entry of row v is > v).
// - Which list is searched: v's list is the key list unless it is longer
//   than `ratio` times u's (ratio 1 is the papers' "shorter list are the
//   keys"; a larger ratio keeps u's list, usually in the window, searched).
// - Keys are dealt out as in a flattened list: each thread finds the edges
//   of `S` consecutive keys of its group with one search of the group's
//   prefix sums, then neighbouring threads take neighbouring keys
//   (coalesced reads, one table per run of threads), and a thread's
//   successive keys in one table resume the search where the last ended.
// - Registers capped by MINB (__launch_bounds__(256, MINB)) so that 8 blocks
//   stay resident per multiprocessor when MINB is 8: occupancy hides the
//   dependent loads of the searches.
#pragma once
#include <cub/block/block_scan.cuh>

#include "tg_kcommon.cuh"

namespace tg_isect {

constexpr int kThreads = 256;
constexpr int kMaxWindow = 2048; // shared copy of the block's u-side lists (entries, 8 KB)

constexpr unsigned char kKeysFromU = 1; // keys: u's list; table: v's list
constexpr unsigned char kUInWindow = 2; // u's list lies inside the shared window

// Pools keys over groups of W threads (W = 32: a warp; W = kThreads: the
// block).
template <int W>
__device__ __forceinline__ void group_sync() {
    if constexpr (W == 32) __syncwarp();
    else __syncthreads();
}

// Counts the keys of edges [kThreads * blockIdx.x, kThreads * (blockIdx.x +
// 1)) of ij found in their tables into *out (one atomic per block). self:
// ij, ik and jk are one upper block. win_cap <= kMaxWindow.
template <int W, int S, int MINB>
__global__ void __launch_bounds__(kThreads, MINB) kernel(tg_dblock ij, tg_dblock ik, tg_dblock jk, bool self,
                                                         int ratio, int win_cap, unsigned long long *out) {
    static_assert(W == 32 || W == kThreads, "a group is a warp or the block");
    constexpr int NG = kThreads / W;
    // Per group: its edges' key prefix sums ([W] = total), where key w of
    // edge k sits (kofs[k] + w), the table range, flags, and the edge of
    // each key slot in a round.
    __shared__ long long s_excl[NG][W + 1];
    __shared__ long long s_kofs[NG][W];
    __shared__ long long s_tbeg[NG][W];
    __shared__ long long s_tend[NG][W];
    __shared__ unsigned char s_flags[NG][W];
    __shared__ unsigned char s_own[NG][W * S];
    __shared__ uint32_t s_win[kMaxWindow];
    __shared__ long long s_rows[2];
    __shared__ int s_wlen;

    const int tid = threadIdx.x;
    const int gl = NG == 1 ? tid : (tid & (W - 1)); // thread within its group
    const int gid = NG == 1 ? 0 : tid / W;
    const int64_t m = ij.nnz;
    const int64_t b0 = (int64_t)blockIdx.x * kThreads;
    const int64_t blast = min(b0 + kThreads - 1, m - 1);
    if (tid < 2) s_rows[tid] = tg_row_search(ij.rowptr, 0, ij.nrows, tid == 0 ? b0 : blast);
    if (tid == 0) s_wlen = 0;
    __syncthreads();
    const int64_t r0 = s_rows[0], r1 = s_rows[1];
    // Start of the window: no edge of the block uses a u-side entry before it.
    const int64_t ws = self ? b0 + 1 : (int64_t)__ldg(ik.rowptr + r0);

    // Thread-per-edge setup: edge e = b0 + tid.
    long long klen = 0, kbeg = 0, tbeg = 0, tend = 0;
    unsigned char fl = 0;
    const int64_t e = b0 + tid;
    if (e <= blast) {
        const int64_t u = tg_row_search(ij.rowptr, r0, r1 + 1, e);
        const uint32_t v = __ldg(ij.cols + e);
        const int64_t ab = self ? e + 1 : (int64_t)__ldg(ik.rowptr + u);
        const int64_t ae = (int64_t)__ldg(ik.rowptr + u + 1);
        const int64_t bb = (int64_t)__ldg(jk.rowptr + v);
        const int64_t be = (int64_t)__ldg(jk.rowptr + v + 1);
        const int64_t alen = ae - ab, blen = be - bb;
        if (alen > 0 && blen > 0) {
            const bool win = ae - ws <= (int64_t)win_cap;
            if (win) {
                fl |= kUInWindow;
                atomicMax(&s_wlen, (int)(ae - ws));
            }
            const int64_t ua = win ? ab - ws : ab, ue = win ? ae - ws : ae;
            if (blen > (int64_t)ratio * alen) {
                fl |= kKeysFromU;
                klen = alen; kbeg = ua;
                tbeg = bb; tend = be;
            } else {
                klen = blen; kbeg = bb;
                tbeg = ua; tend = ue;
            }
        }
    }
    __syncthreads(); // s_wlen is final
    const int wlen = s_wlen;
    for (int i = tid; i < wlen; i += kThreads) s_win[i] = __ldg(ik.cols + ws + i);

    // Exclusive prefix sum of key counts across the group, and its total.
    long long excl, total;
    if constexpr (W == 32) {
        long long incl = klen;
        for (int o = 1; o < 32; o <<= 1) {
            const long long y = __shfl_up_sync(TG_FULL_MASK, incl, o);
            if (gl >= o) incl += y;
        }
        total = __shfl_sync(TG_FULL_MASK, incl, 31);
        excl = incl - klen;
    } else {
        typedef cub::BlockScan<long long, kThreads> Scan;
        __shared__ typename Scan::TempStorage scan_tmp;
        Scan(scan_tmp).ExclusiveSum(klen, excl, total);
    }
    s_excl[gid][gl] = excl;
    if (gl == W - 1) s_excl[gid][W] = excl + klen;
    s_kofs[gid][gl] = kbeg - excl;
    s_tbeg[gid][gl] = tbeg;
    s_tend[gid][gl] = tend;
    s_flags[gid][gl] = fl;
    __syncthreads(); // the window (written by the whole block) and the tables are ready

    const long long *px = s_excl[gid];
    unsigned char *own = s_own[gid];
    unsigned long long count = 0;
    int prev_owner = -1;
    long long prev_pos = 0;
    for (long long base = 0; base < total; base += (long long)W * S) {
        // Each thread finds the edges of keys base + gl*S .. +S-1.
        const long long w0 = base + (long long)gl * S;
        if (w0 < total) {
            int lo = 0, hi = W; // last edge with px <= w0
            while (hi - lo > 1) {
                const int mid = (lo + hi) >> 1;
                if (px[mid] <= w0) lo = mid; else hi = mid;
            }
            int k = lo;
#pragma unroll
            for (int j = 0; j < S; j++) {
                const long long w = w0 + j;
                if (w < total) {
                    while (px[k + 1] <= w) k++; // skips edges without keys
                    own[gl * S + j] = (unsigned char)k;
                }
            }
        }
        group_sync<W>();
        // Slot q = j*W + gl: neighbouring threads take neighbouring keys. A
        // thread's keys grow with j, so a search may resume.
#pragma unroll
        for (int j = 0; j < S; j++) {
            const int q = j * W + gl;
            const long long w = base + q;
            if (w < total) {
                const int k = own[q];
                const unsigned char f = s_flags[gid][k];
                const long long ki = s_kofs[gid][k] + w;
                const bool kwin = (f & (kKeysFromU | kUInWindow)) == (kKeysFromU | kUInWindow);
                const uint32_t key = kwin ? s_win[ki] : __ldg(((f & kKeysFromU) ? ik.cols : jk.cols) + ki);
                const long long lo = k == prev_owner ? prev_pos : s_tbeg[gid][k];
                const long long hi = s_tend[gid][k];
                bool found;
                if (f & kKeysFromU) {
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
        group_sync<W>(); // own is rewritten by the next round
    }
    tg_block_add(count, out);
}

// The settings of one kernel (trigrid.h: <kernel>_ratio, _window, _spread,
// _minb).
struct Settings {
    int32_t ratio, window, spread, minb;
};

// Launches the kernel of spread S, with registers capped for 8 resident
// blocks (full) or uncapped.
template <int W, int S>
void launch(bool full, unsigned grid, cudaStream_t st, const tg_dblock &ij, const tg_dblock &ik, const tg_dblock &jk,
            bool self, int ratio, int win, unsigned long long *d_count) {
    if (full) kernel<W, S, 8><<<grid, kThreads, 0, st>>>(ij, ik, jk, self, ratio, win, d_count);
    else kernel<W, S, 1><<<grid, kThreads, 0, st>>>(ij, ik, jk, self, ratio, win, d_count);
}

// Counts the subtask with groups of W threads: the whole host side of trix
// (W = 32) and grouptc (W = 256).
template <int W>
cudaError_t run(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, const Settings &set,
                tg_kernel_env *env, unsigned long long *d_count) {
    if (ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0) return cudaSuccess;
    const bool self = ij == ik && ik == jk && ij->upper;
    const int ratio = set.ratio < 0 ? 0 : set.ratio > (1 << 20) ? (1 << 20) : set.ratio;
    const int win = set.window < 0 ? 0 : set.window > kMaxWindow ? kMaxWindow : set.window;
    const int64_t blocks = (ij->nnz + kThreads - 1) / kThreads;
    if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
    const bool full = set.minb >= 8;
    const unsigned grid = (unsigned)blocks;
    cudaError_t err = env->begin(env);
    if (err != cudaSuccess) return err;
    cudaStream_t st = env->stream;
    if (set.spread == 4) launch<W, 4>(full, grid, st, *ij, *ik, *jk, self, ratio, win, d_count);
    else if (set.spread == 16) launch<W, 16>(full, grid, st, *ij, *ik, *jk, self, ratio, win, d_count);
    else launch<W, 8>(full, grid, st, *ij, *ik, *jk, self, ratio, win, d_count);
    return cudaGetLastError();
}

} // namespace tg_isect
