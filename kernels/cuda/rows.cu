// tg_count_rows: subtasks that share a JK resident in a slot, their IJ and
// IK streamed from host memory in row ranges, each range copied, rebased
// and checked on the copy stream while the kernel counts the one before.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "tg_core.cuh"
#include "tg_profile.h"
#include "tg_rows.h"

static_assert(sizeof(tg_ctx::rows) / sizeof(tg_ctx::rows[0]) == TG_ROWS_SETS, "one buffer set per TG_ROWS_SETS");

#ifdef TG_PROFILE
// The measuring build's sums over every call of the process (tg_profile.h
// states what it prints).
namespace {
struct rows_trace {
    double enqueue = 0, wait = 0, launch = 0, tail = 0, setup = 0, copy_ms = 0, kernel_ms = 0;
    double bytes = 0;
    long calls = 0, ranges = 0, reallocs = 0;
    cudaEvent_t c0[TG_ROWS_SETS] = {}, c1[TG_ROWS_SETS] = {};
    double overlap_ms = 0, span_ms = 0;
    int shown = 0;
    // Per range of the current call: copy start, end, kernel start, end;
    // base is recorded on the kernels' stream when the call starts.
    std::vector<cudaEvent_t> ev;
    cudaEvent_t base = nullptr;
} g_trace;

cudaEvent_t trace_ev(size_t i) {
    while (g_trace.ev.size() <= i) {
        cudaEvent_t e;
        cudaEventCreate(&e);
        g_trace.ev.push_back(e);
    }
    return g_trace.ev[i];
}

// The bytes of rows [lo, hi) of a block: offsets and columns.
double trace_bytes(const uint64_t *rowptr, uint64_t lo, uint64_t hi) {
    return (double)(hi - lo + 1) * 8 + 4.0 * (double)(rowptr[hi] - rowptr[lo]);
}

// A call starts on the kernels' stream st.
void trace_call_begin(cudaStream_t st) {
    if (!g_trace.base) cudaEventCreate(&g_trace.base);
    cudaEventRecord(g_trace.base, st);
}

// Range r's copy starts on the copy stream.
void trace_copy_begin(int64_t r, cudaStream_t copy) {
    const int64_t s = r % TG_ROWS_SETS;
    if (!g_trace.c0[s]) cudaEventCreate(&g_trace.c0[s]), cudaEventCreate(&g_trace.c1[s]);
    cudaEventRecord(g_trace.c0[s], copy);
    cudaEventRecord(trace_ev(4 * (size_t)r), copy);
}

// Range r's copy of bytes is enqueued.
void trace_copy_end(int64_t r, cudaStream_t copy, double bytes) {
    cudaEventRecord(g_trace.c1[r % TG_ROWS_SETS], copy);
    cudaEventRecord(trace_ev(4 * (size_t)r + 1), copy);
    g_trace.bytes += bytes;
}

// Range r's copy is done: adds its GPU time.
void trace_copied(int64_t r) {
    float cms = 0;
    cudaEventElapsedTime(&cms, g_trace.c0[r % TG_ROWS_SETS], g_trace.c1[r % TG_ROWS_SETS]);
    g_trace.copy_ms += cms;
}

// Records event i of the call's timeline on st (4 r + 2: range r's kernel
// starts; 4 r + 3: it ends).
void trace_mark(size_t i, cudaStream_t st) { cudaEventRecord(trace_ev(i), st); }

// A call of n ranges is done on the kernels' stream: adds the copies' time
// beside the kernels and the call's span, and prints the timeline of the
// first two calls of four ranges or more.
void trace_call_end(cudaStream_t copy, int64_t n) {
    cudaStreamSynchronize(copy);
    std::vector<float> t((size_t)n * 4);
    for (size_t i = 0; i < t.size(); i++) cudaEventElapsedTime(&t[i], g_trace.base, g_trace.ev[i]);
    for (int64_t r = 0; r < n; r++) {
        const float c0 = t[4 * r], c1 = t[4 * r + 1];
        for (int64_t q = 0; q < n; q++) {
            const float lo = std::max(c0, t[4 * q + 2]), hi = std::min(c1, t[4 * q + 3]);
            if (hi > lo) g_trace.overlap_ms += hi - lo;
        }
    }
    g_trace.span_ms += t[4 * (n - 1) + 3];
    if (g_trace.shown < 2 && n >= 4) {
        g_trace.shown++;
        fprintf(stderr, "tg_count_rows timeline (ms from the call's start; copy c, kernel k):");
        for (int64_t r = 0; r < std::min<int64_t>(n, 12); r++)
            fprintf(stderr, " [%ld c %.3f-%.3f k %.3f-%.3f]", (long)r, t[4 * r], t[4 * r + 1], t[4 * r + 2],
                    t[4 * r + 3]);
        fprintf(stderr, "\n");
    }
}

void trace_print() {
    if (!g_trace.calls) return;
    fprintf(stderr,
            "tg_count_rows trace: %ld calls, %ld ranges, %ld reallocs; host s: setup %.4f enqueue %.4f wait %.4f "
            "launch %.4f tail %.4f; gpu: copies %.4f s (%.2f GB, %.1f GB/s), kernels %.4f s, copies beside "
            "kernels %.4f s, calls' GPU span %.4f s\n",
            g_trace.calls, g_trace.ranges, g_trace.reallocs, g_trace.setup, g_trace.enqueue, g_trace.wait,
            g_trace.launch, g_trace.tail, g_trace.copy_ms / 1e3, g_trace.bytes / 1e9,
            g_trace.bytes / 1e6 / (g_trace.copy_ms > 0 ? g_trace.copy_ms : 1), g_trace.kernel_ms / 1e3,
            g_trace.overlap_ms / 1e3, g_trace.span_ms / 1e3);
}
} // namespace
#endif

