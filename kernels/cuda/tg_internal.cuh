// Internal contract between the library core (context, slots, tg_count
// dispatch) and the kernels. Not part of the public C ABI (trigrid.h).
//
// A subtask is three device-resident CSR blocks. For every edge (u, v) of
// ij, count |ik.row(u) ∩ jk.row(v)|. Index spaces: rows of ij and ik are
// I-local; columns of ij and rows of jk are J-local; columns of ik and jk are
// K-local. For the whole graph all three are the same block. Rows are sorted
// ascending without duplicates.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cuda_runtime.h>

// Integer from the environment, or dflt when unset or not a number. Kernels
// read their tuning overrides (TG_<KERNEL>_<KNOB>) through it at each call,
// so a measurement can sweep a knob without rebuilding; every setting is
// exact, only speed changes.
static inline long tg_env_long(const char *name, long dflt) {
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end = nullptr;
    const long v = strtol(s, &end, 10);
    return (end && *end == 0) ? v : dflt;
}

struct tg_dblock {
    const uint64_t *rowptr; // nrows + 1 entries, device memory
    const uint32_t *cols;   // nnz entries, device memory
    int64_t nrows;
    int64_t nnz;
    int64_t ncols;
    int64_t max_degree;     // longest row, computed at load
    // 1 when every column is greater than its row (a diagonal block of a
    // forward graph, or the whole forward graph). When the core passes the
    // same tg_dblock pointer as ij, ik and jk and upper is set, the keys of
    // edge (u, v) are all > v, so a kernel may search only the part of
    // row u after the edge itself (GroupTC's first optimization).
    int32_t upper;
};

struct tg_kernel_env {
    cudaStream_t stream;
    int device;
    int sm_count;
    size_t shared_mem_per_block_optin;
    // Returns device scratch of at least `bytes`, reused across calls and
    // grown on demand (contents undefined). cudaErrorMemoryAllocation means
    // the subtask does not fit; the caller maps it to TG_ERR_OOM.
    cudaError_t (*scratch)(struct tg_kernel_env *env, int which, size_t bytes, void **out);
    void *ctx; // opaque, for scratch()
};

// Every kernel has this signature. It must leave the triangle count of the
// subtask in *d_count (device memory, zeroed by the caller), enqueue all work
// on env->stream, and return the first CUDA error it sees. Everything it
// does per subtask (including per-subtask preprocessing) is inside the timed
// region.
typedef cudaError_t (*tg_kernel_fn)(const tg_dblock *ij, const tg_dblock *ik,
                                    const tg_dblock *jk, tg_kernel_env *env,
                                    unsigned long long *d_count);

cudaError_t tg_kernel_polak(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);
cudaError_t tg_kernel_trix(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);
cudaError_t tg_kernel_grouptc(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);
cudaError_t tg_kernel_trust(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);
cudaError_t tg_kernel_wetric(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);
