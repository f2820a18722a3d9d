// Block slots: device copies of CSR blocks, kept across subtasks so that a
// worker uploads a block once for all the subtasks that read it.
#include <algorithm>
#include <cstdio>

#include "tg_core.cuh"

void tg_slot_drop_index(tg_ctx *ctx, tg_slot *s) {
    tg_ctx_free(ctx, s->bm_off);
    tg_ctx_free(ctx, s->bm_bits);
    tg_ctx_free(ctx, s->erow);
    tg_ctx_free(ctx, s->rsum);
    tg_ctx_free(ctx, s->rowof);
    tg_ctx_free(ctx, s->bm_tmp);
    s->bm_off = nullptr;
    s->bm_bits = nullptr;
    s->erow = nullptr;
    s->rsum = nullptr;
    s->rowof = nullptr;
    s->bm_tmp = nullptr;
    s->bm_off_cap = s->bm_bits_cap = s->erow_cap = s->rsum_cap = s->rowof_cap = s->bm_tmp_cap = 0;
    s->blk.bm = tg_bitmap{};
    s->blk.erow = nullptr;
    s->blk.rsum = nullptr;
    s->blk.rowof = nullptr;
}

bool tg_drop_idle_indexes(tg_ctx *ctx) {
    bool freed = false;
    for (int i = 0; i < TG_MAX_SLOTS; i++) {
        if (i == ctx->active[0] || i == ctx->active[1] || i == ctx->active[2]) continue;
        tg_slot *s = &ctx->slots[i];
        if (s->bm_bits || s->bm_off || s->erow || s->rsum || s->rowof || s->bm_tmp) {
            tg_slot_drop_index(ctx, s);
            freed = true;
        }
    }
    return freed;
}

// Makes *p an index buffer of at least bytes, keeping the one it has when
// that is large enough (*cap bytes).
static cudaError_t index_buf(tg_ctx *ctx, void **p, size_t *cap, size_t bytes) {
    if (*p != nullptr && *cap >= bytes) return cudaSuccess;
    tg_ctx_free(ctx, *p);
    *p = nullptr;
    *cap = 0;
    cudaError_t e = tg_ctx_malloc(ctx, p, bytes);
    if (e != cudaSuccess) {
        *p = nullptr;
        return e;
    }
    *cap = bytes;
    return cudaSuccess;
}

static cudaError_t slot_reserve_once(tg_ctx *ctx, tg_slot *s, int64_t nrows, int64_t nnz) {
    size_t need_r = (size_t)nrows + 1, need_c = (size_t)std::max<int64_t>(nnz, 1);
    if (s->rowptr_cap < need_r) {
        tg_ctx_free(ctx, s->rowptr);
        s->rowptr = nullptr;
        s->rowptr_cap = 0;
        void *p = nullptr;
        cudaError_t e = tg_ctx_malloc(ctx, &p, need_r * sizeof(uint64_t));
        if (e != cudaSuccess) return e;
        s->rowptr = (uint64_t *)p;
        s->rowptr_cap = need_r;
    }
    if (s->cols_cap < need_c) {
        tg_ctx_free(ctx, s->cols);
        s->cols = nullptr;
        s->cols_cap = 0;
        void *p = nullptr;
        cudaError_t e = tg_ctx_malloc(ctx, &p, need_c * sizeof(uint32_t));
        if (e != cudaSuccess) return e;
        s->cols = (uint32_t *)p;
        s->cols_cap = need_c;
    }
    return cudaSuccess;
}

// A block's indexes never stand in the way of another block: when there is no
// room, the other slots' indexes and tg_count_rows' idle buffers go first.
cudaError_t tg_slot_reserve(tg_ctx *ctx, tg_slot *s, int64_t nrows, int64_t nnz) {
    cudaError_t se = tg_slot_settle(s);
    if (se != cudaSuccess) return se;
    s->loaded = false;
    // The old block's indexes are void; their buffers stay for the new one.
    s->blk.bm = tg_bitmap{};
    s->blk.erow = nullptr;
    s->blk.rsum = nullptr;
    s->blk.rowof = nullptr;
    cudaError_t e = slot_reserve_once(ctx, s, nrows, nnz);
    if (e == cudaErrorMemoryAllocation) {
        se = cudaStreamSynchronize(ctx->stream);
        if (se != cudaSuccess) return se;
        bool freed = tg_drop_idle_indexes(ctx);
        freed = tg_drop_row_buffers(ctx) || freed;
        if (freed) e = slot_reserve_once(ctx, s, nrows, nnz);
    }
    return e;
}

