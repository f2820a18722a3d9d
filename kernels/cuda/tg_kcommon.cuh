// Device helpers shared by the polak, trix and grouptc kernels: row lookup
// for a run of edges, per-edge intersection tasks, branch-free searches and
// the once-per-block count reduction.
#pragma once
#include <atomic>
#include <cstdint>

#include "tg_internal.cuh"

#define TG_FULL_MASK 0xffffffffu

// Last row r in [lo, hi) with rowptr[r] <= e: the row holding edge e.
// Requires rowptr[lo] <= e. Branch-free so that a warp's lanes stay together.
__device__ __forceinline__ int64_t tg_row_search(const uint64_t *__restrict__ rowptr, int64_t lo, int64_t hi,
                                                 int64_t e) {
    const uint64_t *base = rowptr + lo;
    int64_t n = hi - lo;
    while (n > 1) {
        int64_t half = n >> 1;
        base = (__ldg(base + half) <= (uint64_t)e) ? base + half : base;
        n -= half;
    }
    return base - rowptr;
}

// Rows of the edges e0 .. elast handled by one warp (lane i has edge e0+i;
// lanes past elast get elast's row). Lanes 0 and 1 bound the rows with two
// searches over [rmin, nrows); every lane then searches only between those
// bounds, usually a handful of rows. rmin is a row known to be <= row(e0).
__device__ __forceinline__ int64_t tg_warp_rows(const uint64_t *__restrict__ rowptr, int64_t nrows, int64_t rmin,
                                                int64_t e0, int64_t elast, int lane) {
    int64_t r = 0;
    if (lane < 2) r = tg_row_search(rowptr, rmin, nrows, lane == 0 ? e0 : elast);
    const int64_t r0 = __shfl_sync(TG_FULL_MASK, r, 0);
    const int64_t r1 = __shfl_sync(TG_FULL_MASK, r, 1);
    const int64_t e = min(e0 + lane, elast);
    return tg_row_search(rowptr, r0, r1 + 1, e);
}

// One edge's intersection: search each of keys [kbeg, kbeg+klen) in the
// sorted table [tbeg, tend). Both ranges index the columns array their block
// owns (kcols / tcols).
struct tg_task {
    const uint32_t *kcols;
    const uint32_t *tcols;
    int64_t kbeg, klen;
    int64_t tbeg, tend;
};

// Builds edge e = (u, v)'s task: ik.row(u) against jk.row(v), or, when self
// (ij, ik, jk are one upper block), only the tail of row u after e, since
// every key of jk.row(v) is > v (GroupTC's first optimization). The shorter
// list becomes the keys when prefer_short, else u's list stays the table
// unless v's list is more than twice as long (GroupTC's third).
__device__ __forceinline__ tg_task tg_edge_task(const tg_dblock &ij, const tg_dblock &ik, const tg_dblock &jk,
                                                bool self, int64_t e, int64_t u, bool prefer_short) {
    const uint32_t v = __ldg(ij.cols + e);
    const int64_t ab = self ? e + 1 : (int64_t)__ldg(ik.rowptr + u);
    const int64_t ae = (int64_t)__ldg(ik.rowptr + u + 1);
    const int64_t bb = (int64_t)__ldg(jk.rowptr + v);
    const int64_t be = (int64_t)__ldg(jk.rowptr + v + 1);
    const int64_t alen = ae - ab, blen = be - bb;
    tg_task t;
    const bool keys_from_u = prefer_short ? (alen < blen) : (blen > 2 * alen);
    if (keys_from_u) {
        t.kcols = ik.cols; t.kbeg = ab; t.klen = alen;
        t.tcols = jk.cols; t.tbeg = bb; t.tend = be;
    } else {
        t.kcols = jk.cols; t.kbeg = bb; t.klen = blen;
        t.tcols = ik.cols; t.tbeg = ab; t.tend = ae;
    }
    if (t.klen <= 0 || t.tend <= t.tbeg) t.klen = 0;
    return t;
}

// Position of the last element <= key in table[lo, hi) (or lo when there
// is none); *found tells whether it equals key. Keys searched in ascending
// order may restart from the returned position (GroupTC's second
// optimization): everything before it is smaller than any later key.
__device__ __forceinline__ int64_t tg_search(const uint32_t *__restrict__ table, int64_t lo, int64_t hi,
                                             uint32_t key, bool *found) {
    const uint32_t *base = table + lo;
    int64_t n = hi - lo;
    while (n > 1) {
        int64_t half = n >> 1;
        base = (__ldg(base + half) <= key) ? base + half : base;
        n -= half;
    }
    *found = n > 0 && __ldg(base) == key;
    return base - table;
}

// tg_search on a table in shared memory: position of the last entry <= key
// in t[lo, hi) (lo when there is none), *found when it equals key.
__device__ __forceinline__ int tg_win_search(const uint32_t *t, int lo, int hi, uint32_t key, bool *found) {
    int base = lo, n = hi - lo;
    while (n > 1) {
        const int half = n >> 1;
        base = (t[base + half] <= key) ? base + half : base;
        n -= half;
    }
    *found = n > 0 && t[base] == key;
    return base;
}

// Adds each thread's count into *out with one 64-bit atomic per block.
// Every thread of the block must call it.
__device__ __forceinline__ void tg_block_add(unsigned long long c, unsigned long long *out) {
    __shared__ unsigned long long warp_sums[32];
    for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(TG_FULL_MASK, c, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long s = 0;
        const int nw = (blockDim.x + 31) >> 5;
        for (int w = 0; w < nw; w++) s += warp_sums[w];
        if (s) atomicAdd(out, s);
    }
}

// Persistent-grid size: enough resident blocks to fill every multiprocessor,
// but never more blocks than work items. The occupancy query is cached by
// the caller (cache) because it runs between the timing events.
template <typename K>
static inline unsigned tg_grid_for(K kernel, int threads, const tg_kernel_env *env, int64_t items,
                                   std::atomic<int> *cache) {
    int per_sm = cache->load(std::memory_order_relaxed);
    if (per_sm <= 0) {
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) != cudaSuccess || per_sm < 1) {
            cudaGetLastError();
            per_sm = 1;
        }
        cache->store(per_sm, std::memory_order_relaxed);
    }
    int64_t g = (int64_t)per_sm * env->sm_count;
    if (items < g) g = items;
    if (g < 1) g = 1;
    return (unsigned)g;
}
