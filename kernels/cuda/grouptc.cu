// grouptc: edge chunks per thread block, binary-search intersection.
//
// Paper: "A Comparative Study of Intersection-Based Triangle Counting
// Algorithms on GPUs" (the GroupTC section): a block of n threads takes n
// consecutive edges (an edge chunk), caches where each edge's lists start
// and how long they are in shared memory, and its threads stride over the
// chunk's search keys, binary-searching each in its edge's search table.
// The three optimizations: (1) for u < v only the part of u's list beyond v
// is searched; (2) a thread's next key of the same edge restarts the search
// where its last one ended; (3) u's list is the table (shared by the
// chunk's consecutive edges of row u, so cached) unless v's list is much
// shorter (v's list more than twice as long: u's list becomes the keys).
//
// Preconditions (tg_internal.cuh): three CSR blocks with sorted,
// duplicate-free rows; ij.nrows == ik.nrows, ij.ncols == jk.nrows,
// ik.ncols == jk.ncols. Index spaces: for edge (u, v) of ij, u indexes rows
// of ik (I-local) and v rows of jk (J-local); keys and tables are K-local.
// Optimization (1) needs u's list and v's list in one index space with
// every key of v's list > v, which holds only when ij, ik and jk are one
// upper block; otherwise whole rows are intersected. Exact for any blocks,
// including empty ones and hub rows.
//
// How the paper's caching is done here, all exact:
// - Edges are sorted by u, so the u-side lists of a chunk are one
//   contiguous run of ik's columns (for one upper block: from just after the
//   chunk's first edge to the end of its last row). The block copies that
//   run into shared memory once (up to kGroupWindow entries); every edge
//   whose u-side list lies inside it searches (or reads its keys) there
//   instead of in device memory. Lists past the window stay in device
//   memory.
// - Optional value-range checks (TG_GROUPTC_RANGE=1): an edge whose two
//   lists have disjoint value ranges gets no keys, and a key outside its
//   table's value range is not searched. Off by default: the four extra
//   loads per edge cost more than they save (rmat 23: 168.5 ms off, 171.1 on).
// - Registers are capped (__launch_bounds__(256, 8): 32 per thread, a few
//   bytes spilled) so that 8 blocks (2048 threads) stay resident on each
//   multiprocessor: the searches are chains of dependent loads, and
//   occupancy is what hides them (rmat 23: 171 ms capped, 206 ms at 48
//   registers and 5 blocks).
// - Keys are dealt out as in a flattened list: each thread finds the edges
//   of `S` consecutive keys with one search of the chunk's prefix sums and
//   writes them to shared memory, then neighbouring threads take
//   neighbouring keys (coalesced reads, one table per run of threads).
// - One block per chunk, so the hardware scheduler balances chunks of
//   uneven cost.
#include <cub/block/block_scan.cuh>

#include <cstdlib>

#include "tg_kcommon.cuh"

