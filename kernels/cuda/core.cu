// Library core: devices, contexts, block slots, the scratch arena, and the
// tg_count dispatch with CUDA-event timing. Kernels live in their own files
// behind the contract in tg_internal.cuh.
//
// Every CUDA call is checked. A failed allocation (or one the context's
// mem_limit refuses) becomes TG_ERR_OOM with a message so that the caller can
// choose a smaller partition or the CPU; nothing aborts the process.
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>

#include "tg_core.cuh"

// ---- errors ---------------------------------------------------------------

void tg_set_err(char *err, uint64_t errlen, const char *fmt, ...) {
    if (err == nullptr || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, (size_t)errlen, fmt, ap);
    va_end(ap);
}

int32_t tg_cuda_status(cudaError_t e, char *err, uint64_t errlen, const char *where) {
    if (e == cudaSuccess) return TG_OK;
    if (e == cudaErrorMemoryAllocation) {
        tg_set_err(err, errlen, "%s: out of device memory (%s)", where, cudaGetErrorString(e));
        return TG_ERR_OOM;
    }
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice) {
        tg_set_err(err, errlen, "%s: no usable device: %s", where, cudaGetErrorString(e));
        return TG_ERR_NO_DEVICE;
    }
    tg_set_err(err, errlen, "%s: %s (%s)", where, cudaGetErrorString(e), cudaGetErrorName(e));
    return TG_ERR_CUDA;
}

// ---- accounted allocation ---------------------------------------------------

cudaError_t tg_ctx_malloc(tg_ctx *ctx, void **p, size_t bytes) {
    *p = nullptr;
    if (bytes == 0) bytes = 16;
    bytes = (bytes + 255) & ~(size_t)255;
    if (ctx->used + bytes > ctx->limit) return cudaErrorMemoryAllocation;
    cudaError_t e = cudaMalloc(p, bytes);
    if (e != cudaSuccess) {
        *p = nullptr;
        cudaGetLastError(); // allocation failures are not sticky; clear them
        return e;
    }
    ctx->used += bytes;
    if (ctx->used > ctx->peak) ctx->peak = ctx->used;
    tg_alloc_note(ctx, *p, bytes);
    return cudaSuccess;
}

void tg_ctx_free(tg_ctx *ctx, void *p) {
    if (p == nullptr) return;
    ctx->used -= tg_alloc_forget(ctx, p);
    cudaFree(p);
}

// A tiny table of live allocations so that frees are accounted without
// asking the caller for sizes. Contexts hold few buffers (slots, scratch,
// preprocessing temporaries).
void tg_alloc_note(tg_ctx *ctx, void *p, size_t bytes) {
    for (int i = 0; i < TG_MAX_ALLOCS; i++) {
        if (ctx->allocs[i].p == nullptr) {
            ctx->allocs[i].p = p;
            ctx->allocs[i].bytes = bytes;
            return;
        }
    }
    // Table full: keep the bytes accounted forever rather than lose track.
}

size_t tg_alloc_forget(tg_ctx *ctx, void *p) {
    for (int i = 0; i < TG_MAX_ALLOCS; i++) {
        if (ctx->allocs[i].p == p) {
            size_t b = ctx->allocs[i].bytes;
            ctx->allocs[i].p = nullptr;
            ctx->allocs[i].bytes = 0;
            return b;
        }
    }
    return 0;
}

// Scratch buffers are grown on demand and kept: subtasks of one job have
// similar sizes, so after the first few the arena stops allocating.
static cudaError_t scratch_cb(tg_kernel_env *env, int which, size_t bytes, void **out) {
    tg_ctx *ctx = (tg_ctx *)env->ctx;
    *out = nullptr;
    if (which < 0 || which >= TG_SCRATCH_BUFS) return cudaErrorInvalidValue;
    if (ctx->scratch_cap[which] < bytes || ctx->scratch[which] == nullptr) {
        // Wait for earlier work on the buffer before freeing it.
        cudaError_t e = cudaStreamSynchronize(ctx->stream);
        if (e != cudaSuccess) return e;
        tg_ctx_free(ctx, ctx->scratch[which]);
        ctx->scratch[which] = nullptr;
        ctx->scratch_cap[which] = 0;
        size_t want = bytes + bytes / 4;
        void *p = nullptr;
        e = tg_ctx_malloc(ctx, &p, want);
        if (e != cudaSuccess) {
            e = tg_ctx_malloc(ctx, &p, bytes);
            // Bitmap indexes of slots this subtask does not read make room
            // before the subtask is declared too large.
            if (e == cudaErrorMemoryAllocation && tg_drop_idle_indexes(ctx)) e = tg_ctx_malloc(ctx, &p, bytes);
            if (e != cudaSuccess) return e;
            want = bytes;
        }
        ctx->scratch[which] = p;
        ctx->scratch_cap[which] = want;
    }
    *out = ctx->scratch[which];
    return cudaSuccess;
}