namespace {

// Subtracts base from n offsets (a row range's offsets start at 0).
__global__ void rebase(uint64_t *off, int64_t n, uint64_t base) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        off[i] -= base;
}

void free_sets(tg_ctx *ctx) {
    for (auto &s : ctx->rows) {
        tg_ctx_free(ctx, s.arena);
        s.arena = nullptr;
    }
    ctx->rows_cap = 0;
    ctx->rows_held = false;
}

// The bytes the sets hold now.
uint64_t held_bytes(const tg_ctx *ctx) { return ctx->rows_held ? TG_ROWS_SETS * ctx->rows_cap : 0; }

// Makes the sets hold at least need bytes each, as tg_rows_set_cap
// sizes them for budget.
cudaError_t reserve_sets(tg_ctx *ctx, uint64_t need, uint64_t budget) {
    if (ctx->rows_held && ctx->rows_cap >= need) return cudaSuccess;
    TG_PROF(g_trace.reallocs++);
    free_sets(ctx);
    const uint64_t cap = tg_rows_set_cap(need, budget);
    for (auto &s : ctx->rows) {
        cudaError_t e = tg_ctx_malloc(ctx, &s.arena, cap);
        if (e != cudaSuccess) {
            free_sets(ctx);
            return e;
        }
    }
    ctx->rows_cap = cap;
    ctx->rows_held = true;
    return cudaSuccess;
}

// One set's buffers carved from its arena for rows rows and a, b columns
// (b only when two), in tg_rows_set_bytes' layout.
struct range_bufs {
    uint64_t *ij_off = nullptr, *ik_off = nullptr;
    uint32_t *ij_cols = nullptr, *ik_cols = nullptr, *erow = nullptr;
};

range_bufs carve(void *arena, uint64_t rows, uint64_t a, uint64_t b, bool two) {
    char *p = (char *)arena;
    range_bufs r;
    r.ij_off = (uint64_t *)p;
    p += tg_rows_gran((rows + 1) * 8);
    r.ij_cols = (uint32_t *)p;
    p += tg_rows_gran((a ? a : 1) * 4);
    r.erow = (uint32_t *)p;
    p += tg_rows_gran(tg_rows_erow_len(a) * 4);
    if (two) {
        r.ik_off = (uint64_t *)p;
        p += tg_rows_gran((rows + 1) * 8);
        r.ik_cols = (uint32_t *)p;
    }
    return r;
}