namespace {

constexpr int kGroupThreads = 256; // threads per block = edges per chunk
constexpr int kGroupWindow = 2048; // shared copy of the chunk's u-side lists (entries, 8 KB)

constexpr unsigned char kKeysFromU = 1; // keys: u's list; table: v's list
constexpr unsigned char kUInWindow = 2; // u's list lies inside the shared window

template <int S, bool G, int MINB>
__global__ void __launch_bounds__(kGroupThreads, MINB) grouptc_kernel(tg_dblock ij, tg_dblock ik, tg_dblock jk, bool self,
                                                                int ratio, int win_cap, bool range, unsigned long long *out) {
    constexpr int T = kGroupThreads;
    typedef cub::BlockScan<long long, T> Scan;
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ long long s_excl[T + 1]; // first key number of each edge; [T] = total
    __shared__ long long s_kofs[T];     // key number w of edge k sits at keys[s_kofs[k] + w]
    __shared__ long long s_tbeg[T];     // table range (window-relative when in the window)
    __shared__ long long s_tend[T];
    __shared__ uint32_t s_tlo[T]; // smallest and largest table value
    __shared__ uint32_t s_thi[T];
    __shared__ unsigned char s_flags[T];
    __shared__ unsigned char s_own[T * S]; // edge of each key slot in a round
    __shared__ uint32_t s_win[kGroupWindow];
    __shared__ long long s_rows[2];
    __shared__ int s_wlen;

    const int tid = threadIdx.x;
    const int64_t m = ij.nnz;
    const int64_t e0 = (int64_t)blockIdx.x * T;
    const int64_t elast = min(e0 + T - 1, m - 1);
    if (tid < 2) s_rows[tid] = tg_row_search(ij.rowptr, 0, ij.nrows, tid == 0 ? e0 : elast);
    if (tid == 0) s_wlen = 0;
    __syncthreads();
    const int64_t r0 = s_rows[0], r1 = s_rows[1];
    // Start of the window: no edge of the chunk uses a u-side entry before it.
    const int64_t ws = self ? e0 + 1 : (int64_t)__ldg(ik.rowptr + r0);

    long long klen = 0, kbeg = 0, tbeg = 0, tend = 0;
    uint32_t tlo = 0, thi = 0;
    unsigned char fl = 0;
    const int64_t e = e0 + tid;
    if (e <= elast) {
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
    for (int i = tid; i < wlen; i += T) s_win[i] = __ldg(ik.cols + ws + i);
    long long excl, total;
    Scan(scan_tmp).ExclusiveSum(klen, excl, total);
    s_excl[tid] = excl;
    if (tid == T - 1) s_excl[T] = excl + klen;
    s_kofs[tid] = kbeg - excl;
    s_tbeg[tid] = tbeg;
    s_tend[tid] = tend;
    s_tlo[tid] = tlo;
    s_thi[tid] = thi;
    s_flags[tid] = fl;
    __syncthreads(); // window and per-edge tables are ready

    unsigned long long count = 0;
    int prev_owner = -1;
    long long prev_pos = 0;
    for (long long base = 0; base < total; base += (long long)T * S) {
        // Each thread finds the edges of keys base + tid*S .. +S-1.
        const long long w0 = base + (long long)tid * S;
        if (w0 < total) {
            int lo = 0, hi = T; // last edge with s_excl <= w0
            while (hi - lo > 1) {
                const int mid = (lo + hi) >> 1;
                if (s_excl[mid] <= w0) lo = mid; else hi = mid;
            }
            int k = lo;
#pragma unroll
            for (int j = 0; j < S; j++) {
                const long long w = w0 + j;
                if (w < total) {
                    while (s_excl[k + 1] <= w) k++; // skips edges without keys
                    s_own[tid * S + j] = (unsigned char)k;
                }
            }
        }
        __syncthreads();
        // Slot q = j*T + tid: neighbouring threads take neighbouring keys.
        // A thread's keys grow with j, so a search may resume (optimization 2).
#pragma unroll
        for (int j = 0; j < S; j++) {
            const int q = j * T + tid;
            const long long w = base + q;
            if (w < total) {
                const int k = s_own[q];
                const unsigned char f = s_flags[k];
                const long long ki = s_kofs[k] + w;
                const bool kwin = (f & (kKeysFromU | kUInWindow)) == (kKeysFromU | kUInWindow);
                uint32_t key;
                if (G) key = (kwin ? (const uint32_t *)s_win : ((f & kKeysFromU) ? ik.cols : jk.cols))[ki];
                else if (kwin) key = s_win[ki];
                else key = __ldg(((f & kKeysFromU) ? ik.cols : jk.cols) + ki);
                if (key >= s_tlo[k] && key <= s_thi[k]) {
                    const long long lo = k == prev_owner ? prev_pos : s_tbeg[k];
                    const long long hi = s_tend[k];
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
        __syncthreads(); // s_own is rewritten by the next round
    }
    tg_block_add(count, out);
}

template <int S, bool G, int MINB>
void launch(unsigned grid, cudaStream_t st, const tg_dblock &ij, const tg_dblock &ik, const tg_dblock &jk, bool self,
            int ratio, int win, bool range, unsigned long long *d_count) {
    grouptc_kernel<S, G, MINB><<<grid, kGroupThreads, 0, st>>>(ij, ik, jk, self, ratio, win, range, d_count);
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

// Overrides for measurements, every setting exact (defaults first, the
// measured best on rmat 18-23): TG_GROUPTC_RATIO (2: v's list is the table
// unless longer than RATIO times u's), TG_GROUPTC_WINDOW (2048 shared window
// entries, 0 = off), TG_GROUPTC_SPREAD (8; 4 or 16 keys per owner search),
// TG_GROUPTC_MINB (8: registers capped for 8 resident blocks; 1 = uncapped),
// TG_GROUPTC_RANGE (0; 1 = value-range checks), TG_GROUPTC_GENERIC (0; 1 =
// one search loop through generic pointers, slower).
cudaError_t tg_kernel_grouptc(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                              unsigned long long *d_count) {
    if (ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0) return cudaSuccess;
    const bool self = ij == ik && ik == jk && ij->upper;
    long ratio = tg_env_long("TG_GROUPTC_RATIO", 2);
    if (ratio < 0) ratio = 0;
    if (ratio > 1 << 20) ratio = 1 << 20;
    long win = tg_env_long("TG_GROUPTC_WINDOW", kGroupWindow);
    if (win < 0) win = 0;
    if (win > kGroupWindow) win = kGroupWindow;
    const long spread = tg_env_long("TG_GROUPTC_SPREAD", 8);
    const int64_t chunks = (ij->nnz + kGroupThreads - 1) / kGroupThreads;
    if (chunks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
    const bool generic = tg_env_long("TG_GROUPTC_GENERIC", 0) != 0;
    const bool full = tg_env_long("TG_GROUPTC_MINB", 8) >= 8;
    const bool range = tg_env_long("TG_GROUPTC_RANGE", 0) != 0;
    const unsigned grid = (unsigned)chunks;
    cudaError_t err = env->begin(env);
    if (err != cudaSuccess) return err;
    if (spread == 4) launch_s<4>(generic, full, grid, env->stream, *ij, *ik, *jk, self, (int)ratio, (int)win, range, d_count);
    else if (spread == 16) launch_s<16>(generic, full, grid, env->stream, *ij, *ik, *jk, self, (int)ratio, (int)win, range, d_count);
    else launch_s<8>(generic, full, grid, env->stream, *ij, *ik, *jk, self, (int)ratio, (int)win, range, d_count);
    return cudaGetLastError();
}