// The dense-row bitmap index (tg_internal.cuh), built once per load for
// the bitmap kernels (wetric) by the rule they use by default, so that a
// subtask reading the block as jk finds it ready instead of building it in
// every call. Best effort: where there is no room for it, or it would take
// more than twice the block's own bytes, the block is loaded without it and
// the kernels build what they need in scratch. The setting slot_bitmap = 0
// turns it off. Synchronizes the stream once (the layout's size).
static cudaError_t slot_build_bitmap(tg_ctx *ctx, tg_slot *s) {
    const tg_dblock &b = s->blk;
    if (b.nnz <= 0 || b.max_degree < 32 || ctx->set.slot_bitmap == 0) return cudaSuccess;
    const size_t off_bytes = ((size_t)b.nrows + 1) * sizeof(uint32_t);
    const size_t csr_bytes = ((size_t)b.nrows + 1) * sizeof(uint64_t) + (size_t)b.nnz * sizeof(uint32_t);
    cudaError_t e = index_buf(ctx, (void **)&s->bm_off, &s->bm_off_cap, off_bytes);
    if (e == cudaErrorMemoryAllocation) return cudaSuccess;
    if (e != cudaSuccess) return e;
    const size_t tmp_bytes = tg_bitmap_layout_tmp(b.nrows);
    e = index_buf(ctx, &s->bm_tmp, &s->bm_tmp_cap, tmp_bytes);
    if (e == cudaSuccess) e = tg_bitmap_layout(&b, TG_BM_RATIO, TG_BM_MINLEN, s->bm_off, s->bm_tmp, tmp_bytes, ctx->stream);
    // The layout's 64-bit total: its 32-bit offsets hold totals below 2^32
    // chunks (64 GiB of bitmaps), past which the block goes without.
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(ctx->h_count, s->bm_tmp, sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctx->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(ctx->stream);
    if (e != cudaSuccess) {
        tg_slot_drop_index(ctx, s);
        return e == cudaErrorMemoryAllocation ? cudaSuccess : e;
    }
    const unsigned long long chunks = ctx->h_count[0];
    if (chunks >= (1ull << 32)) {
        tg_slot_drop_index(ctx, s);
        return cudaSuccess;
    }
    const size_t words = (size_t)chunks * 4 + 2 * TG_BM_PAD;
    if (off_bytes + words * sizeof(uint32_t) > 2 * csr_bytes) { // not worth it: none
        tg_slot_drop_index(ctx, s);
        return cudaSuccess;
    }
    e = index_buf(ctx, (void **)&s->bm_bits, &s->bm_bits_cap, words * sizeof(uint32_t));
    if (e != cudaSuccess) {
        tg_slot_drop_index(ctx, s);
        return e == cudaErrorMemoryAllocation ? cudaSuccess : e;
    }
    uint32_t *bits = s->bm_bits + TG_BM_PAD;
    e = cudaMemsetAsync(s->bm_bits, 0, words * sizeof(uint32_t), ctx->stream);
    if (e == cudaSuccess) e = tg_bitmap_fill(&b, TG_BM_RATIO, TG_BM_MINLEN, 0, s->bm_off, bits, false, 4, ctx->stream);
    if (e != cudaSuccess) {
        tg_slot_drop_index(ctx, s);
        return e;
    }
    s->blk.bm = tg_bitmap{bits, s->bm_off, TG_BM_RATIO, TG_BM_MINLEN};
    return cudaSuccess;
}

// The edge-row index (tg_internal.cuh): 4 bytes per 256 edges. Best effort
// like the bitmaps. Enqueued only: the kernels that read it run on the same
// stream.
static cudaError_t slot_build_erow(tg_ctx *ctx, tg_slot *s) {
    const tg_dblock &b = s->blk;
    if (b.nnz <= 0 || b.nrows <= 0 || b.nrows > (int64_t(1) << 32)) return cudaSuccess;
    cudaError_t e =
        index_buf(ctx, (void **)&s->erow, &s->erow_cap, (size_t)tg_edge_rows_len(b.nnz) * sizeof(uint32_t));
    if (e != cudaSuccess) return e == cudaErrorMemoryAllocation ? cudaSuccess : e;
    e = tg_edge_rows(&b, s->erow, ctx->stream);
    if (e != cudaSuccess) {
        tg_slot_drop_index(ctx, s);
        return e;
    }
    s->blk.erow = s->erow;
    return cudaSuccess;
}

// The row-summary index (tg_internal.cuh): 16 bytes per row, for blocks
// whose positions fit 32 bits, tried once per load. Best effort and
// enqueued only, like the edge-row index.
cudaError_t tg_slot_build_rsum(tg_ctx *ctx, tg_slot *s) {
    const tg_dblock &b = s->blk;
    if (s->rsum_tried || !s->loaded) return cudaSuccess;
    s->rsum_tried = true;
    if (b.nnz <= 0 || b.nrows <= 0 || b.nrows >= TG_RSUM_MAX || b.nnz >= TG_RSUM_MAX) return cudaSuccess;
    cudaError_t e = index_buf(ctx, (void **)&s->rsum, &s->rsum_cap, (size_t)b.nrows * sizeof(uint4));
    if (e != cudaSuccess) return e == cudaErrorMemoryAllocation ? cudaSuccess : e;
    e = tg_row_summaries(&b, s->rsum, ctx->stream);
    if (e != cudaSuccess) {
        tg_slot_drop_index(ctx, s);
        return e;
    }
    s->blk.rsum = s->rsum;
    return cudaSuccess;
}

// The row-of-edge index (tg_internal.cuh): 4 bytes per edge, for blocks
// below TG_ROWOF_MAX, tried once per load. Best effort and enqueued only,
// like the edge-row index.
cudaError_t tg_slot_build_rowof(tg_ctx *ctx, tg_slot *s) {
    const tg_dblock &b = s->blk;
    if (s->rowof_tried || !s->loaded) return cudaSuccess;
    s->rowof_tried = true;
    if (b.nnz <= 0 || b.nrows <= 0 || b.nrows >= TG_ROWOF_MAX || b.nnz >= TG_ROWOF_MAX) return cudaSuccess;
    cudaError_t e = index_buf(ctx, (void **)&s->rowof, &s->rowof_cap, (size_t)b.nnz * sizeof(uint32_t));
    if (e != cudaSuccess) return e == cudaErrorMemoryAllocation ? cudaSuccess : e;
    e = tg_rows_of_edges(&b, s->rowof, ctx->stream);
    if (e != cudaSuccess) {
        tg_slot_drop_index(ctx, s);
        return e;
    }
    s->blk.rowof = s->rowof;
    return cudaSuccess;
}

// One warp per row: the checks are O(nnz) and coalesced, and warps rather
// than threads keep a hub row from serializing on one thread.
// out[0]: malformed (offsets decrease or pass nnz, column out of range or
// rows not strictly increasing), out[1]: longest row, out[2]: some column
// <= its row. No column past nnz is read.
__global__ void tg_check_block(const uint64_t *__restrict__ rowptr, const uint32_t *__restrict__ cols,
                               int64_t nrows, int64_t ncols, uint64_t nnz, unsigned long long *out) {
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    bool bad = false, notup = false;
    unsigned long long maxd = 0;
    for (int64_t r = warp; r < nrows; r += nwarps) {
        uint64_t b = rowptr[r], e = rowptr[r + 1];
        if (e < b || e > nnz) {
            bad = true;
            continue;
        }
        maxd = max(maxd, (unsigned long long)(e - b));
        if (e > b && (int64_t)cols[b] <= r) notup = true;
        for (uint64_t k = b + lane; k < e; k += 32) {
            uint32_t c = cols[k];
            if ((int64_t)c >= ncols) bad = true;
            if (k + 1 < e && cols[k + 1] <= c) bad = true;
        }
    }
    bad = __any_sync(0xffffffffu, bad);
    notup = __any_sync(0xffffffffu, notup);
    for (int o = 16; o > 0; o >>= 1) maxd = max(maxd, __shfl_xor_sync(0xffffffffu, maxd, o));
    if (lane == 0) {
        if (bad) atomicOr(&out[0], 1ull);
        if (maxd) atomicMax(&out[1], maxd);
        if (notup) atomicOr(&out[2], 1ull);
    }
}

int32_t tg_slot_finish(tg_ctx *ctx, tg_slot *s, char *err, uint64_t errlen) {
    cudaError_t e;
    if ((e = cudaMemsetAsync(ctx->d_count, 0, 4 * sizeof(unsigned long long), ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_load_block: memset");
    if (s->blk.nrows > 0) {
        int64_t threads = 256;
        int64_t blocks = (s->blk.nrows * 32 + threads - 1) / threads;
        blocks = std::min<int64_t>(blocks, (int64_t)ctx->env.sm_count * 16);
        tg_check_block<<<(unsigned)blocks, (unsigned)threads, 0, ctx->stream>>>(
            s->rowptr, s->cols, s->blk.nrows, s->blk.ncols, (uint64_t)s->blk.nnz, ctx->d_count);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return tg_cuda_status(e, err, errlen, "tg_load_block: check kernel launch");
    }
    if ((e = cudaMemcpyAsync(ctx->h_count, ctx->d_count, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                             ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_load_block: copy check result");
    if ((e = cudaStreamSynchronize(ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_load_block: check kernel");
    if (ctx->h_count[0] != 0) {
        tg_set_err(err, errlen,
                   "tg_load_block: malformed block (a column >= ncols %lld, or a row not strictly increasing)",
                   (long long)s->blk.ncols);
        return TG_ERR_INVALID;
    }
    s->blk.max_degree = (int64_t)ctx->h_count[1];
    s->upper = ctx->h_count[2] == 0;
    s->blk.upper = s->upper ? 1 : 0;
    s->blk.rowptr = s->rowptr;
    s->blk.cols = s->cols;
    s->blk.bm = tg_bitmap{};
    s->blk.erow = nullptr;
    s->blk.rsum = nullptr;
    s->blk.rowof = nullptr;
    // Built at the first count that reads them (tg_slot_build_rsum, _rowof).
    s->rsum_tried = false;
    s->rowof_tried = false;
    if ((e = slot_build_bitmap(ctx, s)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_load_block: bitmap index");
    if ((e = slot_build_erow(ctx, s)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_load_block: edge-row index");
    s->loaded = true;
    return TG_OK;
}

cudaError_t tg_slot_settle(tg_slot *s) {
    if (!s->pending) return cudaSuccess;
    s->pending = false;
    return cudaEventSynchronize(s->copied);
}

int32_t tg_slot_complete(tg_ctx *ctx, int32_t slot, char *err, uint64_t errlen) {
    tg_slot *s = &ctx->slots[slot];
    if (!s->pending) return TG_OK;
    s->pending = false;
    cudaError_t e = cudaStreamWaitEvent(ctx->stream, s->copied, 0);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_load_block (async): wait for the copy");
    return tg_slot_finish(ctx, s, err, errlen);
}

// One load of tg_load_block (async false: copied on the kernels' stream and
// finished before returning; true: copied on the copy stream and left
// pending). name prefixes the messages.
static int32_t load_block(tg_ctx *ctx, int32_t slot, const uint64_t *rowptr, int64_t nrows, const uint32_t *cols,
                          int64_t nnz, int64_t ncols, bool async, const char *name, char *err, uint64_t errlen) {
    if (ctx == nullptr) {
        tg_set_err(err, errlen, "%s: context is NULL", name);
        return TG_ERR_INVALID;
    }
    if (slot < 0 || slot >= TG_MAX_SLOTS) {
        tg_set_err(err, errlen, "%s: slot %d out of range [0, %d)", name, slot, TG_MAX_SLOTS);
        return TG_ERR_INVALID;
    }
    if (nrows < 0 || nnz < 0 || ncols < 0 || ncols > (int64_t(1) << 32)) {
        tg_set_err(err, errlen, "%s: bad sizes nrows=%lld nnz=%lld ncols=%lld", name, (long long)nrows,
                   (long long)nnz, (long long)ncols);
        return TG_ERR_INVALID;
    }
    if ((nrows > 0 && rowptr == nullptr) || (nnz > 0 && cols == nullptr)) {
        tg_set_err(err, errlen, "%s: NULL array for a non-empty block", name);
        return TG_ERR_INVALID;
    }
    if (nrows > 0 && (rowptr[0] != 0 || rowptr[nrows] != (uint64_t)nnz)) {
        tg_set_err(err, errlen, "%s: offsets run from %llu to %llu, want 0 to nnz=%lld", name,
                   (unsigned long long)rowptr[0], (unsigned long long)rowptr[nrows], (long long)nnz);
        return TG_ERR_INVALID;
    }
    if (nrows == 0 && nnz != 0) {
        tg_set_err(err, errlen, "%s: %lld columns but no rows", name, (long long)nnz);
        return TG_ERR_INVALID;
    }
    char where[64];
    cudaError_t e;
    if ((e = cudaSetDevice(ctx->device)) != cudaSuccess) {
        snprintf(where, sizeof where, "%s: cudaSetDevice", name);
        return tg_cuda_status(e, err, errlen, where);
    }
    tg_slot *s = &ctx->slots[slot];
    if ((e = tg_slot_reserve(ctx, s, nrows, nnz)) != cudaSuccess) {
        snprintf(where, sizeof where, "%s: slot allocation", name);
        return tg_cuda_status(e, err, errlen, where);
    }
    cudaStream_t st = async ? ctx->copy : ctx->stream;
    if (nrows > 0) {
        e = cudaMemcpyAsync(s->rowptr, rowptr, (size_t)(nrows + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice, st);
    } else {
        e = cudaMemsetAsync(s->rowptr, 0, sizeof(uint64_t), st);
    }
    if (e != cudaSuccess) {
        snprintf(where, sizeof where, "%s: copy offsets", name);
        return tg_cuda_status(e, err, errlen, where);
    }
    if (nnz > 0 &&
        (e = cudaMemcpyAsync(s->cols, cols, (size_t)nnz * sizeof(uint32_t), cudaMemcpyHostToDevice, st)) !=
            cudaSuccess) {
        snprintf(where, sizeof where, "%s: copy columns", name);
        return tg_cuda_status(e, err, errlen, where);
    }
    s->blk = tg_dblock{};
    s->blk.nrows = nrows;
    s->blk.nnz = nnz;
    s->blk.ncols = ncols;
    if (!async) return tg_slot_finish(ctx, s, err, errlen);
    if (s->copied == nullptr && (e = cudaEventCreateWithFlags(&s->copied, cudaEventDisableTiming)) != cudaSuccess) {
        s->copied = nullptr;
        snprintf(where, sizeof where, "%s: cudaEventCreate", name);
        return tg_cuda_status(e, err, errlen, where);
    }
    if ((e = cudaEventRecord(s->copied, st)) != cudaSuccess) {
        snprintf(where, sizeof where, "%s: cudaEventRecord", name);
        return tg_cuda_status(e, err, errlen, where);
    }
    s->pending = true;
    return TG_OK;
}

extern "C" int32_t tg_load_block(tg_ctx *ctx, int32_t slot, const uint64_t *rowptr, int64_t nrows,
                                 const uint32_t *cols, int64_t nnz, int64_t ncols, int32_t async, char *err,
                                 uint64_t errlen) {
    if (async != 0 && async != 1) {
        tg_set_err(err, errlen, "tg_load_block: async %d: want 0 or 1", (int)async);
        return TG_ERR_INVALID;
    }
    return load_block(ctx, slot, rowptr, nrows, cols, nnz, ncols, async == 1,
                      async ? "tg_load_block (async)" : "tg_load_block", err, errlen);
}

extern "C" int32_t tg_load_wait(tg_ctx *ctx, int32_t slot, char *err, uint64_t errlen) {
    if (ctx == nullptr || slot < 0 || slot >= TG_MAX_SLOTS) {
        tg_set_err(err, errlen, "tg_load_wait: bad context or slot %d", slot);
        return TG_ERR_INVALID;
    }
    cudaError_t e;
    if ((e = cudaSetDevice(ctx->device)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_load_wait: cudaSetDevice");
    return tg_slot_complete(ctx, slot, err, errlen);
}

int32_t tg_subtask_blocks(tg_ctx *ctx, const char *name, const int32_t slots[3], const tg_dblock **ij,
                          const tg_dblock **ik, const tg_dblock **jk, char *err, uint64_t errlen) {
    cudaError_t e;
    if ((e = cudaSetDevice(ctx->device)) != cudaSuccess) {
        char where[64];
        snprintf(where, sizeof where, "%s: cudaSetDevice", name);
        return tg_cuda_status(e, err, errlen, where);
    }
    for (int i = 0; i < 3; i++) {
        if (slots[i] < 0 || slots[i] >= TG_MAX_SLOTS) continue;
        const int32_t rc = tg_slot_complete(ctx, slots[i], err, errlen);
        if (rc != TG_OK) return rc;
    }
    for (int i = 0; i < 3; i++) {
        if (slots[i] < 0 || slots[i] >= TG_MAX_SLOTS || !ctx->slots[slots[i]].loaded) {
            tg_set_err(err, errlen, "%s: slot %d is not loaded", name, slots[i]);
            return TG_ERR_INVALID;
        }
    }
    *ij = &ctx->slots[slots[0]].blk;
    *ik = &ctx->slots[slots[1]].blk;
    *jk = &ctx->slots[slots[2]].blk;
    const tg_dblock *a = *ij, *b = *ik, *c = *jk;
    if (a->nrows != b->nrows || a->ncols != c->nrows || b->ncols != c->ncols) {
        tg_set_err(err, errlen,
                   "%s: index spaces disagree: ij %lldx%lld, ik %lldx%lld, jk %lldx%lld (want ij.rows=ik.rows, "
                   "ij.cols=jk.rows, ik.cols=jk.cols)",
                   name, (long long)a->nrows, (long long)a->ncols, (long long)b->nrows, (long long)b->ncols,
                   (long long)c->nrows, (long long)c->ncols);
        return TG_ERR_INVALID;
    }
    return TG_OK;
}

extern "C" int32_t tg_host_register(void *p, uint64_t bytes, char *err, uint64_t errlen) {
    if (p == nullptr || bytes == 0) {
        tg_set_err(err, errlen, "tg_host_register: empty range");
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaHostRegister(p, (size_t)bytes, cudaHostRegisterPortable | cudaHostRegisterMapped);
    if (e != cudaSuccess) {
        cudaGetLastError();
        tg_set_err(err, errlen, "tg_host_register: %llu bytes at %p: %s", (unsigned long long)bytes, p,
                   cudaGetErrorString(e));
        if (e == cudaErrorMemoryAllocation) return TG_ERR_OOM;
        return e == cudaErrorHostMemoryAlreadyRegistered || e == cudaErrorInvalidValue ? TG_ERR_INVALID : TG_ERR_CUDA;
    }
    return TG_OK;
}

extern "C" int32_t tg_host_unregister(void *p, char *err, uint64_t errlen) {
    if (p == nullptr) {
        tg_set_err(err, errlen, "tg_host_unregister: NULL");
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaHostUnregister(p);
    if (e != cudaSuccess) {
        cudaGetLastError();
        tg_set_err(err, errlen, "tg_host_unregister: %p: %s", p, cudaGetErrorString(e));
        return e == cudaErrorHostMemoryNotRegistered || e == cudaErrorInvalidValue ? TG_ERR_INVALID : TG_ERR_CUDA;
    }
    return TG_OK;
}

extern "C" int32_t tg_free_block(tg_ctx *ctx, int32_t slot, char *err, uint64_t errlen) {
    if (ctx == nullptr || slot < 0 || slot >= TG_MAX_SLOTS) {
        tg_set_err(err, errlen, "tg_free_block: bad context or slot %d", slot);
        return TG_ERR_INVALID;
    }
    cudaError_t e;
    if ((e = cudaSetDevice(ctx->device)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_free_block: cudaSetDevice");
    if ((e = cudaStreamSynchronize(ctx->stream)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_free_block: synchronize");
    tg_slot *s = &ctx->slots[slot];
    if ((e = tg_slot_settle(s)) != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_free_block: pending copy");
    tg_slot_drop_index(ctx, s);
    tg_ctx_free(ctx, s->rowptr);
    tg_ctx_free(ctx, s->cols);
    const cudaEvent_t copied = s->copied;
    *s = tg_slot{};
    s->copied = copied;
    return TG_OK;
}
