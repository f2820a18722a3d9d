// polak: one thread per edge, two-pointer merge.
//
// Paper: A. Polak, "Counting triangles in large graphs on GPU" (IPDPSW 2016),
// section 3.3: thread i takes edges i, i + T, ... and merges the two
// adjacency lists of each edge sequentially.
//
// Preconditions (tg_internal.cuh): three CSR blocks with sorted,
// duplicate-free rows; ij.nrows == ik.nrows, ij.ncols == jk.nrows,
// ik.ncols == jk.ncols. Index spaces: for edge (u, v) of ij, u indexes rows
// of ik (I-local) and v rows of jk (J-local); the merged lists are both
// K-local. Any blocks work, including empty ones and hub rows.
//
// Differences from the paper, all exact: edges are taken in warp-sized runs
// (32 consecutive edges per warp, so a warp reads consecutive edges and
// rows), the edge's row comes from a bounded search of the offsets instead of
// a stored COO row array, and when the subtask is one upper block (the whole
// forward graph or a diagonal block) only row u's tail after v is merged.
#include "tg_kcommon.cuh"

static constexpr int kPolakThreads = 256;

__global__ void __launch_bounds__(kPolakThreads) tg_polak_kernel(tg_dblock ij, tg_dblock ik, tg_dblock jk,
                                                                 bool self, unsigned long long *out) {
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int64_t m = ij.nnz;
    unsigned long long count = 0;
    int64_t rmin = 0;
    for (int64_t e0 = warp * 32; e0 < m; e0 += nwarps * 32) {
        const int64_t elast = min(e0 + 31, m - 1);
        const int64_t u = tg_warp_rows(ij.rowptr, ij.nrows, rmin, e0, elast, lane);
        rmin = __shfl_sync(TG_FULL_MASK, u, 31); // rows only grow along the edges
        const int64_t e = e0 + lane;
        if (e > elast) continue;
        const tg_task t = tg_edge_task(ij, ik, jk, self, e, u, true);
        if (t.klen == 0) continue;
        int64_t i = t.kbeg, j = t.tbeg;
        const int64_t ie = t.kbeg + t.klen, je = t.tend;
        // Disjoint ranges need no merge.
        if (__ldg(t.kcols + ie - 1) < __ldg(t.tcols + j) || __ldg(t.tcols + je - 1) < __ldg(t.kcols + i)) continue;
        uint32_t x = __ldg(t.kcols + i), y = __ldg(t.tcols + j);
        for (;;) {
            if (x < y) {
                if (++i == ie) break;
                x = __ldg(t.kcols + i);
            } else if (x > y) {
                if (++j == je) break;
                y = __ldg(t.tcols + j);
            } else {
                count++;
                if (++i == ie || ++j == je) break;
                x = __ldg(t.kcols + i);
                y = __ldg(t.tcols + j);
            }
        }
    }
    tg_block_add(count, out);
}

static std::atomic<int> polak_occupancy{0};

cudaError_t tg_kernel_polak(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                            unsigned long long *d_count) {
    if (ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0) return cudaSuccess;
    const bool self = ij == ik && ik == jk && ij->upper;
    const int64_t warps = (ij->nnz + 31) / 32;
    const int64_t blocks = (warps * 32 + kPolakThreads - 1) / kPolakThreads;
    const unsigned grid = tg_grid_for(tg_polak_kernel, kPolakThreads, env, blocks, &polak_occupancy);
    cudaError_t err = env->begin(env);
    if (err != cudaSuccess) return err;
    tg_polak_kernel<<<grid, kPolakThreads, 0, env->stream>>>(*ij, *ik, *jk, self, d_count);
    return cudaGetLastError();
}

// Per-vertex mode: the same merge, which knows the position of every
// common element in both rows. The edge's own count goes to u, v (and the
// edge) once; each triangle adds to x (and to the edges (u, x), (v, x))
// by a global atomic: auto runs polak only on small, sparse subtasks, where
// these adds are few and spread out.
__global__ void __launch_bounds__(kPolakThreads) tg_polak_local_kernel(tg_dblock ij, tg_dblock ik, tg_dblock jk,
                                                                       bool self, tg_local loc,
                                                                       unsigned long long *out) {
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int64_t m = ij.nnz;
    const bool per_edge = loc.eij != nullptr;
    unsigned long long count = 0;
    int64_t rmin = 0;
    for (int64_t e0 = warp * 32; e0 < m; e0 += nwarps * 32) {
        const int64_t elast = min(e0 + 31, m - 1);
        const int64_t u = tg_warp_rows(ij.rowptr, ij.nrows, rmin, e0, elast, lane);
        rmin = __shfl_sync(TG_FULL_MASK, u, 31);
        const int64_t e = e0 + lane;
        if (e > elast) continue;
        const uint32_t v = __ldg(ij.cols + e);
        int64_t i = self ? e + 1 : (int64_t)__ldg(ik.rowptr + u);
        const int64_t ie = (int64_t)__ldg(ik.rowptr + u + 1);
        int64_t j = (int64_t)__ldg(jk.rowptr + v);
        const int64_t je = (int64_t)__ldg(jk.rowptr + v + 1);
        if (i >= ie || j >= je) continue;
        if (__ldg(ik.cols + ie - 1) < __ldg(jk.cols + j) || __ldg(jk.cols + je - 1) < __ldg(ik.cols + i)) continue;
        uint32_t c = 0;
        uint32_t x = __ldg(ik.cols + i), y = __ldg(jk.cols + j);
        for (;;) {
            if (x < y) {
                if (++i == ie) break;
                x = __ldg(ik.cols + i);
            } else if (x > y) {
                if (++j == je) break;
                y = __ldg(jk.cols + j);
            } else {
                c++;
                atomicAdd(loc.vk + x, 1ull);
                if (per_edge) {
                    atomicAdd(loc.eik + i, 1u);
                    atomicAdd(loc.ejk + j, 1u);
                }
                if (++i == ie || ++j == je) break;
                x = __ldg(ik.cols + i);
                y = __ldg(jk.cols + j);
            }
        }
        if (c == 0) continue;
        count += c;
        atomicAdd(loc.vi + u, (unsigned long long)c);
        atomicAdd(loc.vj + v, (unsigned long long)c);
        if (per_edge) atomicAdd(loc.eij + e, c);
    }
    tg_block_add(count, out);
}

static std::atomic<int> polak_local_occupancy{0};

cudaError_t tg_kernel_polak_local(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                                  unsigned long long *d_count, const tg_local *loc) {
    if (ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0) return cudaSuccess;
    const bool self = ij == ik && ik == jk && ij->upper;
    const int64_t warps = (ij->nnz + 31) / 32;
    const int64_t blocks = (warps * 32 + kPolakThreads - 1) / kPolakThreads;
    const unsigned grid = tg_grid_for(tg_polak_local_kernel, kPolakThreads, env, blocks, &polak_local_occupancy);
    cudaError_t err = env->begin(env);
    if (err != cudaSuccess) return err;
    tg_polak_local_kernel<<<grid, kPolakThreads, 0, env->stream>>>(*ij, *ik, *jk, self, *loc, d_count);
    return cudaGetLastError();
}