// The start of tg_count's timed region, recorded by the kernel (see
// tg_kernel_env.begin); only the first call of a subtask counts.
static cudaError_t begin_cb(tg_kernel_env *env) {
    tg_ctx *ctx = (tg_ctx *)env->ctx;
    if (ctx->timing) return cudaSuccess;
    ctx->timing = true;
    return cudaEventRecord(ctx->ev_start, ctx->stream);
}

// ---- devices ---------------------------------------------------------------

extern "C" int32_t tg_abi_version(void) { return TG_ABI_VERSION; }

// ---- settings --------------------------------------------------------------

extern "C" void tg_settings_default(tg_settings *s) {
    if (s) tg_settings_fill_default(s);
}

extern "C" int32_t tg_ctx_set_settings(tg_ctx *ctx, const tg_settings *s, char *err, uint64_t errlen) {
    if (ctx == nullptr || s == nullptr) {
        tg_set_err(err, errlen, "tg_ctx_set_settings: NULL context or settings");
        return TG_ERR_INVALID;
    }
    const int bad = tg_settings_invalid(s);
    if (bad >= 0) {
        char valid[96];
        tg_setting_valid(bad, valid, sizeof valid);
        tg_set_err(err, errlen, "kernel setting %s=%d: want %s", tg_setting_descs[bad].name,
                   (int)*tg_setting_field((tg_settings *)s, bad), valid);
        return TG_ERR_INVALID;
    }
    ctx->set = *s;
    return TG_OK;
}

extern "C" int32_t tg_device_count(int32_t *n, char *err, uint64_t errlen) {
    if (n == nullptr) {
        tg_set_err(err, errlen, "tg_device_count: n is NULL");
        return TG_ERR_INVALID;
    }
    *n = 0;
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
        cudaGetLastError();
        return TG_OK; // no device is an answer, not a failure
    }
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "cudaGetDeviceCount");
    *n = c;
    return TG_OK;
}

extern "C" int32_t tg_device_info(int32_t device, char *name, uint64_t namelen, uint64_t *total_mem,
                                  uint64_t *free_mem, int32_t *sm_count, int32_t *cc_major,
                                  int32_t *cc_minor, char *err, uint64_t errlen) {
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_device_info: cudaGetDeviceCount");
    if (device < 0 || device >= c) {
        tg_set_err(err, errlen, "tg_device_info: device %d out of range (%d devices)", device, c);
        return TG_ERR_NO_DEVICE;
    }
    cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_device_info: cudaGetDeviceProperties");
    if (name != nullptr && namelen > 0) snprintf(name, (size_t)namelen, "%s", p.name);
    if (total_mem) *total_mem = (uint64_t)p.totalGlobalMem;
    if (sm_count) *sm_count = p.multiProcessorCount;
    if (cc_major) *cc_major = p.major;
    if (cc_minor) *cc_minor = p.minor;
    if (free_mem) {
        e = cudaSetDevice(device);
        if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_device_info: cudaSetDevice");
        size_t f = 0, t = 0;
        e = cudaMemGetInfo(&f, &t);
        if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_device_info: cudaMemGetInfo");
        *free_mem = (uint64_t)f;
    }
    return TG_OK;
}

// ---- contexts -------------------------------------------------------------

