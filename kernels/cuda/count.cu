// tg_count: checks a subtask's three slots, runs one kernel on the context's
// stream between two CUDA events, and returns the count and the event time.
#include <cstdio>

#include "tg_core.cuh"

static const char *const kernel_names[TG_KERNEL_COUNT] = {"", "polak", "trix", "grouptc", "trust", "wetric"};

const char *tg_kernel_name(int32_t k) { return k >= 0 && k < TG_KERNEL_COUNT ? kernel_names[k] : "?"; }

tg_kernel_fn tg_kernel_by_id(int32_t k) {
    switch (k) {
    case TG_KERNEL_POLAK: return tg_kernel_polak;
    case TG_KERNEL_TRIX: return tg_kernel_trix;
    case TG_KERNEL_GROUPTC: return tg_kernel_grouptc;
    case TG_KERNEL_TRUST: return tg_kernel_trust;
    case TG_KERNEL_WETRIC: return tg_kernel_wetric;
    default: return nullptr;
    }
}

extern "C" int32_t tg_count(tg_ctx *ctx, int32_t kernel, int32_t slot_ij, int32_t slot_ik, int32_t slot_jk,
                            uint64_t *triangles, double *kernel_ms, char *err, uint64_t errlen) {
    if (ctx == nullptr || triangles == nullptr) {
        tg_set_err(err, errlen, "tg_count: NULL context or result pointer");
        return TG_ERR_INVALID;
    }
    *triangles = 0;
    if (kernel_ms) *kernel_ms = 0;
    if (kernel < TG_KERNEL_POLAK || kernel >= TG_KERNEL_COUNT) {
        tg_set_err(err, errlen, "tg_count: unknown kernel id %d (the caller chooses a kernel)", kernel);
        return TG_ERR_INVALID;
    }
    // Asynchronous loads still pending complete first, outside the
    // timed region: they are the upload's work, not the subtask's.
    const int32_t slots[3] = {slot_ij, slot_ik, slot_jk};
    const tg_dblock *ij, *ik, *jk;
    const int32_t rc = tg_subtask_blocks(ctx, "tg_count", slots, &ij, &ik, &jk, err, errlen);
    if (rc != TG_OK) return rc;
    const tg_active_guard guard(ctx, slots);
    tg_kernel_fn fn = tg_kernel_by_id(kernel);
    if (fn == nullptr) {
        tg_set_err(err, errlen, "tg_count: kernel id %d has no implementation", kernel);
        return TG_ERR_INTERNAL;
    }
    // The result word is zeroed before the timer starts (an 8-byte memset
    // is not the subtask's work). The kernel starts the timer itself after
    // its host-side setup (tg_kernel_env.begin); scratch growth inside it
    // synchronizes and is timed: it is part of the subtask's GPU work.
    cudaError_t e;
    // wetric with 32-bit positions reads IK's and JK's row-summary
    // indexes and IJ's row-of-edge index: built at the first count that
    // reads them, outside the timed region like the indexes built at load.
    if (kernel == TG_KERNEL_WETRIC && ctx->set.wetric_narrow != 0) {
        for (int i = 1; i < 3; i++) {
            if ((e = tg_slot_build_rsum(ctx, &ctx->slots[slots[i]])) != cudaSuccess)
                return tg_cuda_status(e, err, errlen, "tg_count: row-summary index");
        }
        if ((e = tg_slot_build_rowof(ctx, &ctx->slots[slots[0]])) != cudaSuccess)
            return tg_cuda_status(e, err, errlen, "tg_count: row-of-edge index");
    }
    if ((e = cudaMemsetAsync(ctx->d_count, 0, sizeof(unsigned long long), ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count: memset");
    ctx->timing = false;
    const bool empty = ij->nnz == 0 || ik->nnz == 0 || jk->nnz == 0;
    if (!empty) {
        e = fn(ij, ik, jk, &ctx->env, ctx->d_count);
        if (e == cudaErrorNotSupported) {
            cudaGetLastError();
            tg_set_err(err, errlen, "tg_count: kernel %s is not built into this library", kernel_names[kernel]);
            return TG_ERR_NOT_BUILT;
        }
        if (e == cudaSuccess) e = cudaGetLastError();
        if (e != cudaSuccess) {
            char where[64];
            snprintf(where, sizeof where, "tg_count: kernel %s", kernel_names[kernel]);
            return tg_cuda_status(e, err, errlen, where);
        }
    }
    // A kernel that enqueued nothing (an empty block) never started it.
    if (!ctx->timing && (e = cudaEventRecord(ctx->ev_start, ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count: cudaEventRecord");
    if ((e = cudaEventRecord(ctx->ev_stop, ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count: cudaEventRecord");
    if ((e = cudaMemcpyAsync(ctx->h_count, ctx->d_count, sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                             ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count: copy result");
    if ((e = cudaStreamSynchronize(ctx->stream)) != cudaSuccess) {
        char where[64];
        snprintf(where, sizeof where, "tg_count: kernel %s (run)", kernel_names[kernel]);
        return tg_cuda_status(e, err, errlen, where);
    }
    float ms = 0;
    if ((e = cudaEventElapsedTime(&ms, ctx->ev_start, ctx->ev_stop)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count: cudaEventElapsedTime");
    *triangles = (uint64_t)ctx->h_count[0];
    if (kernel_ms) *kernel_ms = (double)ms;
    return TG_OK;
}