cudaError_t make_events(tg_ctx *ctx) {
    if (ctx->rows_check == nullptr) {
        void *p = nullptr;
        cudaError_t e = tg_ctx_malloc(ctx, &p, TG_ROWS_CHECK_WORDS * sizeof(unsigned long long));
        if (e != cudaSuccess) return e;
        ctx->rows_check = (unsigned long long *)p;
    }
    if (ctx->rows_h_check == nullptr) {
        cudaError_t e = cudaMallocHost((void **)&ctx->rows_h_check, TG_ROWS_CHECK_WORDS * sizeof(unsigned long long));
        if (e != cudaSuccess) {
            ctx->rows_h_check = nullptr;
            return e;
        }
    }
    if (ctx->rows_stream == nullptr) {
        int least = 0, greatest = 0;
        cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
        if (e == cudaSuccess) e = cudaStreamCreateWithPriority(&ctx->rows_stream, cudaStreamNonBlocking, greatest);
        if (e != cudaSuccess) {
            ctx->rows_stream = nullptr;
            return e;
        }
    }
    for (auto &s : ctx->rows) {
        for (cudaEvent_t *ev : {&s.copied, &s.checked, &s.done}) {
            if (*ev == nullptr) {
                cudaError_t e = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
                if (e != cudaSuccess) {
                    *ev = nullptr;
                    return e;
                }
            }
        }
        for (cudaEvent_t *ev : {&s.k0, &s.k1}) {
            if (*ev == nullptr) {
                cudaError_t e = cudaEventCreate(ev);
                if (e != cudaSuccess) {
                    *ev = nullptr;
                    return e;
                }
            }
        }
    }
    return cudaSuccess;
}

// One row range [lo, hi) of one block: its host arrays and device buffers.
struct range_copy {
    const uint64_t *rowptr; // host, the whole block's
    const uint32_t *cols;
    uint64_t *d_off;
    uint32_t *d_cols;
    int64_t ncols; // the bound its columns are checked against
};

// Enqueues on st the copy of rows [lo, hi) of r.
cudaError_t copy_range(const range_copy &r, uint64_t lo, uint64_t hi, cudaStream_t st) {
    const uint64_t base = r.rowptr[lo], nnz = r.rowptr[hi] - base, n = hi - lo;
    cudaError_t e = cudaMemcpyAsync(r.d_off, r.rowptr + lo, (n + 1) * 8, cudaMemcpyHostToDevice, st);
    if (e == cudaSuccess && nnz > 0)
        e = cudaMemcpyAsync(r.d_cols, r.cols + base, nnz * 4, cudaMemcpyHostToDevice, st);
    return e;
}

// Enqueues on st the rebase and check of rows [lo, hi) of r, copied,
// into out (4 words). These are kernels: enqueued after every copy of a
// range, so that no copy waits for SMs the counting kernel holds.
cudaError_t check_range(tg_ctx *ctx, const range_copy &r, uint64_t lo, uint64_t hi, unsigned long long *out,
                        cudaStream_t st) {
    const uint64_t base = r.rowptr[lo], nnz = r.rowptr[hi] - base, n = hi - lo;
    const unsigned threads = 256;
    const unsigned rb = (unsigned)std::min<uint64_t>((n + threads) / threads, (uint64_t)ctx->env.sm_count * 8);
    rebase<<<rb, threads, 0, st>>>(r.d_off, (int64_t)n + 1, base);
    const int64_t cb = std::min<int64_t>(((int64_t)n * 32 + threads - 1) / threads, (int64_t)ctx->env.sm_count * 16);
    tg_check_block<<<(unsigned)std::max<int64_t>(cb, 1), threads, 0, st>>>(r.d_off, r.d_cols, (int64_t)n, r.ncols,
                                                                         nnz, out);
    return cudaGetLastError();
}

} // namespace

bool tg_drop_row_buffers(tg_ctx *ctx) {
    const bool any = ctx->rows_held || ctx->rows_check;
    free_sets(ctx);
    tg_ctx_free(ctx, ctx->rows_check);
    ctx->rows_check = nullptr;
    return any;
}

void tg_rows_destroy(tg_ctx *ctx) {
    TG_PROF(trace_print());
    free_sets(ctx);
    tg_ctx_free(ctx, ctx->rows_check);
    ctx->rows_check = nullptr;
    if (ctx->rows_h_check) cudaFreeHost(ctx->rows_h_check);
    ctx->rows_h_check = nullptr;
    for (auto &s : ctx->rows)
        for (cudaEvent_t ev : {s.copied, s.checked, s.done, s.k0, s.k1})
            if (ev) cudaEventDestroy(ev);
    if (ctx->rows_stream) cudaStreamDestroy(ctx->rows_stream);
    ctx->rows_stream = nullptr;
}

