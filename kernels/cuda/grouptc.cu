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
// shorter.
//
// Preconditions (tg_internal.cuh): three CSR blocks with sorted,
// duplicate-free rows; ij.nrows == ik.nrows, ij.ncols == jk.nrows,
// ik.ncols == jk.ncols. Index spaces: for edge (u, v) of ij, u indexes rows
// of ik (I-local) and v rows of jk (J-local); keys and tables are K-local.
// Optimization (1) needs u's list and v's list in one index space with
// every key of v's list > v, which holds only when ij, ik and jk are one
// upper block; otherwise whole rows are intersected. Exact for any blocks,
// including empty ones and hub rows.
#include <cub/block/block_scan.cuh>

#include "tg_kcommon.cuh"

static constexpr int kGroupThreads = 256;

__global__ void __launch_bounds__(kGroupThreads) tg_grouptc_kernel(tg_dblock ij, tg_dblock ik, tg_dblock jk,
                                                                   bool self, unsigned long long *out) {
    typedef cub::BlockScan<long long, kGroupThreads> Scan;
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ long long s_excl[kGroupThreads];
    __shared__ long long s_kofs[kGroupThreads];
    __shared__ long long s_tbeg[kGroupThreads];
    __shared__ long long s_tend[kGroupThreads];
    __shared__ unsigned char s_kfromik[kGroupThreads];
    __shared__ long long s_rows[2];
    __shared__ long long s_total;

    const int tid = threadIdx.x;
    const int64_t m = ij.nnz;
    const int64_t nchunks = (m + kGroupThreads - 1) / kGroupThreads;
    unsigned long long count = 0;
    int64_t rmin = 0;
    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const int64_t e0 = c * kGroupThreads;
        const int64_t elast = min(e0 + kGroupThreads - 1, m - 1);
        if (tid < 2) s_rows[tid] = tg_row_search(ij.rowptr, rmin, ij.nrows, tid == 0 ? e0 : elast);
        __syncthreads();
        const int64_t r0 = s_rows[0], r1 = s_rows[1];
        rmin = r1;
        const int64_t e = e0 + tid;
        tg_task t{};
        if (e <= elast) {
            const int64_t u = tg_row_search(ij.rowptr, r0, r1 + 1, e);
            t = tg_edge_task(ij, ik, jk, self, e, u, false);
        }
        long long excl, total;
        Scan(scan_tmp).ExclusiveSum((long long)t.klen, excl, total);
        s_excl[tid] = excl;
        s_kofs[tid] = t.kbeg - excl;
        s_tbeg[tid] = t.tbeg;
        s_tend[tid] = t.tend;
        s_kfromik[tid] = t.kcols == ik.cols ? 1 : 0;
        if (tid == 0) s_total = total;
        __syncthreads();
        total = s_total;
        int prev_owner = -1;
        int64_t prev_pos = 0;
        for (int64_t k = tid; k < total; k += kGroupThreads) {
            // Owner edge: the last slot whose first key is <= k (empty
            // edges share their successor's start and are never chosen).
            int owner = 0;
#pragma unroll
            for (int s = kGroupThreads / 2; s > 0; s >>= 1) {
                if (s_excl[owner + s] <= k) owner += s;
            }
            const bool kfromik = s_kfromik[owner] != 0;
            const uint32_t *kc = kfromik ? ik.cols : jk.cols;
            const uint32_t *tc = kfromik ? jk.cols : ik.cols;
            const uint32_t key = __ldg(kc + s_kofs[owner] + k);
            const int64_t lo = owner == prev_owner ? prev_pos : s_tbeg[owner];
            bool found;
            prev_pos = tg_search(tc, lo, s_tend[owner], key, &found);
            prev_owner = owner;
            count += found;
        }
        __syncthreads(); // the next chunk rewrites the shared arrays
    }
    tg_block_add(count, out);
}

static std::atomic<int> grouptc_occupancy{0};

cudaError_t tg_kernel_grouptc(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                              unsigned long long *d_count) {
    if (ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0) return cudaSuccess;
    const bool self = ij == ik && ik == jk && ij->upper;
    const int64_t chunks = (ij->nnz + kGroupThreads - 1) / kGroupThreads;
    const unsigned grid = tg_grid_for(tg_grouptc_kernel, kGroupThreads, env, chunks, &grouptc_occupancy);
    tg_grouptc_kernel<<<grid, kGroupThreads, 0, env->stream>>>(*ij, *ik, *jk, self, d_count);
    return cudaGetLastError();
}
