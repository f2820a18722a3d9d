// grouptc: edge chunks per thread block, binary-search intersection.
//
// Paper: "A Comparative Study of Intersection-Based Triangle Counting
// Algorithms on GPUs", section V (GroupTC): a block of n threads takes n
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
// The kernel is tg_isect.cuh's with groups of one block (a chunk of 256
// edges): one block per chunk, so the hardware scheduler balances chunks of
// uneven cost. Settings (trigrid.h): grouptc_ratio, grouptc_window,
// grouptc_spread, grouptc_minb.
#include "tg_isect.cuh"

cudaError_t tg_kernel_grouptc(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                              unsigned long long *d_count) {
    const tg_settings &s = *env->set;
    const tg_isect::Settings set{s.grouptc_ratio, s.grouptc_window, s.grouptc_spread, s.grouptc_minb};
    return tg_isect::run<256>(ij, ik, jk, set, env, d_count);
}
