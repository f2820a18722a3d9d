// tg_count_local: a subtask's per-vertex and per-edge counts. Checks the
// subtask as tg_count does, zeroes one device array per distinct host
// array, runs a kernel's per-vertex mode between the two CUDA events, and
// adds the device arrays into the host arrays.
#include <cstdio>
#include <cstdlib>

#include "tg_core.cuh"

namespace {

// Roles of tg_local_out, in its order: three vertex arrays, three edge arrays.
constexpr int kRoles = 6;

// Scratch buffers of the roles' device arrays (the kernels use 0 and 1).
constexpr int kScratchBase = 2;

// Host entries added per copy back.
constexpr size_t kChunk = 1 << 20;

// Adds n device counts (8 or 4 bytes each) into host array dst, a chunk
// at a time through stage (kChunk 8-byte entries).
cudaError_t add_back(uint64_t *dst, const void *src, size_t n, bool wide, uint64_t *stage, cudaStream_t stream) {
    for (size_t at = 0; at < n; at += kChunk) {
        const size_t m = n - at < kChunk ? n - at : kChunk;
        const size_t w = wide ? 8 : 4;
        cudaError_t e = cudaMemcpyAsync(stage, (const char *)src + at * w, m * w, cudaMemcpyDeviceToHost, stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess) return e;
        if (wide) {
            for (size_t i = 0; i < m; i++) dst[at + i] += stage[i];
        } else {
            const uint32_t *s = (const uint32_t *)stage;
            for (size_t i = 0; i < m; i++) dst[at + i] += s[i];
        }
    }
    return cudaSuccess;
}

} // namespace