// One row range of a call: rows [lo, hi) of subtask sub.
struct row_range {
    int32_t sub;
    uint64_t lo, hi;
};

// What the counting loop knows of one subtask: its blocks and the largest
// range's buffer sizes (how its ranges are carved).
struct sub_plan {
    range_copy ij, ik;
    bool two;
    uint64_t rows, a, b;
};

// The counting loop once the ranges and buffers are set: the ranges of
// every subtask in turn, each copied and checked while the kernel counts
// the one before, each subtask's count added in its own device word.
// Every return leaves both streams idle (no host array is read after it).
static int32_t count_ranges(tg_ctx *ctx, tg_kernel_fn fn, const char *kname, const tg_dblock *jk,
                            const sub_plan *subs, int32_t nsubs, const row_range *ranges, int64_t n,
                            uint64_t *triangles, double *kernel_ms, char *err, uint64_t errlen) {
    cudaError_t e;
    char where[96];
    unsigned long long *counts = ctx->rows_check + 8 * TG_ROWS_SETS;
    range_bufs bufs[TG_ROWS_SETS];
    // what may be where itself: the message is built in a buffer of its own.
    const auto fail = [&](cudaError_t ce, const char *what) {
        char msg[128];
        snprintf(msg, sizeof msg, "tg_count_rows: %s", what);
        cudaStreamSynchronize(ctx->copy);
        cudaStreamSynchronize(ctx->rows_stream);
        cudaStreamSynchronize(ctx->stream);
        return tg_cuda_status(ce, err, errlen, msg);
    };
    const auto enqueue = [&](int64_t r) -> cudaError_t {
        auto &s = ctx->rows[r % TG_ROWS_SETS];
        const row_range &rg = ranges[r];
        const sub_plan &sp = subs[rg.sub];
        unsigned long long *chk = ctx->rows_check + 8 * (r % TG_ROWS_SETS);
        cudaError_t ce = cudaSuccess;
        if (r >= TG_ROWS_SETS) ce = cudaStreamWaitEvent(ctx->copy, s.done, 0); // range r - TG_ROWS_SETS's kernel read these
        TG_PROF(trace_copy_begin(r, ctx->copy));
        range_bufs &bf = bufs[r % TG_ROWS_SETS];
        bf = carve(s.arena, sp.rows, sp.a, sp.b, sp.two);
        range_copy a = sp.ij, b = sp.ik;
        a.d_off = bf.ij_off;
        a.d_cols = bf.ij_cols;
        b.d_off = bf.ik_off;
        b.d_cols = bf.ik_cols;
        if (ce == cudaSuccess) ce = copy_range(a, rg.lo, rg.hi, ctx->copy);
        if (sp.two && ce == cudaSuccess) ce = copy_range(b, rg.lo, rg.hi, ctx->copy);
        TG_PROF(trace_copy_end(r, ctx->copy,
                               trace_bytes(a.rowptr, rg.lo, rg.hi) + (sp.two ? trace_bytes(b.rowptr, rg.lo, rg.hi) : 0)));
        // The checks run on their own stream, of the highest priority, so
        // that neither the next copy nor the check waits for SMs the
        // counting kernel holds.
        cudaStream_t cs = ctx->rows_stream;
        if (ce == cudaSuccess) ce = cudaEventRecord(s.copied, ctx->copy);
        if (ce == cudaSuccess) ce = cudaStreamWaitEvent(cs, s.copied, 0);
        if (ce == cudaSuccess) ce = cudaMemsetAsync(chk, 0, 8 * sizeof(unsigned long long), cs);
        if (ce == cudaSuccess) ce = check_range(ctx, a, rg.lo, rg.hi, chk, cs);
        if (sp.two && ce == cudaSuccess) ce = check_range(ctx, b, rg.lo, rg.hi, chk + 4, cs);
        if (ce == cudaSuccess)
            ce = cudaMemcpyAsync(ctx->rows_h_check + 8 * (r % TG_ROWS_SETS), chk, 8 * sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost, cs);
        if (ce == cudaSuccess) ce = cudaEventRecord(s.checked, cs);
        return ce;
    };
    const auto kernel_time = [&](int64_t r) -> cudaError_t {
        float ms = 0;
        cudaError_t ce = cudaEventElapsedTime(&ms, ctx->rows[r % TG_ROWS_SETS].k0, ctx->rows[r % TG_ROWS_SETS].k1);
        if (kernel_ms) kernel_ms[ranges[r].sub] += ms;
        TG_PROF(g_trace.kernel_ms += ms);
        return ce;
    };
    TG_PROF(trace_call_begin(ctx->stream));
    if ((e = cudaMemsetAsync(counts, 0, (size_t)nsubs * sizeof(unsigned long long), ctx->stream)) != cudaSuccess)
        return fail(e, "memset");
    // The copies run TG_ROWS_SETS - 1 ranges ahead of the kernel.
    const int64_t ahead = TG_ROWS_SETS - 1;
    for (int64_t r = 0; r < std::min<int64_t>(ahead, n); r++)
        if ((e = enqueue(r)) != cudaSuccess) return fail(e, "copy a row range");
    for (int64_t r = 0; r < n; r++) {
        TG_PROF_AT(t_enq);
        if (r + ahead < n && (e = enqueue(r + ahead)) != cudaSuccess) return fail(e, "copy a row range");
        TG_PROF_ADD(g_trace.enqueue, t_enq);
        TG_PROF(g_trace.ranges++);
        auto &s = ctx->rows[r % TG_ROWS_SETS];
        const row_range &rg = ranges[r];
        const sub_plan &sp = subs[rg.sub];
        TG_PROF_AT(t_wait);
        if ((e = cudaEventSynchronize(s.checked)) != cudaSuccess) return fail(e, "copy or check a row range");
        TG_PROF_ADD(g_trace.wait, t_wait);
        TG_PROF(trace_copied(r));
        TG_PROF_AT(t_launch);
        const unsigned long long *h = ctx->rows_h_check + 8 * (r % TG_ROWS_SETS);
        if (h[0] != 0 || (sp.two && h[4] != 0)) {
            cudaStreamSynchronize(ctx->copy);
            cudaStreamSynchronize(ctx->rows_stream);
            cudaStreamSynchronize(ctx->stream);
            tg_set_err(err, errlen,
                       "tg_count_rows: subtask %d: malformed %s in rows [%llu, %llu) (offsets decrease or pass the "
                       "columns, a column >= %lld, or a row not strictly increasing)",
                       rg.sub, h[0] != 0 ? "ij" : "ik", (unsigned long long)rg.lo, (unsigned long long)rg.hi,
                       (long long)(h[0] != 0 ? sp.ij.ncols : sp.ik.ncols));
            return TG_ERR_INVALID;
        }
        // Range r - TG_ROWS_SETS's kernel is done (the copy just checked
        // waited for it).
        if (r >= TG_ROWS_SETS && (e = kernel_time(r - TG_ROWS_SETS)) != cudaSuccess)
            return fail(e, "cudaEventElapsedTime");
        tg_dblock bij{}, bik{};
        const range_bufs &bf = bufs[r % TG_ROWS_SETS];
        bij.rowptr = bf.ij_off;
        bij.cols = bf.ij_cols;
        bij.nrows = (int64_t)(rg.hi - rg.lo);
        bij.nnz = (int64_t)(sp.ij.rowptr[rg.hi] - sp.ij.rowptr[rg.lo]);
        bij.ncols = sp.ij.ncols;
        bij.max_degree = (int64_t)h[1];
        if (sp.two) {
            bik.rowptr = bf.ik_off;
            bik.cols = bf.ik_cols;
            bik.nrows = bij.nrows;
            bik.nnz = (int64_t)(sp.ik.rowptr[rg.hi] - sp.ik.rowptr[rg.lo]);
            bik.ncols = sp.ik.ncols;
            bik.max_degree = (int64_t)h[5];
        }
        const tg_dblock *pij = &bij, *pik = sp.two ? &bik : &bij;
        if ((e = cudaEventRecord(s.k0, ctx->stream)) != cudaSuccess) return fail(e, "cudaEventRecord");
        TG_PROF(trace_mark(4 * (size_t)r + 2, ctx->stream));
        if (bij.nnz > 0 && pik->nnz > 0) {
            if ((e = tg_edge_rows(&bij, bf.erow, ctx->stream)) != cudaSuccess) return fail(e, "edge-row index");
            bij.erow = bf.erow;
            ctx->timing = true; // the range's events time it; env->begin records nothing
            e = fn(pij, pik, jk, &ctx->env, counts + rg.sub);
            if (e == cudaErrorNotSupported) {
                cudaGetLastError();
                cudaStreamSynchronize(ctx->copy);
                cudaStreamSynchronize(ctx->rows_stream);
                cudaStreamSynchronize(ctx->stream);
                tg_set_err(err, errlen, "tg_count_rows: kernel %s is not built into this library", kname);
                return TG_ERR_NOT_BUILT;
            }
            if (e == cudaSuccess) e = cudaGetLastError();
            if (e != cudaSuccess) {
                snprintf(where, sizeof where, "kernel %s", kname);
                return fail(e, where);
            }
        }
        if ((e = cudaEventRecord(s.k1, ctx->stream)) != cudaSuccess) return fail(e, "cudaEventRecord");
        TG_PROF(trace_mark(4 * (size_t)r + 3, ctx->stream));
        if ((e = cudaEventRecord(s.done, ctx->stream)) != cudaSuccess) return fail(e, "cudaEventRecord");
        TG_PROF_ADD(g_trace.launch, t_launch);
    }
    TG_PROF_AT(t_tail);
    if ((e = cudaMemcpyAsync(ctx->rows_h_check + 8 * TG_ROWS_SETS, counts, (size_t)nsubs * sizeof(unsigned long long),
                             cudaMemcpyDeviceToHost, ctx->stream)) != cudaSuccess)
        return fail(e, "copy result");
    if ((e = cudaStreamSynchronize(ctx->stream)) != cudaSuccess) {
        snprintf(where, sizeof where, "kernel %s (run)", kname);
        return fail(e, where);
    }
    TG_PROF_ADD(g_trace.tail, t_tail);
    TG_PROF(g_trace.calls++);
    TG_PROF(trace_call_end(ctx->copy, n));
    for (int64_t r = std::max<int64_t>(n - TG_ROWS_SETS, 0); r < n; r++)
        if ((e = kernel_time(r)) != cudaSuccess) return fail(e, "cudaEventElapsedTime");
    for (int32_t i = 0; i < nsubs; i++) triangles[i] = (uint64_t)ctx->rows_h_check[8 * TG_ROWS_SETS + i];
    return TG_OK;
}

