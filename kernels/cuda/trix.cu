// trix: warp-cooperative binary-search intersection.
//
// Paper: Yasar et al., "TriX: Triangle Counting at Extreme Scale" (HPEC
// 2020), section V: the shorter neighbour list is the lookup list, its
// elements are spread over a warp's lanes (coalesced reads), and each lane
// binary-searches its element in the longer list.
//
// Preconditions (tg_internal.cuh): three CSR blocks with sorted,
// duplicate-free rows; ij.nrows == ik.nrows, ij.ncols == jk.nrows,
// ik.ncols == jk.ncols. Index spaces: for edge (u, v) of ij, u indexes rows
// of ik (I-local) and v rows of jk (J-local); lookups and searched lists are
// both K-local. Exact for any blocks, including empty ones and hub rows.
//
// Speed on degree-ordered graphs, where most lists are a few entries long:
// a warp per edge would leave most lanes idle, so a warp takes 32
// consecutive edges at once and deals out the lookups of all of them
// (a prefix sum of per-edge lookup counts in registers), one per lane per
// round: a long list still uses the whole warp as in the paper, short ones
// share it. A lane's successive lookups in one list restart the search where
// the last one ended, and the one-upper-block case searches only the tail
// of row u (see tg_kcommon.cuh).
#include "tg_kcommon.cuh"

static constexpr int kTrixThreads = 256;

__global__ void __launch_bounds__(kTrixThreads) tg_trix_kernel(tg_dblock ij, tg_dblock ik, tg_dblock jk, bool self,
                                                               unsigned long long *out) {
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int64_t m = ij.nnz;
    unsigned long long count = 0;
    int64_t rmin = 0;
    for (int64_t e0 = warp * 32; e0 < m; e0 += nwarps * 32) {
        const int64_t elast = min(e0 + 31, m - 1);
        const int64_t u = tg_warp_rows(ij.rowptr, ij.nrows, rmin, e0, elast, lane);
        rmin = __shfl_sync(TG_FULL_MASK, u, 31);
        const int64_t e = e0 + lane;
        tg_task t{};
        if (e <= elast) t = tg_edge_task(ij, ik, jk, self, e, u, true);
        // Inclusive prefix sum of lookup counts across the warp.
        int64_t incl = t.klen;
        for (int o = 1; o < 32; o <<= 1) {
            const int64_t y = __shfl_up_sync(TG_FULL_MASK, incl, o);
            if (lane >= o) incl += y;
        }
        const int64_t total = __shfl_sync(TG_FULL_MASK, incl, 31);
        const int64_t excl = incl - t.klen;
        // A lane reads key number k of the warp's run as kcols[kofs + k].
        const int64_t kofs = t.kbeg - excl;
        const int kfromik = t.kcols == ik.cols ? 1 : 0;
        int prev_owner = -1;
        int64_t prev_pos = 0;
        for (int64_t base = 0; base < total; base += 32) {
            const int64_t k = base + lane;
            // Owner: the last lane whose first lookup is <= k. Lanes with
            // no lookups share their successor's start, so the last such
            // lane is always one that has lookups.
            int owner = 0;
#pragma unroll
            for (int s = 16; s > 0; s >>= 1) {
                const int64_t ex = __shfl_sync(TG_FULL_MASK, excl, owner + s);
                if (ex <= k) owner += s;
            }
            const int64_t okofs = __shfl_sync(TG_FULL_MASK, kofs, owner);
            const int64_t otbeg = __shfl_sync(TG_FULL_MASK, t.tbeg, owner);
            const int64_t otend = __shfl_sync(TG_FULL_MASK, t.tend, owner);
            const int ofromik = __shfl_sync(TG_FULL_MASK, kfromik, owner);
            if (k >= total) continue;
            const uint32_t *kc = ofromik ? ik.cols : jk.cols;
            const uint32_t *tc = ofromik ? jk.cols : ik.cols;
            const uint32_t key = __ldg(kc + okofs + k);
            const int64_t lo = owner == prev_owner ? prev_pos : otbeg;
            bool found;
            prev_pos = tg_search(tc, lo, otend, key, &found);
            prev_owner = owner;
            count += found;
        }
    }
    tg_block_add(count, out);
}

static std::atomic<int> trix_occupancy{0};

cudaError_t tg_kernel_trix(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                           unsigned long long *d_count) {
    if (ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0) return cudaSuccess;
    const bool self = ij == ik && ik == jk && ij->upper;
    const int64_t warps = (ij->nnz + 31) / 32;
    const int64_t blocks = (warps * 32 + kTrixThreads - 1) / kTrixThreads;
    const unsigned grid = tg_grid_for(tg_trix_kernel, kTrixThreads, env, blocks, &trix_occupancy);
    tg_trix_kernel<<<grid, kTrixThreads, 0, env->stream>>>(*ij, *ik, *jk, self, d_count);
    return cudaGetLastError();
}