extern "C" int32_t tg_count_local(tg_ctx *ctx, int32_t kernel, int32_t slot_ij, int32_t slot_ik, int32_t slot_jk,
                                  const tg_local_out *out, uint64_t *triangles, double *kernel_ms, char *err,
                                  uint64_t errlen) {
    if (ctx == nullptr || out == nullptr || triangles == nullptr) {
        tg_set_err(err, errlen, "tg_count_local: NULL context, output or result pointer");
        return TG_ERR_INVALID;
    }
    *triangles = 0;
    if (kernel_ms) *kernel_ms = 0;
    tg_local_fn fn = nullptr;
    const char *name = "";
    if (kernel == TG_KERNEL_POLAK) {
        fn = tg_kernel_polak_local;
        name = "polak";
    } else if (kernel == TG_KERNEL_WETRIC) {
        fn = tg_kernel_wetric_local;
        name = "wetric";
    } else {
        tg_set_err(err, errlen, "tg_count_local: kernel id %d has no per-vertex mode (polak and wetric have one)",
                   kernel);
        return TG_ERR_INVALID;
    }
    // Asynchronous loads still pending complete first, outside the
    // timed region, as in tg_count.
    const int32_t slots[3] = {slot_ij, slot_ik, slot_jk};
    const tg_dblock *ij, *ik, *jk;
    const int32_t rc = tg_subtask_blocks(ctx, "tg_count_local", slots, &ij, &ik, &jk, err, errlen);
    if (rc != TG_OK) return rc;
    const tg_active_guard guard(ctx, slots);
    uint64_t *const host[kRoles] = {out->vi, out->vj, out->vk, out->eij, out->eik, out->ejk};
    const bool per_edge = host[3] || host[4] || host[5];
    if (per_edge && (uint64_t)ij->nrows + (uint64_t)jk->nrows + (uint64_t)ik->ncols >= (1ull << 32)) {
        tg_set_err(err, errlen,
                   "tg_count_local: per-edge support of index spaces of %lld + %lld + %lld vertices may overflow "
                   "the device's 32-bit counters; count through partitions",
                   (long long)ij->nrows, (long long)jk->nrows, (long long)ik->ncols);
        return TG_ERR_INVALID;
    }
    if (ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0) return TG_OK; // no triangle, nothing to add
    const int64_t len[kRoles] = {ij->nrows, jk->nrows, ik->ncols, ij->nnz, ik->nnz, jk->nnz};
    const int nroles = per_edge ? kRoles : 3;
    // One device array per distinct host pointer of a kind (a role without
    // a host array still gets one: the kernels write every role).
    int owner[kRoles];
    int64_t n[kRoles];
    for (int r = 0; r < nroles; r++) {
        owner[r] = r;
        n[r] = len[r];
        for (int q = r < 3 ? 0 : 3; q < r; q++) {
            if (host[r] != nullptr && host[q] == host[r]) {
                owner[r] = owner[q];
                break;
            }
        }
        if (owner[r] != r && len[r] > n[owner[r]]) n[owner[r]] = len[r];
    }
    ctx->timing = false;
    // The zeroing of the arrays is the subtask's work: timed.
    cudaError_t e;
    if ((e = ctx->env.begin(&ctx->env)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count_local: cudaEventRecord");
    void *dev[kRoles] = {};
    for (int r = 0; r < nroles; r++) {
        if (owner[r] != r) continue;
        const size_t bytes = (size_t)(n[r] > 0 ? n[r] : 1) * (r < 3 ? 8 : 4);
        e = ctx->env.scratch(&ctx->env, kScratchBase + r, bytes, &dev[r]);
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            tg_set_err(err, errlen,
                       "tg_count_local: the per-vertex arrays do not fit beside the blocks (%llu bytes more for "
                       "one of them; %llu of %llu bytes held)",
                       (unsigned long long)bytes, (unsigned long long)ctx->used, (unsigned long long)ctx->limit);
            return TG_ERR_OOM;
        }
        if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_count_local: scratch");
        if ((e = cudaMemsetAsync(dev[r], 0, bytes, ctx->stream)) != cudaSuccess)
            return tg_cuda_status(e, err, errlen, "tg_count_local: memset");
    }
    for (int r = 0; r < nroles; r++) dev[r] = dev[owner[r]];
    if ((e = cudaMemsetAsync(ctx->d_count, 0, sizeof(unsigned long long), ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count_local: memset");
    tg_local loc{(unsigned long long *)dev[0], (unsigned long long *)dev[1], (unsigned long long *)dev[2],
                 per_edge ? (uint32_t *)dev[3] : nullptr, per_edge ? (uint32_t *)dev[4] : nullptr,
                 per_edge ? (uint32_t *)dev[5] : nullptr};
    e = fn(ij, ik, jk, &ctx->env, ctx->d_count, &loc);
    if (e == cudaErrorNotSupported) {
        cudaGetLastError();
        tg_set_err(err, errlen, "tg_count_local: kernel %s is not built into this library", name);
        return TG_ERR_NOT_BUILT;
    }
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        tg_set_err(err, errlen, "tg_count_local: kernel %s: out of device memory (%llu of %llu bytes held)", name,
                   (unsigned long long)ctx->used, (unsigned long long)ctx->limit);
        return TG_ERR_OOM;
    }
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
        char where[64];
        snprintf(where, sizeof where, "tg_count_local: kernel %s", name);
        return tg_cuda_status(e, err, errlen, where);
    }
    if ((e = cudaEventRecord(ctx->ev_stop, ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count_local: cudaEventRecord");
    if ((e = cudaMemcpyAsync(ctx->h_count, ctx->d_count, sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                             ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count_local: copy result");
    if ((e = cudaStreamSynchronize(ctx->stream)) != cudaSuccess) {
        char where[64];
        snprintf(where, sizeof where, "tg_count_local: kernel %s (run)", name);
        return tg_cuda_status(e, err, errlen, where);
    }
    float ms = 0;
    if ((e = cudaEventElapsedTime(&ms, ctx->ev_start, ctx->ev_stop)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count_local: cudaEventElapsedTime");
    uint64_t *stage = (uint64_t *)malloc(kChunk * sizeof(uint64_t));
    if (stage == nullptr) {
        tg_set_err(err, errlen, "tg_count_local: out of host memory for the copy back");
        return TG_ERR_OOM;
    }
    for (int r = 0; r < nroles && e == cudaSuccess; r++) {
        if (owner[r] != r || host[r] == nullptr) continue;
        e = add_back(host[r], dev[r], (size_t)n[r], r < 3, stage, ctx->stream);
    }
    free(stage);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_count_local: copy back");
    *triangles = (uint64_t)ctx->h_count[0];
    if (kernel_ms) *kernel_ms = (double)ms;
    return TG_OK;
}