extern "C" int32_t tg_count_rows(tg_ctx *ctx, int32_t kernel, int32_t slot_jk, const tg_rows_subtask *subs,
                                 int32_t nsubs, uint64_t *triangles, double *kernel_ms, int64_t *parts, char *err,
                                 uint64_t errlen) {
    if (ctx == nullptr || subs == nullptr || triangles == nullptr) {
        tg_set_err(err, errlen, "tg_count_rows: NULL context, subtasks or results");
        return TG_ERR_INVALID;
    }
    if (nsubs < 1 || nsubs > TG_ROWS_MAX_SUBTASKS) {
        tg_set_err(err, errlen, "tg_count_rows: %d subtasks, want 1 to %d", nsubs, TG_ROWS_MAX_SUBTASKS);
        return TG_ERR_INVALID;
    }
    for (int32_t i = 0; i < nsubs; i++) {
        triangles[i] = 0;
        if (kernel_ms) kernel_ms[i] = 0;
    }
    if (parts) *parts = 0;
    tg_kernel_fn fn = tg_kernel_by_id(kernel);
    if (fn == nullptr) {
        tg_set_err(err, errlen, "tg_count_rows: unknown kernel id %d (the caller chooses a kernel)", kernel);
        return TG_ERR_INVALID;
    }
    for (int32_t i = 0; i < nsubs; i++) {
        const tg_rows_subtask &t = subs[i];
        if (tg_rows_malformed(&t)) {
            tg_set_err(err, errlen,
                       "tg_count_rows: subtask %d: malformed ij or ik (nrows=%lld; offsets must start at 0, columns "
                       "given when there are any)",
                       i, (long long)t.nrows);
            return TG_ERR_INVALID;
        }
    }
    if (slot_jk < 0 || slot_jk >= TG_MAX_SLOTS) {
        tg_set_err(err, errlen, "tg_count_rows: slot %d out of range [0, %d)", slot_jk, TG_MAX_SLOTS);
        return TG_ERR_INVALID;
    }
    cudaError_t e;
    if ((e = cudaSetDevice(ctx->device)) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_count_rows: cudaSetDevice");
    int32_t rc = tg_slot_complete(ctx, slot_jk, err, errlen);
    if (rc != TG_OK) return rc;
    if (!ctx->slots[slot_jk].loaded) {
        tg_set_err(err, errlen, "tg_count_rows: slot %d is not loaded", slot_jk);
        return TG_ERR_INVALID;
    }
    const tg_dblock *jk = &ctx->slots[slot_jk].blk;
    if (jk->nnz == 0) return TG_OK;
    const int32_t slots[3] = {slot_jk, slot_jk, slot_jk};
    const tg_active_guard guard(ctx, slots);
    TG_PROF_AT(t_setup);
    if ((e = make_events(ctx)) != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_count_rows: set-up");
    // The budget: what is free with the sets' buffers given back, less a
    // sixteenth of the limit for the kernel's scratch.
    const uint64_t free_bytes = ctx->limit - ctx->used + held_bytes(ctx);
    const uint64_t reserve = ctx->limit / 16;
    const uint64_t budget = free_bytes > reserve ? free_bytes - reserve : 0;
    std::vector<uint64_t> cuts(TG_ROWS_MAX_PARTS + 1);
    std::vector<sub_plan> plans((size_t)nsubs);
    std::vector<row_range> ranges;
    uint64_t need = 0;
    for (int32_t i = 0; i < nsubs; i++) {
        const tg_rows_subtask &t = subs[i];
        sub_plan &sp = plans[(size_t)i];
        sp.two = t.ik_rowptr != nullptr;
        sp.ij = range_copy{t.ij_rowptr, t.ij_cols, nullptr, nullptr, jk->nrows};
        sp.ik = sp.two ? range_copy{t.ik_rowptr, t.ik_cols, nullptr, nullptr, jk->ncols} : sp.ij;
        if (tg_rows_empty(&t)) continue;
        const int64_t n = tg_rows_plan(t.ij_rowptr, t.ik_rowptr, (uint64_t)t.nrows, budget, cuts.data(), &sp.rows,
                                       &sp.a, &sp.b);
        if (n < 0) {
            tg_set_err(err, errlen, "tg_count_rows: subtask %d: malformed ij or ik (offsets run backwards)", i);
            return TG_ERR_INVALID;
        }
        if (n == 0) {
            tg_set_err(err, errlen,
                       "tg_count_rows: out of device memory: %llu bytes free beside jk cannot hold its row ranges "
                       "of subtask %d's ij and ik (%lld rows)",
                       (unsigned long long)free_bytes, i, (long long)t.nrows);
            return TG_ERR_OOM;
        }
        need = std::max<uint64_t>(need, tg_rows_set_bytes(sp.rows, sp.a, sp.b, sp.two));
        for (int64_t c = 0; c < n; c++) ranges.push_back(row_range{i, cuts[(size_t)c], cuts[(size_t)c + 1]});
    }
    if (ranges.empty()) return TG_OK;
    if ((e = reserve_sets(ctx, need, budget)) == cudaErrorMemoryAllocation) {
        tg_set_err(err, errlen,
                   "tg_count_rows: out of device memory: %llu bytes free beside jk cannot hold %d sets of %llu bytes",
                   (unsigned long long)free_bytes, TG_ROWS_SETS, (unsigned long long)need);
        return TG_ERR_OOM;
    }
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_count_rows: row-range buffers");
    if (parts) *parts = (int64_t)ranges.size();
    TG_PROF_ADD(g_trace.setup, t_setup);
    return count_ranges(ctx, fn, tg_kernel_name(kernel), jk, plans.data(), nsubs, ranges.data(), (int64_t)ranges.size(),
                        triangles, kernel_ms, err, errlen);
}
