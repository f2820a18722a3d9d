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
// The kernel is tg_isect.cuh's with groups of one warp: a warp per edge
// would leave most lanes idle on degree-ordered graphs, where most lists are
// a few entries long, so a warp takes 32 consecutive edges at once and deals
// out the lookups of all of them (a prefix sum of per-edge lookup counts): a
// long list still uses the whole warp as in the paper, short ones share it.
// Warps are independent after the block's single setup barrier, so the
// hardware balances uneven runs. Settings (trigrid.h): trix_ratio,
// trix_window, trix_spread, trix_minb.
#include "tg_isect.cuh"

cudaError_t tg_kernel_trix(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                           unsigned long long *d_count) {
    const tg_settings &s = *env->set;
    const tg_isect::Settings set{s.trix_ratio, s.trix_window, s.trix_spread, s.trix_minb};
    return tg_isect::run<32>(ij, ik, jk, set, env, d_count);
}