extern "C" int32_t tg_ctx_create(int32_t device, uint64_t mem_limit, tg_ctx **out, char *err,
                                 uint64_t errlen) {
    if (out == nullptr) {
        tg_set_err(err, errlen, "tg_ctx_create: out is NULL");
        return TG_ERR_INVALID;
    }
    *out = nullptr;
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_ctx_create: cudaGetDeviceCount");
    if (device < 0 || device >= c) {
        tg_set_err(err, errlen, "tg_ctx_create: device %d out of range (%d devices)", device, c);
        return TG_ERR_NO_DEVICE;
    }
    if ((e = cudaSetDevice(device)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_ctx_create: cudaSetDevice");
    tg_ctx *ctx = new (std::nothrow) tg_ctx();
    if (ctx == nullptr) {
        tg_set_err(err, errlen, "tg_ctx_create: out of host memory");
        return TG_ERR_OOM;
    }
    ctx->device = device;
    cudaDeviceProp p;
    if ((e = cudaGetDeviceProperties(&p, device)) != cudaSuccess) {
        delete ctx;
        return tg_cuda_status(e, err, errlen, "tg_ctx_create: cudaGetDeviceProperties");
    }
    size_t freeb = 0, totalb = 0;
    if ((e = cudaMemGetInfo(&freeb, &totalb)) != cudaSuccess) {
        delete ctx;
        return tg_cuda_status(e, err, errlen, "tg_ctx_create: cudaMemGetInfo");
    }
    ctx->limit = mem_limit != 0 ? mem_limit : (uint64_t)freeb - (uint64_t)totalb / 20;
    if (mem_limit == 0 && (uint64_t)freeb < (uint64_t)totalb / 20) ctx->limit = 0;
    if ((e = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        delete ctx;
        return tg_cuda_status(e, err, errlen, "tg_ctx_create: cudaStreamCreate");
    }
    if ((e = cudaStreamCreateWithFlags(&ctx->copy, cudaStreamNonBlocking)) != cudaSuccess) {
        ctx->copy = nullptr;
        tg_ctx_destroy(ctx);
        return tg_cuda_status(e, err, errlen, "tg_ctx_create: cudaStreamCreate (copies)");
    }
    if ((e = cudaEventCreate(&ctx->ev_start)) != cudaSuccess ||
        (e = cudaEventCreate(&ctx->ev_stop)) != cudaSuccess) {
        tg_ctx_destroy(ctx);
        return tg_cuda_status(e, err, errlen, "tg_ctx_create: cudaEventCreate");
    }
    void *p_count = nullptr;
    if ((e = tg_ctx_malloc(ctx, &p_count, 4 * sizeof(unsigned long long))) != cudaSuccess) {
        tg_ctx_destroy(ctx);
        return tg_cuda_status(e, err, errlen, "tg_ctx_create: counter allocation");
    }
    ctx->d_count = (unsigned long long *)p_count;
    if ((e = cudaMallocHost((void **)&ctx->h_count, 4 * sizeof(unsigned long long))) != cudaSuccess) {
        ctx->h_count = nullptr;
        tg_ctx_destroy(ctx);
        return tg_cuda_status(e, err, errlen, "tg_ctx_create: pinned counter");
    }
    ctx->env.stream = ctx->stream;
    ctx->env.device = device;
    ctx->env.sm_count = p.multiProcessorCount;
    ctx->env.shared_mem_per_block_optin = p.sharedMemPerBlockOptin;
    ctx->env.scratch = scratch_cb;
    ctx->env.begin = begin_cb;
    ctx->env.ctx = ctx;
    tg_settings_fill_default(&ctx->set);
    ctx->env.set = &ctx->set;
    *out = ctx;
    return TG_OK;
}

extern "C" void tg_ctx_destroy(tg_ctx *ctx) {
    if (ctx == nullptr) return;
    cudaSetDevice(ctx->device);
    if (ctx->stream) cudaStreamSynchronize(ctx->stream);
    if (ctx->copy) cudaStreamSynchronize(ctx->copy);
    for (int i = 0; i < TG_MAX_SLOTS; i++) {
        ctx->slots[i].pending = false;
        if (ctx->slots[i].copied) cudaEventDestroy(ctx->slots[i].copied);
        tg_slot_drop_index(ctx, &ctx->slots[i]);
        tg_ctx_free(ctx, ctx->slots[i].rowptr);
        tg_ctx_free(ctx, ctx->slots[i].cols);
    }
    for (int i = 0; i < TG_SCRATCH_BUFS; i++) tg_ctx_free(ctx, ctx->scratch[i]);
    tg_rows_destroy(ctx);
    tg_pieces_drop(ctx);
    tg_ranges_drop(ctx);
    tg_ctx_free(ctx, ctx->input);
    tg_ctx_free(ctx, ctx->d_count);
    if (ctx->h_count) cudaFreeHost(ctx->h_count);
    if (ctx->ev_start) cudaEventDestroy(ctx->ev_start);
    if (ctx->ev_stop) cudaEventDestroy(ctx->ev_stop);
    if (ctx->stream) cudaStreamDestroy(ctx->stream);
    if (ctx->copy) cudaStreamDestroy(ctx->copy);
    cudaGetLastError();
    delete ctx;
}

extern "C" int32_t tg_mem_usage(tg_ctx *ctx, uint64_t *used, uint64_t *limit, uint64_t *peak) {
    if (ctx == nullptr) return TG_ERR_INVALID;
    if (used) *used = ctx->used;
    if (limit) *limit = ctx->limit;
    if (peak) *peak = ctx->peak;
    return TG_OK;
}
