/* libtrigrid_ref.so: the trigrid C ABI on the CPU. It reports one fake
 * device named "reference" and counts with a plain merge, so that the Go
 * loader, slot reuse, error paths and the mem_limit (TG_ERR_OOM) can be
 * tested where there is no GPU. It accounts device memory as the CUDA
 * library does (trigrid.h, tg_ctx_create): 256-byte granules, the context's
 * own 256 bytes, a slot's offsets and columns as two allocations kept and
 * reused while large enough; it builds no indexes and needs no scratch.
 * Built with -DTG_REF_MEMORY=BYTES the fake device has that much memory
 * (default 4 GiB), so that a test can run on a device of a given size;
 * with -DTG_REF_DEVICES=N it reports N such devices (default 1), for the
 * tests of a worker that counts on several;
 * with -DTG_REF_ABI=N it reports ABI version N, for the loader's mismatch
 * test. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ref.h"
#include "tg_rows.h"
#include "tg_settings.h"

#ifndef TG_REF_ABI
#define TG_REF_ABI TG_ABI_VERSION
#endif

#ifndef TG_REF_MEMORY
#define TG_REF_MEMORY (1ull << 32)
#endif
#ifndef TG_REF_DEVICES
#define TG_REF_DEVICES 1
#endif
#define REF_MEMORY ((uint64_t)(TG_REF_MEMORY)) /* what the fake device has */

typedef struct {
    tg_cpu_csr csr;
    int loaded;
    /* pending: an asynchronous tg_load_block whose arrays are read when the load
     * completes (slot_complete), as the copy engine reads them after the
     * CUDA library's call returns, so that tests catch a caller that
     * changes or frees them too early. */
    int pending;
    const uint64_t *p_rowptr;
    const uint32_t *p_cols;
    uint64_t rowptr_cap, cols_cap; /* entries the "device" buffers hold */
} ref_slot;

/* A copy tg_input_copy_async enqueued: read when the input is consumed,
 * as the copy engine reads registered memory after the call returns. */
typedef struct {
    uint64_t offset, bytes;
    const void *src;
} ref_copy;

struct tg_ctx {
    uint64_t limit, used, peak;
    ref_slot slots[TG_MAX_SLOTS];
    /* The input buffer (tg_input_alloc), its size and pending copies. */
    unsigned char *input;
    uint64_t input_bytes, input_copied;
    ref_copy *copies;
    size_t ncopies, capcopies;
    tg_settings set; /* checked and kept like the CUDA library's; unused by the merge */
    /* tg_count_rows' sets of row-range buffers, accounted as the CUDA
     * library allocates them (tg_rows.h), and its check words. */
    uint64_t rows_cap; /* bytes of each set (tg_rows_set_cap) */
    int rows_held, rows_check;
    /* tg_pieces_begin's work area: the vertex words, two key buffers of
     * pc_cap items and the accounted bytes of all of it. */
    uint32_t *pc_vert;
    uint64_t *pc_ids, *pc_a, *pc_b;
    uint64_t pc_cap, pc_nvert, pc_bytes, pc_id_words;
    /* tg_ranges_begin's work area (accounted bytes; nothing is copied
     * into it) and the graph's registered host columns. */
    const uint32_t *rg_cols;
    uint64_t rg_bytes, rg_nnz, rg_nvert;
    uint32_t rg_ratio;
};

static void set_err(char *err, uint64_t errlen, const char *fmt, ...) {
    if (err == NULL || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, (size_t)errlen, fmt, ap);
    va_end(ap);
}

/* The CUDA library's accounted size of an allocation of n bytes. */
static uint64_t alloc_bytes(uint64_t n) {
    if (n == 0) n = 16;
    return (n + 255) & ~(uint64_t)255;
}

/* Accounts an allocation of n bytes, as tg_ctx_malloc does. */
static int ref_alloc(tg_ctx *ctx, uint64_t n) {
    uint64_t b = alloc_bytes(n);
    if (ctx->used + b > ctx->limit) return 0;
    ctx->used += b;
    if (ctx->used > ctx->peak) ctx->peak = ctx->used;
    return 1;
}

/* Host ranges registered by tg_host_register, kept so that tests catch a
 * caller that registers overlapping ranges, unregisters one it did not
 * register, or unregisters one that a pending load still reads. */
typedef struct {
    const char *lo, *hi;
    int pending; /* pending loads reading an array inside the range */
} ref_range;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static ref_range *reg;
static size_t nreg, capreg;

/* Adds d to the pending loads of the registered range holding p, if any. */
static void reg_pending(const void *p, int d) {
    if (p == NULL) return;
    pthread_mutex_lock(&reg_mu);
    for (size_t i = 0; i < nreg; i++)
        if ((const char *)p >= reg[i].lo && (const char *)p < reg[i].hi) {
            reg[i].pending += d;
            break;
        }
    pthread_mutex_unlock(&reg_mu);
}

/* Whether a host copy of [p, p + bytes) would be refused as the CUDA
 * runtime refuses it (invalid argument): the range overlaps a registered
 * range without lying inside it, or spans several. */
static int reg_straddles(const void *p, uint64_t bytes) {
    if (p == NULL || bytes == 0) return 0;
    const char *lo = (const char *)p, *hi = lo + bytes;
    int bad = 0;
    pthread_mutex_lock(&reg_mu);
    for (size_t i = 0; i < nreg && !bad; i++)
        if (lo < reg[i].hi && hi > reg[i].lo && (lo < reg[i].lo || hi > reg[i].hi)) bad = 1;
    pthread_mutex_unlock(&reg_mu);
    return bad;
}

/* Drops the slot's pending load, if it has one, without reading it. */
static void slot_unpend(ref_slot *s) {
    if (s->pending) {
        reg_pending(s->p_rowptr, -1);
        reg_pending(s->p_cols, -1);
    }
    s->pending = 0;
}

/* Gives up the slot's "device" buffers. */
static void slot_release(tg_ctx *ctx, ref_slot *s) {
    if (s->rowptr_cap) ctx->used -= alloc_bytes(s->rowptr_cap * 8);
    if (s->cols_cap) ctx->used -= alloc_bytes(s->cols_cap * 4);
    s->rowptr_cap = s->cols_cap = 0;
    tg_cpu_csr_free(&s->csr);
    s->loaded = 0;
    slot_unpend(s);
}

/* The bytes tg_count_rows' buffers hold. */
static uint64_t rows_held_bytes(const tg_ctx *ctx) {
    return ctx->rows_held ? TG_ROWS_SETS * ctx->rows_cap : 0;
}

/* Gives up tg_count_rows' buffers and check words; reports whether there
 * were any. */
static int rows_drop(tg_ctx *ctx) {
    const int any = ctx->rows_held || ctx->rows_check;
    if (ctx->rows_check) ctx->used -= alloc_bytes(TG_ROWS_CHECK_WORDS * sizeof(uint64_t));
    ctx->rows_check = 0;
    if (!ctx->rows_held) return any;
    ctx->used -= rows_held_bytes(ctx);
    ctx->rows_held = 0;
    ctx->rows_cap = 0;
    return 1;
}

/* Makes tg_count_rows' sets hold need bytes each (reserve_sets in
 * rows.cu): kept when large enough, else sized by tg_rows_set_cap. */
static int rows_reserve(tg_ctx *ctx, uint64_t need, uint64_t budget) {
    if (ctx->rows_held && ctx->rows_cap >= need) return 1;
    if (ctx->rows_held) ctx->used -= rows_held_bytes(ctx);
    ctx->rows_held = 0;
    ctx->rows_cap = 0;
    const uint64_t cap = tg_rows_set_cap(need, budget);
    if (ctx->used + TG_ROWS_SETS * cap > ctx->limit) return 0;
    ctx->used += TG_ROWS_SETS * cap;
    if (ctx->used > ctx->peak) ctx->peak = ctx->used;
    ctx->rows_cap = cap;
    ctx->rows_held = 1;
    return 1;
}

static int slot_reserve_once(tg_ctx *ctx, ref_slot *s, int64_t nrows, int64_t nnz);

/* Makes room for nrows + 1 offsets and max(nnz, 1) columns, keeping
 * buffers that are large enough (tg_slot_reserve in slots.cu: when there is
 * no room, tg_count_rows' idle buffers go first). */
static int slot_reserve(tg_ctx *ctx, ref_slot *s, int64_t nrows, int64_t nnz) {
    if (slot_reserve_once(ctx, s, nrows, nnz)) return 1;
    return rows_drop(ctx) && slot_reserve_once(ctx, s, nrows, nnz);
}

static int slot_reserve_once(tg_ctx *ctx, ref_slot *s, int64_t nrows, int64_t nnz) {
    uint64_t need_r = (uint64_t)nrows + 1, need_c = nnz > 0 ? (uint64_t)nnz : 1;
    slot_unpend(s);
    tg_cpu_csr_free(&s->csr);
    s->loaded = 0;
    if (s->rowptr_cap < need_r) {
        if (s->rowptr_cap) ctx->used -= alloc_bytes(s->rowptr_cap * 8);
        s->rowptr_cap = 0;
        if (!ref_alloc(ctx, need_r * 8)) return 0;
        s->rowptr_cap = need_r;
    }
    if (s->cols_cap < need_c) {
        if (s->cols_cap) ctx->used -= alloc_bytes(s->cols_cap * 4);
        s->cols_cap = 0;
        if (!ref_alloc(ctx, need_c * 4)) return 0;
        s->cols_cap = need_c;
    }
    return 1;
}

int32_t tg_abi_version(void) { return TG_REF_ABI; }

void tg_settings_default(tg_settings *s) {
    if (s) tg_settings_fill_default(s);
}

int32_t tg_ctx_set_settings(tg_ctx *ctx, const tg_settings *s, char *err, uint64_t errlen) {
    if (ctx == NULL || s == NULL) {
        set_err(err, errlen, "tg_ctx_set_settings: NULL context or settings");
        return TG_ERR_INVALID;
    }
    int bad = tg_settings_invalid(s);
    if (bad >= 0) {
        char valid[96];
        tg_setting_valid(bad, valid, sizeof valid);
        set_err(err, errlen, "kernel setting %s=%d: want %s", tg_setting_descs[bad].name,
                (int)*tg_setting_field((tg_settings *)s, bad), valid);
        return TG_ERR_INVALID;
    }
    ctx->set = *s;
    return TG_OK;
}

int32_t tg_device_count(int32_t *n, char *err, uint64_t errlen) {
    if (n == NULL) {
        set_err(err, errlen, "tg_device_count: n is NULL");
        return TG_ERR_INVALID;
    }
    *n = TG_REF_DEVICES;
    return TG_OK;
}

int32_t tg_device_info(int32_t device, char *name, uint64_t namelen, uint64_t *total_mem, uint64_t *free_mem,
                       int32_t *sm_count, int32_t *cc_major, int32_t *cc_minor, char *err, uint64_t errlen) {
    if (device < 0 || device >= TG_REF_DEVICES) {
        set_err(err, errlen, "tg_device_info: device %d out of range (%d device%s)", device, TG_REF_DEVICES,
                TG_REF_DEVICES == 1 ? "" : "s");
        return TG_ERR_NO_DEVICE;
    }
    if (name && namelen) snprintf(name, (size_t)namelen, "reference");
    if (total_mem) *total_mem = REF_MEMORY;
    if (free_mem) *free_mem = REF_MEMORY;
    if (sm_count) *sm_count = 1;
    if (cc_major) *cc_major = 0;
    if (cc_minor) *cc_minor = 0;
    return TG_OK;
}

int32_t tg_ctx_create(int32_t device, uint64_t mem_limit, tg_ctx **out, char *err, uint64_t errlen) {
    if (out == NULL) {
        set_err(err, errlen, "tg_ctx_create: out is NULL");
        return TG_ERR_INVALID;
    }
    *out = NULL;
    if (device < 0 || device >= TG_REF_DEVICES) {
        set_err(err, errlen, "tg_ctx_create: device %d out of range (%d device%s)", device, TG_REF_DEVICES,
                TG_REF_DEVICES == 1 ? "" : "s");
        return TG_ERR_NO_DEVICE;
    }
    tg_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        set_err(err, errlen, "tg_ctx_create: out of host memory");
        return TG_ERR_OOM;
    }
    ctx->limit = mem_limit ? mem_limit : REF_MEMORY;
    tg_settings_fill_default(&ctx->set);
    if (!ref_alloc(ctx, 4 * sizeof(uint64_t))) { /* the result words */
        free(ctx);
        set_err(err, errlen, "tg_ctx_create: counter allocation: out of device memory");
        return TG_ERR_OOM;
    }
    *out = ctx;
    return TG_OK;
}

static void input_drop(tg_ctx *ctx);
static void pieces_drop(tg_ctx *ctx);
static void ranges_drop(tg_ctx *ctx);

void tg_ctx_destroy(tg_ctx *ctx) {
    if (ctx == NULL) return;
    for (int i = 0; i < TG_MAX_SLOTS; i++) slot_release(ctx, &ctx->slots[i]);
    rows_drop(ctx);
    input_drop(ctx);
    pieces_drop(ctx);
    ranges_drop(ctx);
    free(ctx->copies);
    free(ctx);
}

/* Checks a block's rows (what the CUDA library's check kernel checks),
 * reading no column past rowptr[nrows]. */
static int32_t check_rows(const uint64_t *rowptr, int64_t nrows, const uint32_t *cols, int64_t ncols,
                          const char *name, char *err, uint64_t errlen) {
    for (int64_t r = 0; r < nrows; r++) {
        if (rowptr[r + 1] < rowptr[r] || rowptr[r + 1] > rowptr[nrows]) {
            set_err(err, errlen, "%s: offsets decrease at row %lld", name, (long long)r);
            return TG_ERR_INVALID;
        }
        for (uint64_t k = rowptr[r]; k < rowptr[r + 1]; k++) {
            if ((int64_t)cols[k] >= ncols || (k > rowptr[r] && cols[k - 1] >= cols[k])) {
                set_err(err, errlen, "%s: malformed row %lld", name, (long long)r);
                return TG_ERR_INVALID;
            }
        }
    }
    return TG_OK;
}

/* Copies a checked block into the slot's host "device" copy. */
static int32_t slot_copy(ref_slot *s, const uint64_t *rowptr, int64_t nrows, const uint32_t *cols, int64_t nnz,
                         int64_t ncols, const char *name, char *err, uint64_t errlen) {
    tg_cpu_csr c = {0};
    c.nrows = nrows;
    c.nnz = nnz;
    c.ncols = ncols;
    c.rowptr = malloc((size_t)(nrows + 1) * sizeof(uint64_t));
    c.cols = malloc((size_t)(nnz + 1) * sizeof(uint32_t));
    if (c.rowptr == NULL || c.cols == NULL) {
        tg_cpu_csr_free(&c);
        set_err(err, errlen, "%s: out of host memory", name);
        return TG_ERR_OOM;
    }
    if (nrows > 0) memcpy(c.rowptr, rowptr, (size_t)(nrows + 1) * sizeof(uint64_t));
    else c.rowptr[0] = 0;
    if (nnz > 0) memcpy(c.cols, cols, (size_t)nnz * sizeof(uint32_t));
    s->csr = c;
    s->loaded = 1;
    return TG_OK;
}

/* Completes a pending load: reads the caller's arrays now. */
static int32_t slot_complete(ref_slot *s, char *err, uint64_t errlen) {
    if (!s->pending) return TG_OK;
    slot_unpend(s);
    const char *name = "tg_load_block (async)";
    int32_t rc = check_rows(s->p_rowptr, s->csr.nrows, s->p_cols, s->csr.ncols, name, err, errlen);
    if (rc == TG_OK && s->csr.nrows > 0 && s->p_rowptr[s->csr.nrows] != (uint64_t)s->csr.nnz) {
        set_err(err, errlen, "%s: the offsets changed before the load completed", name);
        rc = TG_ERR_INVALID;
    }
    if (rc == TG_OK) rc = slot_copy(s, s->p_rowptr, s->csr.nrows, s->p_cols, s->csr.nnz, s->csr.ncols, name, err, errlen);
    s->p_rowptr = NULL;
    s->p_cols = NULL;
    return rc;
}

/* tg_load_block: copied and checked now (async 0), or when the load
 * completes (async 1). */
static int32_t load_block(tg_ctx *ctx, int32_t slot, const uint64_t *rowptr, int64_t nrows, const uint32_t *cols,
                          int64_t nnz, int64_t ncols, int async, const char *name, char *err, uint64_t errlen) {
    if (ctx == NULL || slot < 0 || slot >= TG_MAX_SLOTS) {
        set_err(err, errlen, "%s: bad context or slot %d", name, slot);
        return TG_ERR_INVALID;
    }
    if (nrows < 0 || nnz < 0 || ncols < 0 || ncols > (1ll << 32) || (nrows == 0 && nnz != 0) ||
        (nrows > 0 && (rowptr == NULL || rowptr[0] != 0 || rowptr[nrows] != (uint64_t)nnz)) ||
        (nnz > 0 && cols == NULL)) {
        set_err(err, errlen, "%s: malformed block (nrows=%lld nnz=%lld ncols=%lld)", name, (long long)nrows,
                (long long)nnz, (long long)ncols);
        return TG_ERR_INVALID;
    }
    ref_slot *s = &ctx->slots[slot];
    slot_unpend(s);
    if (!async) {
        int32_t rc = check_rows(rowptr, nrows, cols, ncols, name, err, errlen);
        if (rc != TG_OK) return rc;
    }
    if (!slot_reserve(ctx, s, nrows, nnz)) {
        set_err(err, errlen, "%s: slot allocation: out of device memory (%llu of %llu bytes in use)", name,
                (unsigned long long)ctx->used, (unsigned long long)ctx->limit);
        return TG_ERR_OOM;
    }
    if (!async) return slot_copy(s, rowptr, nrows, cols, nnz, ncols, name, err, errlen);
    s->csr.nrows = nrows;
    s->csr.nnz = nnz;
    s->csr.ncols = ncols;
    s->p_rowptr = rowptr;
    s->p_cols = cols;
    s->pending = 1;
    reg_pending(rowptr, 1);
    reg_pending(cols, 1);
    return TG_OK;
}

int32_t tg_load_block(tg_ctx *ctx, int32_t slot, const uint64_t *rowptr, int64_t nrows, const uint32_t *cols,
                      int64_t nnz, int64_t ncols, int32_t async, char *err, uint64_t errlen) {
    if (async != 0 && async != 1) {
        set_err(err, errlen, "tg_load_block: async %d: want 0 or 1", (int)async);
        return TG_ERR_INVALID;
    }
    return load_block(ctx, slot, rowptr, nrows, cols, nnz, ncols, async,
                      async ? "tg_load_block (async)" : "tg_load_block", err, errlen);
}

int32_t tg_load_wait(tg_ctx *ctx, int32_t slot, char *err, uint64_t errlen) {
    if (ctx == NULL || slot < 0 || slot >= TG_MAX_SLOTS) {
        set_err(err, errlen, "tg_load_wait: bad context or slot %d", slot);
        return TG_ERR_INVALID;
    }
    return slot_complete(&ctx->slots[slot], err, errlen);
}

int32_t tg_host_register(void *p, uint64_t bytes, char *err, uint64_t errlen) {
    if (p == NULL || bytes == 0) {
        set_err(err, errlen, "tg_host_register: empty range");
        return TG_ERR_INVALID;
    }
    const char *lo = p, *hi = lo + bytes;
    int32_t rc = TG_OK;
    pthread_mutex_lock(&reg_mu);
    for (size_t i = 0; i < nreg && rc == TG_OK; i++)
        if (lo < reg[i].hi && reg[i].lo < hi) {
            set_err(err, errlen, "tg_host_register: %llu bytes at %p overlap a registered range",
                    (unsigned long long)bytes, p);
            rc = TG_ERR_INVALID;
        }
    if (rc == TG_OK && nreg == capreg) {
        size_t c = capreg ? 2 * capreg : 64;
        ref_range *r = realloc(reg, c * sizeof *r);
        if (r == NULL) {
            set_err(err, errlen, "tg_host_register: out of host memory");
            rc = TG_ERR_OOM;
        } else {
            reg = r;
            capreg = c;
        }
    }
    if (rc == TG_OK) reg[nreg++] = (ref_range){lo, hi, 0};
    pthread_mutex_unlock(&reg_mu);
    return rc;
}

int32_t tg_host_unregister(void *p, char *err, uint64_t errlen) {
    int32_t rc = TG_ERR_INVALID;
    pthread_mutex_lock(&reg_mu);
    size_t i = 0;
    while (i < nreg && reg[i].lo != (const char *)p) i++;
    if (i == nreg) {
        set_err(err, errlen, "tg_host_unregister: %p was not registered", p);
    } else if (reg[i].pending > 0) {
        set_err(err, errlen, "tg_host_unregister: %p: %d pending loads still read it", p, reg[i].pending);
    } else {
        reg[i] = reg[--nreg];
        rc = TG_OK;
    }
    pthread_mutex_unlock(&reg_mu);
    return rc;
}

int32_t tg_free_block(tg_ctx *ctx, int32_t slot, char *err, uint64_t errlen) {
    if (ctx == NULL || slot < 0 || slot >= TG_MAX_SLOTS) {
        set_err(err, errlen, "tg_free_block: bad context or slot %d", slot);
        return TG_ERR_INVALID;
    }
    slot_release(ctx, &ctx->slots[slot]);
    return TG_OK;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The three loaded blocks of a subtask, after finishing their pending
 * loads; name (the calling entry) prefixes the error. The index spaces
 * must agree as tg_count states. */
static int32_t subtask_blocks(tg_ctx *ctx, const char *name, int32_t slot_ij, int32_t slot_ik, int32_t slot_jk,
                              const tg_cpu_csr **ij, const tg_cpu_csr **ik, const tg_cpu_csr **jk, char *err,
                              uint64_t errlen) {
    const int32_t slots[3] = {slot_ij, slot_ik, slot_jk};
    for (int i = 0; i < 3; i++) {
        if (slots[i] < 0 || slots[i] >= TG_MAX_SLOTS) continue;
        int32_t rc = slot_complete(&ctx->slots[slots[i]], err, errlen);
        if (rc != TG_OK) return rc;
    }
    for (int i = 0; i < 3; i++) {
        if (slots[i] < 0 || slots[i] >= TG_MAX_SLOTS || !ctx->slots[slots[i]].loaded) {
            set_err(err, errlen, "%s: slot %d is not loaded", name, slots[i]);
            return TG_ERR_INVALID;
        }
    }
    *ij = &ctx->slots[slot_ij].csr;
    *ik = &ctx->slots[slot_ik].csr;
    *jk = &ctx->slots[slot_jk].csr;
    if ((*ij)->nrows != (*ik)->nrows || (*ij)->ncols != (*jk)->nrows || (*ik)->ncols != (*jk)->ncols) {
        set_err(err, errlen, "%s: index spaces disagree", name);
        return TG_ERR_INVALID;
    }
    return TG_OK;
}

int32_t tg_count(tg_ctx *ctx, int32_t kernel, int32_t slot_ij, int32_t slot_ik, int32_t slot_jk,
                 uint64_t *triangles, double *kernel_ms, char *err, uint64_t errlen) {
    if (ctx == NULL || triangles == NULL) {
        set_err(err, errlen, "tg_count: NULL context or result pointer");
        return TG_ERR_INVALID;
    }
    *triangles = 0;
    if (kernel_ms) *kernel_ms = 0;
    if (kernel < TG_KERNEL_POLAK || kernel >= TG_KERNEL_COUNT) {
        set_err(err, errlen, "tg_count: unknown kernel id %d (the caller chooses a kernel)", kernel);
        return TG_ERR_INVALID;
    }
    const tg_cpu_csr *ij, *ik, *jk;
    int32_t rc = subtask_blocks(ctx, "tg_count", slot_ij, slot_ik, slot_jk, &ij, &ik, &jk, err, errlen);
    if (rc != TG_OK) return rc;
    double t0 = now_ms();
    *triangles = tg_cpu_count(ij, ik, jk);
    if (kernel_ms) *kernel_ms = now_ms() - t0;
    return TG_OK;
}

/* Rows [lo, hi) of a host block as a block of its own, offsets rebased
 * (a copy), columns shared; checked as the CUDA library checks a range
 * against ncols. */
static int32_t rows_range(const uint64_t *rowptr, const uint32_t *cols, uint64_t lo, uint64_t hi, int64_t ncols,
                          const char *which, tg_cpu_csr *out, char *err, uint64_t errlen) {
    const uint64_t base = rowptr[lo], n = hi - lo;
    out->nrows = (int64_t)n;
    out->nnz = (int64_t)(rowptr[hi] - base);
    out->ncols = ncols;
    out->cols = (uint32_t *)(cols ? cols + base : NULL);
    out->rowptr = malloc((size_t)(n + 1) * sizeof(uint64_t));
    if (out->rowptr == NULL) {
        set_err(err, errlen, "tg_count_rows: out of host memory");
        return TG_ERR_OOM;
    }
    for (uint64_t r = 0; r <= n; r++) out->rowptr[r] = rowptr[lo + r] - base;
    char name[96];
    snprintf(name, sizeof name, "tg_count_rows: malformed %s in rows [%llu, %llu)", which, (unsigned long long)lo,
             (unsigned long long)hi);
    int32_t rc = check_rows(out->rowptr, (int64_t)n, out->cols, ncols, name, err, errlen);
    if (rc != TG_OK) {
        free(out->rowptr);
        out->rowptr = NULL;
    }
    return rc;
}

int32_t tg_count_rows(tg_ctx *ctx, int32_t kernel, int32_t slot_jk, const tg_rows_subtask *subs, int32_t nsubs,
                      uint64_t *triangles, double *kernel_ms, int64_t *parts, char *err, uint64_t errlen) {
    if (ctx == NULL || subs == NULL || triangles == NULL) {
        set_err(err, errlen, "tg_count_rows: NULL context, subtasks or results");
        return TG_ERR_INVALID;
    }
    if (nsubs < 1 || nsubs > TG_ROWS_MAX_SUBTASKS) {
        set_err(err, errlen, "tg_count_rows: %d subtasks, want 1 to %d", nsubs, TG_ROWS_MAX_SUBTASKS);
        return TG_ERR_INVALID;
    }
    for (int32_t i = 0; i < nsubs; i++) {
        triangles[i] = 0;
        if (kernel_ms) kernel_ms[i] = 0;
    }
    if (parts) *parts = 0;
    if (kernel < TG_KERNEL_POLAK || kernel >= TG_KERNEL_COUNT) {
        set_err(err, errlen, "tg_count_rows: unknown kernel id %d (the caller chooses a kernel)", kernel);
        return TG_ERR_INVALID;
    }
    for (int32_t i = 0; i < nsubs; i++) {
        if (tg_rows_malformed(&subs[i])) {
            set_err(err, errlen,
                    "tg_count_rows: subtask %d: malformed ij or ik (nrows=%lld; offsets must start at 0, columns given "
                    "when there are any)",
                    i, (long long)subs[i].nrows);
            return TG_ERR_INVALID;
        }
    }
    if (slot_jk < 0 || slot_jk >= TG_MAX_SLOTS) {
        set_err(err, errlen, "tg_count_rows: slot %d out of range [0, %d)", slot_jk, TG_MAX_SLOTS);
        return TG_ERR_INVALID;
    }
    int32_t rc = slot_complete(&ctx->slots[slot_jk], err, errlen);
    if (rc != TG_OK) return rc;
    if (!ctx->slots[slot_jk].loaded) {
        set_err(err, errlen, "tg_count_rows: slot %d is not loaded", slot_jk);
        return TG_ERR_INVALID;
    }
    const tg_cpu_csr *jk = &ctx->slots[slot_jk].csr;
    if (jk->nnz == 0) return TG_OK;
    if (!ctx->rows_check) { /* the check and count words, as the CUDA library makes them */
        if (!ref_alloc(ctx, TG_ROWS_CHECK_WORDS * sizeof(uint64_t))) {
            set_err(err, errlen, "tg_count_rows: set-up: out of device memory");
            return TG_ERR_OOM;
        }
        ctx->rows_check = 1;
    }
    const uint64_t free_bytes = ctx->limit - ctx->used + rows_held_bytes(ctx);
    const uint64_t reserve = ctx->limit / 16;
    const uint64_t budget = free_bytes > reserve ? free_bytes - reserve : 0;
    uint64_t *cuts = malloc((size_t)nsubs * (TG_ROWS_MAX_PARTS + 1) * sizeof(uint64_t));
    int64_t *nparts = calloc((size_t)nsubs, sizeof(int64_t));
    if (cuts == NULL || nparts == NULL) {
        free(cuts);
        free(nparts);
        set_err(err, errlen, "tg_count_rows: out of host memory");
        return TG_ERR_OOM;
    }
    uint64_t need = 0;
    int64_t total = 0;
    for (int32_t i = 0; i < nsubs && rc == TG_OK; i++) {
        const tg_rows_subtask *t = &subs[i];
        if (tg_rows_empty(t)) continue;
        uint64_t rows, a, b;
        const int64_t n = tg_rows_plan(t->ij_rowptr, t->ik_rowptr, (uint64_t)t->nrows, budget,
                                       cuts + (size_t)i * (TG_ROWS_MAX_PARTS + 1), &rows, &a, &b);
        if (n < 0) {
            set_err(err, errlen, "tg_count_rows: subtask %d: malformed ij or ik (offsets run backwards)", i);
            rc = TG_ERR_INVALID;
        } else if (n == 0) {
            set_err(err, errlen,
                    "tg_count_rows: out of device memory: %llu bytes free beside jk cannot hold its row ranges of "
                    "subtask %d's ij and ik (%lld rows)",
                    (unsigned long long)free_bytes, i, (long long)t->nrows);
            rc = TG_ERR_OOM;
        } else {
            uint64_t x = tg_rows_set_bytes(rows, a, b, t->ik_rowptr != NULL);
            if (x > need) need = x;
            nparts[i] = n;
            total += n;
        }
    }
    if (rc == TG_OK && total > 0 && !rows_reserve(ctx, need, budget)) {
        set_err(err, errlen,
                "tg_count_rows: out of device memory: %llu bytes free beside jk cannot hold %d sets of %llu bytes",
                (unsigned long long)free_bytes, TG_ROWS_SETS, (unsigned long long)need);
        rc = TG_ERR_OOM;
    }
    for (int32_t i = 0; i < nsubs && rc == TG_OK; i++) {
        const tg_rows_subtask *t = &subs[i];
        const uint64_t *c = cuts + (size_t)i * (TG_ROWS_MAX_PARTS + 1);
        double t0 = now_ms();
        uint64_t sum = 0;
        for (int64_t r = 0; r < nparts[i] && rc == TG_OK; r++) {
            tg_cpu_csr pij, pik;
            rc = rows_range(t->ij_rowptr, t->ij_cols, c[r], c[r + 1], jk->nrows, "ij", &pij, err, errlen);
            if (rc != TG_OK) break;
            if (t->ik_rowptr) {
                rc = rows_range(t->ik_rowptr, t->ik_cols, c[r], c[r + 1], jk->ncols, "ik", &pik, err, errlen);
                if (rc != TG_OK) {
                    free(pij.rowptr);
                    break;
                }
            }
            sum += tg_cpu_count(&pij, t->ik_rowptr ? &pik : &pij, jk);
            free(pij.rowptr);
            if (t->ik_rowptr) free(pik.rowptr);
        }
        triangles[i] = sum;
        if (kernel_ms) kernel_ms[i] = now_ms() - t0;
    }
    free(cuts);
    free(nparts);
    if (rc != TG_OK) {
        for (int32_t i = 0; i < nsubs; i++) triangles[i] = 0;
        return rc;
    }
    if (parts) *parts = total;
    return TG_OK;
}

/* Device bytes the CUDA library holds for tg_count_local's arrays: one
 * array per distinct host pointer (as long as the longest role it takes),
 * 8 bytes per vertex and 4 per edge. */
static uint64_t local_bytes(const tg_local_out *out, const int64_t len[6]) {
    uint64_t *const p[6] = {out->vi, out->vj, out->vk, out->eij, out->eik, out->ejk};
    const int per_edge = p[3] || p[4] || p[5];
    uint64_t total = 0;
    for (int r = 0; r < 6; r++) {
        if (r >= 3 && !per_edge) break;
        int first = 1;
        int64_t n = len[r];
        for (int q = 0; q < 6; q++) {
            if (q == r || p[q] == NULL || p[q] != p[r] || (q >= 3) != (r >= 3)) continue;
            if (q < r) first = 0;
            if (len[q] > n) n = len[q];
        }
        if (p[r] == NULL || first) total += alloc_bytes((uint64_t)n * (r < 3 ? 8 : 4));
    }
    return total;
}

int32_t tg_count_local(tg_ctx *ctx, int32_t kernel, int32_t slot_ij, int32_t slot_ik, int32_t slot_jk,
                       const tg_local_out *out, uint64_t *triangles, double *kernel_ms, char *err, uint64_t errlen) {
    if (ctx == NULL || out == NULL || triangles == NULL) {
        set_err(err, errlen, "tg_count_local: NULL context, output or result pointer");
        return TG_ERR_INVALID;
    }
    *triangles = 0;
    if (kernel_ms) *kernel_ms = 0;
    if (kernel != TG_KERNEL_POLAK && kernel != TG_KERNEL_WETRIC) {
        set_err(err, errlen, "tg_count_local: kernel id %d has no per-vertex mode (polak and wetric have one)", kernel);
        return TG_ERR_INVALID;
    }
    const tg_cpu_csr *ij, *ik, *jk;
    int32_t rc = subtask_blocks(ctx, "tg_count_local", slot_ij, slot_ik, slot_jk, &ij, &ik, &jk, err, errlen);
    if (rc != TG_OK) return rc;
    const int per_edge = out->eij != NULL || out->eik != NULL || out->ejk != NULL;
    if (per_edge && (uint64_t)ij->nrows + (uint64_t)jk->nrows + (uint64_t)ik->ncols >= (1ull << 32)) {
        set_err(err, errlen, "tg_count_local: per-edge support of index spaces of %lld + %lld + %lld vertices may overflow the device's 32-bit counters; count through partitions",
                (long long)ij->nrows, (long long)jk->nrows, (long long)ik->ncols);
        return TG_ERR_INVALID;
    }
    const int64_t len[6] = {ij->nrows, jk->nrows, ik->ncols, ij->nnz, ik->nnz, jk->nnz};
    const uint64_t need = local_bytes(out, len);
    if (ctx->used + need > ctx->limit) {
        set_err(err, errlen, "tg_count_local: the per-vertex arrays (%llu bytes) do not fit beside the blocks (%llu of %llu bytes held)",
                (unsigned long long)need, (unsigned long long)ctx->used, (unsigned long long)ctx->limit);
        return TG_ERR_OOM;
    }
    if (ctx->used + need > ctx->peak) ctx->peak = ctx->used + need;
    double t0 = now_ms();
    uint64_t count = 0;
    for (int64_t u = 0; u < ij->nrows; u++) {
        const uint64_t ab = ik->rowptr[u], ae = ik->rowptr[u + 1];
        for (uint64_t e = ij->rowptr[u]; e < ij->rowptr[u + 1]; e++) {
            const uint32_t v = ij->cols[e];
            uint64_t i = ab, j = jk->rowptr[v], c = 0;
            const uint64_t je = jk->rowptr[v + 1];
            while (i < ae && j < je) {
                const uint32_t x = ik->cols[i], y = jk->cols[j];
                if (x < y) {
                    i++;
                } else if (x > y) {
                    j++;
                } else {
                    c++;
                    if (out->vk) out->vk[x]++;
                    if (out->eik) out->eik[i]++;
                    if (out->ejk) out->ejk[j]++;
                    i++, j++;
                }
            }
            if (c == 0) continue;
            count += c;
            if (out->vi) out->vi[u] += c;
            if (out->vj) out->vj[v] += c;
            if (out->eij) out->eij[e] += c;
        }
    }
    *triangles = count;
    if (kernel_ms) *kernel_ms = now_ms() - t0;
    return TG_OK;
}

int32_t tg_mem_usage(tg_ctx *ctx, uint64_t *used, uint64_t *limit, uint64_t *peak) {
    if (ctx == NULL) return TG_ERR_INVALID;
    if (used) *used = ctx->used;
    if (limit) *limit = ctx->limit;
    if (peak) *peak = ctx->peak;
    return TG_OK;
}

int32_t tg_preprocess(tg_ctx *ctx, int32_t slot, const uint32_t *edges, uint64_t npairs, uint64_t nvertices,
                      uint64_t *rowptr_out, uint32_t *cols_out, uint32_t *rank_out, uint64_t *stats, double *ms,
                      char *err, uint64_t errlen) {
    if (ctx == NULL || stats == NULL || slot < 0 || slot >= TG_MAX_SLOTS || (npairs > 0 && edges == NULL)) {
        set_err(err, errlen, "tg_preprocess: bad context, slot, stats or edges");
        return TG_ERR_INVALID;
    }
    if (nvertices >= 0xffffffffull) {
        set_err(err, errlen, "tg_preprocess: too many vertices");
        return TG_ERR_INVALID;
    }
    if (reg_straddles(edges, npairs * 8)) {
        set_err(err, errlen, "tg_preprocess: upload pairs: invalid argument (the pairs span pinned ranges)");
        return TG_ERR_CUDA;
    }
    double t0 = now_ms();
    ref_slot *s = &ctx->slots[slot];
    slot_release(ctx, s);
    tg_cpu_csr c;
    int32_t rc = tg_cpu_forward(edges, npairs, nvertices, &c, rank_out, stats);
    if (rc == TG_ERR_INVALID) {
        set_err(err, errlen, "tg_preprocess: a pair holds an id >= %llu vertices", (unsigned long long)nvertices);
        return rc;
    }
    if (rc != TG_OK) {
        set_err(err, errlen, "tg_preprocess: out of host memory");
        return rc;
    }
    if (!slot_reserve(ctx, s, c.nrows, c.nnz)) {
        tg_cpu_csr_free(&c);
        set_err(err, errlen, "tg_preprocess: out of device memory");
        return TG_ERR_OOM;
    }
    if (rowptr_out) memcpy(rowptr_out, c.rowptr, (size_t)(c.nrows + 1) * sizeof(uint64_t));
    if (cols_out && c.nnz > 0) memcpy(cols_out, c.cols, (size_t)c.nnz * sizeof(uint32_t));
    s->csr = c;
    s->loaded = 1;
    if (ms) *ms = now_ms() - t0;
    return TG_OK;
}

static uint64_t id_at(const void *edges, int32_t width, uint64_t i) {
    return width == 4 ? ((const uint32_t *)edges)[i] : ((const uint64_t *)edges)[i];
}

/* Index of x in the sorted ids (n entries), or n when absent. */
static uint64_t find_id(const uint64_t *ids, uint64_t n, uint64_t x) {
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && ids[lo] == x ? lo : n;
}

/* Sorts and dedupes ids in place; returns how many stay. */
static int sort_unique(uint64_t *ids, uint64_t n, uint64_t *distinct) {
    uint64_t *tmp = malloc((n + 1) * sizeof(uint64_t));
    if (tmp == NULL || tg_cpu_sort64(ids, tmp, n, 64) != 0) {
        free(tmp);
        return -1;
    }
    free(tmp);
    uint64_t u = 0;
    for (uint64_t i = 0; i < n; i++)
        if (i == 0 || ids[i] != ids[i - 1]) ids[u++] = ids[i];
    *distinct = u;
    return 0;
}

/* tg_prep_ids of pairs in host memory (or the input buffer's, copied). */
static int32_t prep_ids(tg_ctx *ctx, int32_t slot, const void *edges, uint64_t npairs, int32_t width,
                        uint64_t max_vertices, uint64_t *rowptr_out, uint32_t *cols_out, uint64_t *orig_out,
                        uint64_t *stats, double *ms, const char *fn, char *err, uint64_t errlen) {
    if (ctx == NULL || stats == NULL || slot < 0 || slot >= TG_MAX_SLOTS || (npairs > 0 && edges == NULL)) {
        set_err(err, errlen, "%s: bad context, slot, stats or edges", fn);
        return TG_ERR_INVALID;
    }
    if (width != 4 && width != 8) {
        set_err(err, errlen, "%s: id width %d: want 4 or 8 bytes", fn, (int)width);
        return TG_ERR_INVALID;
    }
    for (int i = 0; i < TG_PREP_NSTATS; i++) stats[i] = 0;
    if (reg_straddles(edges, npairs * 2 * (uint64_t)width)) {
        set_err(err, errlen, "%s: upload pairs: invalid argument (the pairs span pinned ranges)", fn);
        return TG_ERR_CUDA;
    }
    double t0 = now_ms();
    ref_slot *s = &ctx->slots[slot];
    slot_release(ctx, s);
    /* The uploaded pairs and the keys, accounted as the CUDA library holds them. */
    uint64_t held = npairs * 2 * (uint64_t)width;
    if (!ref_alloc(ctx, held)) {
        set_err(err, errlen, "%s: pair buffer: out of device memory", fn);
        return TG_ERR_OOM;
    }
    ctx->used -= alloc_bytes(held);
    uint64_t *ids = malloc((2 * npairs + 1) * sizeof(uint64_t));
    uint64_t *lids = malloc((npairs + 1) * sizeof(uint64_t));
    uint32_t *pairs = malloc((2 * npairs + 1) * sizeof(uint32_t));
    if (ids == NULL || lids == NULL || pairs == NULL) {
        free(ids), free(lids), free(pairs);
        set_err(err, errlen, "%s: out of host memory", fn);
        return TG_ERR_OOM;
    }
    uint64_t ne = 0, nl = 0, n = 0, nlu = 0, iso = 0;
    for (uint64_t i = 0; i < npairs; i++) {
        uint64_t u = id_at(edges, width, 2 * i), v = id_at(edges, width, 2 * i + 1);
        if (u == v) {
            lids[nl++] = u;
        } else {
            ids[ne++] = u;
            ids[ne++] = v;
        }
    }
    if (sort_unique(ids, ne, &n) != 0 || sort_unique(lids, nl, &nlu) != 0) {
        free(ids), free(lids), free(pairs);
        set_err(err, errlen, "%s: out of host memory", fn);
        return TG_ERR_OOM;
    }
    if (n >= 0xffffffffull) {
        free(ids), free(lids), free(pairs);
        set_err(err, errlen, "%s: %llu distinct ids exceed the GPU path (< 2^32-1)", fn, (unsigned long long)n);
        return TG_ERR_INVALID;
    }
    for (uint64_t i = 0; i < nlu; i++) iso += find_id(ids, n, lids[i]) == n;
    /* Loops stay as pairs of one compact id so that the forward build
     * counts them; an id seen only in loops maps to 0, which is valid
     * whenever there is a vertex at all. */
    for (uint64_t i = 0; i < 2 * npairs; i++) {
        uint64_t j = find_id(ids, n, id_at(edges, width, i));
        pairs[i] = (uint32_t)(j == n ? 0 : j);
    }
    for (uint64_t i = 0; i < npairs; i++) {
        if (id_at(edges, width, 2 * i) == id_at(edges, width, 2 * i + 1)) pairs[2 * i + 1] = pairs[2 * i];
    }
    free(lids);
    if ((rowptr_out || orig_out) && n > max_vertices) {
        free(ids), free(pairs);
        set_err(err, errlen, "%s: %llu vertices exceed the caller's room for %llu", fn, (unsigned long long)n,
                (unsigned long long)max_vertices);
        return TG_ERR_INVALID;
    }
    uint32_t *rank = orig_out && n > 0 ? malloc(n * sizeof(uint32_t)) : NULL;
    if (orig_out && n > 0 && rank == NULL) {
        free(ids), free(pairs);
        set_err(err, errlen, "%s: out of host memory", fn);
        return TG_ERR_OOM;
    }
    tg_cpu_csr c;
    int32_t rc = tg_cpu_forward(pairs, npairs, n > 0 ? n : 0, &c, rank, stats);
    free(pairs);
    /* The sorted distinct ids are the input id of each compact id. */
    if (rc == TG_OK && rank != NULL)
        for (uint64_t v = 0; v < n; v++) orig_out[rank[v]] = ids[v];
    free(rank), free(ids);
    if (rc == TG_ERR_INVALID && n == 0) {
        /* Only loops (or nothing): an empty graph. */
        memset(&c, 0, sizeof c);
        for (int i = 0; i < TG_PREP_NSTATS; i++) stats[i] = 0;
        stats[TG_PREP_INPUT_PAIRS] = npairs;
        stats[TG_PREP_SELF_LOOPS] = nl;
        rc = TG_OK;
    }
    if (rc != TG_OK) {
        set_err(err, errlen, "%s: out of host memory", fn);
        return rc;
    }
    stats[TG_PREP_ISOLATED] = iso;
    if (!slot_reserve(ctx, s, c.nrows, c.nnz)) {
        tg_cpu_csr_free(&c);
        set_err(err, errlen, "%s: out of device memory", fn);
        return TG_ERR_OOM;
    }
    if (rowptr_out) {
        if (c.nrows > 0) memcpy(rowptr_out, c.rowptr, (size_t)(c.nrows + 1) * sizeof(uint64_t));
        else rowptr_out[0] = 0;
    }
    if (cols_out && c.nnz > 0) memcpy(cols_out, c.cols, (size_t)c.nnz * sizeof(uint32_t));
    s->csr = c;
    s->loaded = 1;
    if (ms) *ms = now_ms() - t0;
    return TG_OK;
}

/* Drops the input buffer and its pending copies without reading them. */
static void input_drop(tg_ctx *ctx) {
    for (size_t i = 0; i < ctx->ncopies; i++) reg_pending(ctx->copies[i].src, -1);
    ctx->ncopies = 0;
    if (ctx->input != NULL) ctx->used -= alloc_bytes(ctx->input_bytes > 8 ? ctx->input_bytes : 8);
    free(ctx->input);
    ctx->input = NULL;
    ctx->input_bytes = ctx->input_copied = 0;
}

int32_t tg_input_alloc(tg_ctx *ctx, uint64_t bytes, char *err, uint64_t errlen) {
    if (ctx == NULL) {
        set_err(err, errlen, "tg_input_alloc: NULL context");
        return TG_ERR_INVALID;
    }
    input_drop(ctx);
    uint64_t room = bytes > 8 ? bytes : 8;
    if (!ref_alloc(ctx, room)) {
        set_err(err, errlen, "tg_input_alloc: input buffer: out of device memory (%llu bytes)",
                (unsigned long long)bytes);
        return TG_ERR_OOM;
    }
    ctx->input = malloc((size_t)room);
    if (ctx->input == NULL) {
        ctx->used -= alloc_bytes(room);
        set_err(err, errlen, "tg_input_alloc: out of host memory");
        return TG_ERR_OOM;
    }
    ctx->input_bytes = bytes;
    return TG_OK;
}

int32_t tg_input_copy_async(tg_ctx *ctx, uint64_t offset, const void *src, uint64_t bytes, char *err,
                            uint64_t errlen) {
    if (ctx == NULL || (bytes > 0 && src == NULL)) {
        set_err(err, errlen, "tg_input_copy_async: NULL context or source");
        return TG_ERR_INVALID;
    }
    if (ctx->input == NULL) {
        set_err(err, errlen, "tg_input_copy_async: no input buffer (tg_input_alloc)");
        return TG_ERR_INVALID;
    }
    if (offset > ctx->input_bytes || bytes > ctx->input_bytes - offset) {
        set_err(err, errlen, "tg_input_copy_async: %llu bytes at offset %llu exceed the input buffer's %llu",
                (unsigned long long)bytes, (unsigned long long)offset, (unsigned long long)ctx->input_bytes);
        return TG_ERR_INVALID;
    }
    if (bytes == 0) return TG_OK;
    if (ctx->ncopies == ctx->capcopies) {
        size_t c = ctx->capcopies ? 2 * ctx->capcopies : 64;
        ref_copy *r = realloc(ctx->copies, c * sizeof *r);
        if (r == NULL) {
            set_err(err, errlen, "tg_input_copy_async: out of host memory");
            return TG_ERR_OOM;
        }
        ctx->copies = r;
        ctx->capcopies = c;
    }
    ctx->copies[ctx->ncopies++] = (ref_copy){offset, bytes, src};
    reg_pending(src, 1);
    ctx->input_copied += bytes;
    return TG_OK;
}

int32_t tg_input_free(tg_ctx *ctx, char *err, uint64_t errlen) {
    if (ctx == NULL) {
        set_err(err, errlen, "tg_input_free: NULL context");
        return TG_ERR_INVALID;
    }
    input_drop(ctx);
    return TG_OK;
}

/* tg_prep_ids from the input buffer, which it consumes whatever the
 * outcome. */
static int32_t prep_ids_input(tg_ctx *ctx, int32_t slot, uint64_t npairs, int32_t width, uint64_t max_vertices,
                              uint64_t *rowptr_out, uint32_t *cols_out, uint64_t *orig_out, uint64_t *stats,
                              double *ms, char *err, uint64_t errlen) {
    const char *fn = "tg_prep_ids (from the input buffer)";
    if (ctx == NULL) {
        set_err(err, errlen, "%s: NULL context", fn);
        return TG_ERR_INVALID;
    }
    if (ctx->input == NULL) {
        set_err(err, errlen, "%s: no input buffer (tg_input_alloc)", fn);
        return TG_ERR_INVALID;
    }
    if (width != 4 && width != 8) {
        input_drop(ctx);
        set_err(err, errlen, "%s: id width %d: want 4 or 8 bytes", fn, (int)width);
        return TG_ERR_INVALID;
    }
    uint64_t per_pair = 2 * (uint64_t)width, room = ctx->input_bytes, have = ctx->input_copied;
    if (npairs > room / per_pair || have != npairs * per_pair) {
        input_drop(ctx);
        set_err(err, errlen, "%s: %llu pairs of %d-byte ids need %llu bytes; the input buffer has %llu, %llu copied",
                fn, (unsigned long long)npairs, (int)width, (unsigned long long)(npairs * per_pair),
                (unsigned long long)room, (unsigned long long)have);
        return TG_ERR_INVALID;
    }
    /* The copies land now, reading the caller's memory as it is. */
    for (size_t i = 0; i < ctx->ncopies; i++)
        memcpy(ctx->input + ctx->copies[i].offset, ctx->copies[i].src, (size_t)ctx->copies[i].bytes);
    /* The buffer is the pair buffer prep_ids accounts for itself. */
    unsigned char *in = ctx->input;
    ctx->input = NULL;
    input_drop(ctx);
    ctx->used -= alloc_bytes(room > 8 ? room : 8);
    int32_t rc = prep_ids(ctx, slot, in, npairs, width, max_vertices, rowptr_out, cols_out, orig_out, stats, ms, fn,
                          err, errlen);
    free(in);
    return rc;
}

int32_t tg_prep_ids(tg_ctx *ctx, int32_t slot, int32_t from_input, const void *edges, uint64_t npairs,
                    int32_t width, uint64_t max_vertices, uint64_t *rowptr_out, uint32_t *cols_out,
                    uint64_t *orig_out, uint64_t *stats, double *ms, char *err, uint64_t errlen) {
    if (from_input == 1)
        return prep_ids_input(ctx, slot, npairs, width, max_vertices, rowptr_out, cols_out, orig_out, stats, ms, err,
                              errlen);
    if (from_input != 0) {
        set_err(err, errlen, "tg_prep_ids: from_input %d: want 0 or 1", (int)from_input);
        return TG_ERR_INVALID;
    }
    return prep_ids(ctx, slot, edges, npairs, width, max_vertices, rowptr_out, cols_out, orig_out, stats, ms,
                    "tg_prep_ids", err, errlen);
}

/* tg_split_blocks on the CPU: the same groups and local ids, the blocks
 * accounted as the CUDA library allocates them (each block's offsets and
 * columns, made while the source is still held). */
int32_t tg_split_blocks(tg_ctx *ctx, int32_t src, int32_t p, const int32_t *slots, int32_t nranges,
                        const uint64_t *bounds, const int32_t *groups, int64_t *nnz_out, char *err,
                        uint64_t errlen) {
    const char *fn = "tg_split_blocks";
    enum { MAXP = 4 };
    if (ctx == NULL || slots == NULL || nnz_out == NULL || src < 0 || src >= TG_MAX_SLOTS) {
        set_err(err, errlen, "%s: NULL context, slots or nnz_out, or source slot %d out of range", fn, src);
        return TG_ERR_INVALID;
    }
    if (p < 1 || p > MAXP || p * p > TG_MAX_SLOTS) {
        set_err(err, errlen, "%s: p = %d: the device splits into 1 to %d groups", fn, p, MAXP);
        return TG_ERR_INVALID;
    }
    int seen[TG_MAX_SLOTS] = {0};
    for (int b = 0; b < p * p; b++) {
        if (slots[b] < 0 || slots[b] >= TG_MAX_SLOTS || seen[slots[b]]) {
            set_err(err, errlen, "%s: target slot %d of block %d is out of range or named twice", fn, slots[b], b);
            return TG_ERR_INVALID;
        }
        seen[slots[b]] = 1;
    }
    if (nranges < 0 || (nranges > 0 && (bounds == NULL || groups == NULL))) {
        set_err(err, errlen, "%s: %d ranges without bounds or groups", fn, nranges);
        return TG_ERR_INVALID;
    }
    ref_slot *s = &ctx->slots[src];
    int32_t rc = slot_complete(s, err, errlen);
    if (rc != TG_OK) return rc;
    const int64_t n = s->csr.nrows;
    if (!s->loaded || n != s->csr.ncols) {
        set_err(err, errlen, "%s: source slot %d holds no square forward graph", fn, src);
        return TG_ERR_INVALID;
    }
    if (nranges > 0) {
        if (bounds[0] != 0 || bounds[nranges] != (uint64_t)n) {
            set_err(err, errlen, "%s: range bounds run from %llu to %llu, want 0 to %lld", fn,
                    (unsigned long long)bounds[0], (unsigned long long)bounds[nranges], (long long)n);
            return TG_ERR_INVALID;
        }
        for (int r = 0; r < nranges; r++)
            if (bounds[r + 1] < bounds[r] || groups[r] < 0 || groups[r] >= p) {
                set_err(err, errlen, "%s: range %d: bounds decrease or group %d is not below p = %d", fn, r,
                        groups[r], p);
                return TG_ERR_INVALID;
            }
    }
    for (int b = 0; b < p * p; b++)
        if (slots[b] != src) slot_release(ctx, &ctx->slots[slots[b]]);
    /* Each vertex's group and local id. */
    int64_t size[MAXP] = {0};
    int32_t *grp = malloc((size_t)(n + 1) * sizeof(int32_t));
    uint32_t *loc = malloc((size_t)(n + 1) * sizeof(uint32_t));
    if (grp == NULL || loc == NULL) {
        free(grp), free(loc);
        set_err(err, errlen, "%s: out of host memory", fn);
        return TG_ERR_OOM;
    }
    if (nranges == 0) {
        for (int64_t v = 0; v < n; v++) {
            grp[v] = (int32_t)(v % p);
            loc[v] = (uint32_t)(v / p);
            size[v % p]++;
        }
    } else {
        for (int r = 0; r < nranges; r++)
            for (uint64_t v = bounds[r]; v < bounds[r + 1]; v++) {
                grp[v] = groups[r];
                loc[v] = (uint32_t)size[groups[r]]++;
            }
    }
    tg_cpu_csr blk[MAXP * MAXP];
    memset(blk, 0, sizeof blk);
    int ok = 1;
    for (int b = 0; b < p * p && ok; b++) {
        blk[b].nrows = size[b / p];
        blk[b].ncols = size[b % p];
        blk[b].rowptr = calloc((size_t)blk[b].nrows + 1, sizeof(uint64_t));
        ok = blk[b].rowptr != NULL;
    }
    for (int64_t u = 0; u < n && ok; u++)
        for (uint64_t k = s->csr.rowptr[u]; k < s->csr.rowptr[u + 1]; k++)
            blk[grp[u] * p + grp[s->csr.cols[k]]].rowptr[loc[u] + 1]++;
    for (int b = 0; b < p * p && ok; b++) {
        for (int64_t r = 0; r < blk[b].nrows; r++) blk[b].rowptr[r + 1] += blk[b].rowptr[r];
        blk[b].nnz = (int64_t)blk[b].rowptr[blk[b].nrows];
        blk[b].cols = malloc((size_t)(blk[b].nnz + 1) * sizeof(uint32_t));
        ok = blk[b].cols != NULL;
    }
    if (ok) {
        uint64_t *cur[MAXP * MAXP];
        for (int b = 0; b < p * p && ok; b++) {
            cur[b] = malloc((size_t)(blk[b].nrows + 1) * sizeof(uint64_t));
            if (cur[b] == NULL) {
                for (int c = 0; c < b; c++) free(cur[c]);
                ok = 0;
                break;
            }
            memcpy(cur[b], blk[b].rowptr, (size_t)(blk[b].nrows + 1) * sizeof(uint64_t));
        }
        if (ok) {
            for (int64_t u = 0; u < n; u++)
                for (uint64_t k = s->csr.rowptr[u]; k < s->csr.rowptr[u + 1]; k++) {
                    uint32_t v = s->csr.cols[k];
                    int b = grp[u] * p + grp[v];
                    blk[b].cols[cur[b][loc[u]]++] = loc[v];
                }
            for (int b = 0; b < p * p; b++) free(cur[b]);
        }
    }
    free(grp), free(loc);
    if (!ok) {
        for (int c = 0; c < p * p; c++) tg_cpu_csr_free(&blk[c]);
        set_err(err, errlen, "%s: out of host memory", fn);
        return TG_ERR_OOM;
    }
    /* The device memory: every block beside the source, then the source goes. */
    uint64_t held = 0;
    for (int b = 0; b < p * p; b++) {
        uint64_t off = (uint64_t)(blk[b].nrows + 1) * 8, col = (uint64_t)(blk[b].nnz > 0 ? blk[b].nnz : 1) * 4;
        int got = ref_alloc(ctx, off);
        if (got) {
            held += alloc_bytes(off);
            got = ref_alloc(ctx, col);
        }
        if (!got) {
            ctx->used -= held;
            for (int c = 0; c < p * p; c++) tg_cpu_csr_free(&blk[c]);
            set_err(err, errlen, "%s: block (%d,%d): out of device memory (%llu of %llu bytes in use)", fn, b / p,
                    b % p, (unsigned long long)ctx->used, (unsigned long long)ctx->limit);
            return TG_ERR_OOM;
        }
        held += alloc_bytes(col);
    }
    slot_release(ctx, s);
    for (int b = 0; b < p * p; b++) {
        ref_slot *t = &ctx->slots[slots[b]];
        t->csr = blk[b];
        t->loaded = 1;
        t->rowptr_cap = (uint64_t)blk[b].nrows + 1;
        t->cols_cap = blk[b].nnz > 0 ? (uint64_t)blk[b].nnz : 1;
        nnz_out[b] = blk[b].nnz;
    }
    return TG_OK;
}

int32_t tg_block_out(tg_ctx *ctx, int32_t slot, uint64_t *rowptr_out, uint32_t *cols_out, char *err,
                     uint64_t errlen) {
    if (ctx == NULL || slot < 0 || slot >= TG_MAX_SLOTS) {
        set_err(err, errlen, "tg_block_out: bad context or slot %d", slot);
        return TG_ERR_INVALID;
    }
    ref_slot *s = &ctx->slots[slot];
    int32_t rc = slot_complete(s, err, errlen);
    if (rc != TG_OK) return rc;
    if (!s->loaded) {
        set_err(err, errlen, "tg_block_out: slot %d holds no block", slot);
        return TG_ERR_INVALID;
    }
    if (rowptr_out && s->csr.rowptr == NULL) rowptr_out[0] = 0; /* an empty graph */
    else if (rowptr_out) memcpy(rowptr_out, s->csr.rowptr, (size_t)(s->csr.nrows + 1) * sizeof(uint64_t));
    if (cols_out && s->csr.nnz > 0) memcpy(cols_out, s->csr.cols, (size_t)s->csr.nnz * sizeof(uint32_t));
    return TG_OK;
}

/* ---- preprocessing in pieces (tg_pieces_*) ---------------------------------
 * The work area is accounted as the CUDA library allocates it (the vertex
 * words, two key buffers, the unique count; no sort scratch); keys are
 * sorted with tg_cpu_sort64. */

static void pieces_drop(tg_ctx *ctx) {
    ctx->used -= ctx->pc_bytes;
    free(ctx->pc_vert);
    free(ctx->pc_ids);
    free(ctx->pc_a);
    free(ctx->pc_b);
    ctx->pc_vert = NULL;
    ctx->pc_ids = ctx->pc_a = ctx->pc_b = NULL;
    ctx->pc_cap = ctx->pc_nvert = ctx->pc_bytes = ctx->pc_id_words = 0;
}

static uint64_t pieces_area(uint64_t n, uint64_t id_words, uint64_t cap) {
    return alloc_bytes(n * 4) + (id_words ? alloc_bytes(id_words * 8) : 0) + 2 * alloc_bytes(cap * 8) +
           alloc_bytes(0) + alloc_bytes(8);
}

int32_t tg_pieces_begin(tg_ctx *ctx, uint64_t nvertices, uint64_t max_items, const uint64_t *id_map,
                        uint64_t id_words, uint64_t *capacity, char *err, uint64_t errlen) {
    if (ctx == NULL || capacity == NULL || (id_words > 0 && id_map == NULL) || id_words % 2 != 0) {
        set_err(err, errlen, "tg_pieces_begin: NULL context or capacity, or an id map of %llu words at %p",
                (unsigned long long)id_words, (const void *)id_map);
        return TG_ERR_INVALID;
    }
    *capacity = 0;
    if (nvertices >= 0xffffffffull) {
        set_err(err, errlen, "tg_pieces_begin: %llu vertices exceed the GPU path (< 2^32-1)",
                (unsigned long long)nvertices);
        return TG_ERR_INVALID;
    }
    pieces_drop(ctx);
    uint64_t free_bytes = ctx->limit > ctx->used ? ctx->limit - ctx->used : 0;
    uint64_t lo = 0, hi = max_items > TG_PIECES_MIN_ITEMS ? max_items : TG_PIECES_MIN_ITEMS;
    if (hi > free_bytes / 16 + 1) hi = free_bytes / 16 + 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (pieces_area(nvertices, id_words, mid) <= free_bytes) lo = mid;
        else hi = mid - 1;
    }
    if (lo < TG_PIECES_MIN_ITEMS) {
        set_err(err, errlen,
                "tg_pieces_begin: out of device memory: %llu vertices, %llu id map words and %d items need %llu "
                "bytes, %llu are free",
                (unsigned long long)nvertices, (unsigned long long)id_words, TG_PIECES_MIN_ITEMS,
                (unsigned long long)pieces_area(nvertices, id_words, TG_PIECES_MIN_ITEMS),
                (unsigned long long)free_bytes);
        return TG_ERR_OOM;
    }
    ctx->pc_vert = calloc(nvertices ? nvertices : 1, 4);
    ctx->pc_ids = malloc(id_words ? id_words * 8 : 1);
    ctx->pc_a = malloc(lo * 8);
    ctx->pc_b = malloc(lo * 8);
    if (ctx->pc_vert == NULL || ctx->pc_ids == NULL || ctx->pc_a == NULL || ctx->pc_b == NULL) {
        pieces_drop(ctx);
        set_err(err, errlen, "tg_pieces_begin: out of host memory");
        return TG_ERR_OOM;
    }
    if (id_words > 0) memcpy(ctx->pc_ids, id_map, id_words * 8);
    ctx->pc_id_words = id_words;
    ctx->pc_bytes = pieces_area(nvertices, id_words, lo);
    ctx->used += ctx->pc_bytes;
    if (ctx->used > ctx->peak) ctx->peak = ctx->used;
    ctx->pc_cap = lo;
    ctx->pc_nvert = nvertices;
    *capacity = lo;
    return TG_OK;
}

static int32_t pieces_need(tg_ctx *ctx, const char *fn, char *err, uint64_t errlen) {
    if (ctx == NULL) {
        set_err(err, errlen, "%s: NULL context", fn);
        return TG_ERR_INVALID;
    }
    if (ctx->pc_a == NULL) {
        set_err(err, errlen, "%s: no work area (tg_pieces_begin)", fn);
        return TG_ERR_INVALID;
    }
    return TG_OK;
}

static int key_bits(uint64_t n) {
    int b = 0;
    while (b < 32 && (n >> b) != 0) b++;
    return 32 + b;
}

/* The vertex of id u under the id map of words words, or ~0 for an id
 * the map does not mark. */
static uint64_t pieces_mapped(const uint64_t *ids, uint64_t words, uint32_t u) {
    const uint64_t i = 2 * (uint64_t)(u >> 6);
    if (i + 1 >= words) return ~0ull;
    const uint64_t w = ids[i], bit = 1ull << (u & 63);
    if (!(w & bit)) return ~0ull;
    return ids[i + 1] + (uint64_t)__builtin_popcountll(w & (bit - 1));
}

/* Copies the spans into pc_a, makes their keys and sorts them; *m their
 * number. Items breaking op's rule fail the call, naming how many. */
static int32_t pieces_load(tg_ctx *ctx, const char *fn, int32_t op, const void *base, const uint64_t *spans,
                           int32_t nspans, uint64_t *m, uint64_t *loops, char *err, uint64_t errlen) {
    if (nspans < 0 || (nspans > 0 && (spans == NULL || base == NULL))) {
        set_err(err, errlen, "%s: %d spans, spans or base NULL", fn, nspans);
        return TG_ERR_INVALID;
    }
    uint64_t total = 0;
    for (int32_t i = 0; i < nspans; i++) {
        if (spans[2 * i + 1] > ctx->pc_cap - total) {
            set_err(err, errlen, "%s: the spans hold more than the capacity of %llu items", fn,
                    (unsigned long long)ctx->pc_cap);
            return TG_ERR_INVALID;
        }
        total += spans[2 * i + 1];
    }
    uint64_t at = 0, bad = 0, nl = 0;
    for (int32_t i = 0; i < nspans; i++) {
        if (spans[2 * i + 1] == 0) continue;
        /* memmove: a caller may sort in place, and out may be where base is */
        memmove(ctx->pc_a + at, (const uint64_t *)base + spans[2 * i], spans[2 * i + 1] * 8);
        at += spans[2 * i + 1];
    }
    const uint64_t n = ctx->pc_nvert, words = ctx->pc_id_words;
    for (uint64_t i = 0; i < total; i++) {
        uint64_t x = ctx->pc_a[i];
        uint64_t a = op == TG_PIECES_PAIRS ? (uint32_t)x : x >> 32, b = op == TG_PIECES_PAIRS ? x >> 32 : (uint32_t)x;
        if (op == TG_PIECES_PAIRS && words > 0) {
            if (a == b && 2 * (a >> 6) + 1 < words) { /* a loop of an id the map covers */
                nl++;
                ctx->pc_a[i] = ~0ull;
                continue;
            }
            a = pieces_mapped(ctx->pc_ids, words, (uint32_t)a);
            b = pieces_mapped(ctx->pc_ids, words, (uint32_t)b);
        }
        if (a >= n || b >= n || (op == TG_PIECES_ORIENT && a == b)) {
            bad++;
            ctx->pc_a[i] = 0;
            continue;
        }
        if (op == TG_PIECES_PAIRS && a == b) { /* a loop: dropped below, it sorts last */
            nl++;
            ctx->pc_a[i] = ~0ull;
            continue;
        }
        if (op == TG_PIECES_ORIENT) {
            a = ctx->pc_vert[a];
            b = ctx->pc_vert[b];
        }
        if (op != TG_PIECES_KEYS) ctx->pc_a[i] = a < b ? a << 32 | b : b << 32 | a;
    }
    if (bad) {
        set_err(err, errlen, "%s: %llu items %s", fn, (unsigned long long)bad,
                op == TG_PIECES_KEYS ? "hold a word beyond the vertices"
                : op == TG_PIECES_PAIRS ? "hold an id beyond the vertices"
                                        : "are loops or hold a word beyond the vertices");
        return TG_ERR_INVALID;
    }
    if (total > 1 && tg_cpu_sort64(ctx->pc_a, ctx->pc_b, total, key_bits(n)) != 0) {
        set_err(err, errlen, "%s: out of host memory", fn);
        return TG_ERR_OOM;
    }
    *m = total - nl;
    if (loops) *loops = nl;
    return TG_OK;
}

/* Writes the bytes bytes at from back over the spans of base (8-byte
 * items), in the spans' order, each span filled before the next. */
static void pieces_back(const void *from, uint64_t bytes, uint64_t *base, const uint64_t *spans, int32_t nspans) {
    const char *p = (const char *)from;
    for (int32_t i = 0; i < nspans && bytes > 0; i++) {
        uint64_t b = spans[2 * i + 1] * 8;
        if (b > bytes) b = bytes;
        memcpy(base + spans[2 * i], p, b);
        p += b;
        bytes -= b;
    }
}

int32_t tg_pieces_sort(tg_ctx *ctx, int32_t op, int32_t flags, const void *base, const uint64_t *spans,
                       int32_t nspans, uint64_t *out, uint64_t *nout, uint64_t *nloops, char *err,
                       uint64_t errlen) {
    const char *fn = "tg_pieces_sort";
    int32_t rc = pieces_need(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    if (op < TG_PIECES_PAIRS || op > TG_PIECES_ORIENT || (flags & ~(TG_PIECES_UNIQUE | TG_PIECES_DEGREES)) != 0 ||
        ((flags & TG_PIECES_DEGREES) && !(flags & TG_PIECES_UNIQUE)) || nout == NULL) {
        set_err(err, errlen, "%s: op %d, flags %d or nout NULL", fn, op, flags);
        return TG_ERR_INVALID;
    }
    *nout = 0;
    if (nloops) *nloops = 0;
    uint64_t m = 0;
    if ((rc = pieces_load(ctx, fn, op, base, spans, nspans, &m, nloops, err, errlen)) != TG_OK) return rc;
    uint64_t kept = m;
    if ((flags & TG_PIECES_UNIQUE) && m > 0) {
        kept = 1;
        for (uint64_t i = 1; i < m; i++)
            if (ctx->pc_a[i] != ctx->pc_a[kept - 1]) ctx->pc_a[kept++] = ctx->pc_a[i];
    }
    if (flags & TG_PIECES_DEGREES)
        for (uint64_t i = 0; i < kept; i++) {
            ctx->pc_vert[ctx->pc_a[i] >> 32]++;
            ctx->pc_vert[(uint32_t)ctx->pc_a[i]]++;
        }
    if (kept > 0 && out != NULL) memcpy(out, ctx->pc_a, kept * 8);
    if (out == NULL) pieces_back(ctx->pc_a, kept * 8, (uint64_t *)base, spans, nspans);
    *nout = kept;
    return TG_OK;
}

int32_t tg_pieces_csr(tg_ctx *ctx, uint64_t *base, const uint64_t *spans, int32_t nspans, uint64_t row0,
                      uint64_t nrows, uint32_t *cols, uint32_t *counts, uint64_t *nout, char *err, uint64_t errlen) {
    const char *fn = "tg_pieces_csr";
    int32_t rc = pieces_need(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    if (nout == NULL || nrows > ctx->pc_cap || (nrows > 0 && counts == NULL)) {
        set_err(err, errlen, "%s: %llu rows beyond the capacity of %llu, or counts or nout NULL", fn,
                (unsigned long long)nrows, (unsigned long long)ctx->pc_cap);
        return TG_ERR_INVALID;
    }
    *nout = 0;
    uint64_t m = 0;
    if ((rc = pieces_load(ctx, fn, TG_PIECES_KEYS, base, spans, nspans, &m, NULL, err, errlen)) != TG_OK) return rc;
    uint64_t bad = 0;
    for (uint64_t i = 0; i < m; i++) {
        uint64_t r = ctx->pc_a[i] >> 32;
        bad += r < row0 || r - row0 >= nrows || (i > 0 && ctx->pc_a[i - 1] == ctx->pc_a[i]);
    }
    if (bad) {
        set_err(err, errlen, "%s: %llu items are repeated or of rows beyond the piece's", fn,
                (unsigned long long)bad);
        return TG_ERR_INVALID;
    }
    for (uint64_t r = 0; r < nrows; r++) counts[r] = 0;
    /* The columns go to pc_b's words first: written back over the spans,
     * they would overwrite keys not yet read in a buffer of their own. */
    uint32_t *words = cols != NULL ? cols : (uint32_t *)ctx->pc_b;
    for (uint64_t i = 0; i < m; i++) {
        words[i] = (uint32_t)ctx->pc_a[i];
        counts[(ctx->pc_a[i] >> 32) - row0]++;
    }
    if (cols == NULL) pieces_back(words, m * 4, base, spans, nspans);
    *nout = m;
    return TG_OK;
}

int32_t tg_pieces_vertices(tg_ctx *ctx, uint32_t *words, int32_t to_device, char *err, uint64_t errlen) {
    int32_t rc = pieces_need(ctx, "tg_pieces_vertices", err, errlen);
    if (rc != TG_OK) return rc;
    if (ctx->pc_nvert == 0) return TG_OK;
    if (words == NULL) {
        set_err(err, errlen, "tg_pieces_vertices: NULL words");
        return TG_ERR_INVALID;
    }
    if (to_device) memcpy(ctx->pc_vert, words, ctx->pc_nvert * 4);
    else memcpy(words, ctx->pc_vert, ctx->pc_nvert * 4);
    return TG_OK;
}

int32_t tg_pieces_rank(tg_ctx *ctx, uint32_t *rank, uint64_t *wedges, uint64_t *max_degree, char *err,
                       uint64_t errlen) {
    const char *fn = "tg_pieces_rank";
    int32_t rc = pieces_need(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    const uint64_t n = ctx->pc_nvert;
    if (wedges == NULL || max_degree == NULL || (n > 0 && rank == NULL)) {
        set_err(err, errlen, "%s: NULL rank, wedges or max_degree", fn);
        return TG_ERR_INVALID;
    }
    if (n > ctx->pc_cap) {
        set_err(err, errlen, "%s: %llu vertices beyond the capacity of %llu", fn, (unsigned long long)n,
                (unsigned long long)ctx->pc_cap);
        return TG_ERR_INVALID;
    }
    uint64_t w = 0, mx = 0;
    for (uint64_t v = 0; v < n; v++) {
        const uint64_t d = ctx->pc_vert[v];
        ctx->pc_a[v] = d << 32 | v;
        w += d * (d - (d > 0)) / 2;
        if (d > mx) mx = d;
    }
    if (n > 1 && tg_cpu_sort64(ctx->pc_a, ctx->pc_b, n, key_bits(n)) != 0) {
        set_err(err, errlen, "%s: out of host memory", fn);
        return TG_ERR_OOM;
    }
    for (uint64_t i = 0; i < n; i++) ctx->pc_vert[(uint32_t)ctx->pc_a[i]] = (uint32_t)i;
    if (n > 0) memcpy(rank, ctx->pc_vert, n * 4);
    *wedges = w;
    *max_degree = mx;
    return TG_OK;
}

int32_t tg_pieces_end(tg_ctx *ctx, char *err, uint64_t errlen) {
    if (ctx == NULL) {
        set_err(err, errlen, "tg_pieces_end: NULL context");
        return TG_ERR_INVALID;
    }
    pieces_drop(ctx);
    return TG_OK;
}

/* Whether [p, p + bytes) lies inside one registered range: the kernels of
 * tg_ranges_count read only such memory. */
static int reg_holds(const void *p, uint64_t bytes) {
    const char *lo = p, *hi = lo + bytes;
    int ok = 0;
    pthread_mutex_lock(&reg_mu);
    for (size_t i = 0; i < nreg && !ok; i++)
        if (lo >= reg[i].lo && hi <= reg[i].hi) ok = 1;
    pthread_mutex_unlock(&reg_mu);
    return ok;
}

static void ranges_drop(tg_ctx *ctx) {
    ctx->used -= ctx->rg_bytes ? alloc_bytes(ctx->rg_bytes) : 0;
    ctx->rg_cols = NULL;
    ctx->rg_bytes = ctx->rg_nnz = ctx->rg_nvert = 0;
    ctx->rg_ratio = 0;
}

int32_t tg_ranges_begin(tg_ctx *ctx, const uint32_t *cols, uint64_t nnz, uint64_t nvertices, uint64_t bytes,
                        uint32_t bm_ratio, char *err, uint64_t errlen) {
    if (ctx == NULL || (cols == NULL && nnz > 0)) {
        set_err(err, errlen, "tg_ranges_begin: NULL context or columns");
        return TG_ERR_INVALID;
    }
    if (nvertices >= 0xffffffffull || bytes < tg_ranges_bytes(0, 0, 0) || bm_ratio > TG_RANGES_BM_MAX_RATIO) {
        set_err(err, errlen,
                "tg_ranges_begin: %llu vertices (< 2^32-1), %llu bytes (at least %llu), bitmap ratio %u (at most %u)",
                (unsigned long long)nvertices, (unsigned long long)bytes,
                (unsigned long long)tg_ranges_bytes(0, 0, 0), bm_ratio, (unsigned)TG_RANGES_BM_MAX_RATIO);
        return TG_ERR_INVALID;
    }
    ranges_drop(ctx);
    if (nnz > 0 && !reg_holds(cols, nnz * 4)) {
        set_err(err, errlen, "tg_ranges_begin: the columns at %p are not registered host memory (tg_host_register)",
                (const void *)cols);
        return TG_ERR_INVALID;
    }
    if (!ref_alloc(ctx, bytes)) {
        set_err(err, errlen, "tg_ranges_begin: out of device memory: %llu bytes, %llu of %llu in use",
                (unsigned long long)bytes, (unsigned long long)ctx->used, (unsigned long long)ctx->limit);
        return TG_ERR_OOM;
    }
    ctx->rg_cols = cols;
    ctx->rg_bytes = bytes;
    ctx->rg_nnz = nnz;
    ctx->rg_nvert = nvertices;
    ctx->rg_ratio = bm_ratio;
    return TG_OK;
}

int32_t tg_ranges_count(tg_ctx *ctx, const uint32_t *rows, uint64_t base, uint64_t first, uint64_t nrows,
                        const tg_range_row *entries, uint64_t nentries, uint64_t *triangles, double *kernel_ms,
                        char *err, uint64_t errlen) {
    const char *fn = "tg_ranges_count";
    if (ctx == NULL) {
        set_err(err, errlen, "%s: NULL context", fn);
        return TG_ERR_INVALID;
    }
    if (ctx->rg_bytes == 0) {
        set_err(err, errlen, "%s: no work area (tg_ranges_begin)", fn);
        return TG_ERR_INVALID;
    }
    if (rows == NULL || triangles == NULL || (entries == NULL && nentries > 0)) {
        set_err(err, errlen, "%s: NULL rows, entries or result", fn);
        return TG_ERR_INVALID;
    }
    *triangles = 0;
    if (kernel_ms) *kernel_ms = 0;
    if (first > ctx->rg_nvert || nrows > ctx->rg_nvert - first) {
        set_err(err, errlen, "%s: rows [%llu, +%llu) do not fit a graph of %llu rows", fn, (unsigned long long)first,
                (unsigned long long)nrows, (unsigned long long)ctx->rg_nvert);
        return TG_ERR_INVALID;
    }
    if (!reg_holds(rows, 2 * (nrows + 1) * 4)) {
        set_err(err, errlen, "%s: the rows at %p are not registered host memory (tg_host_register)", fn,
                (const void *)rows);
        return TG_ERR_INVALID;
    }
    const uint32_t *rowptr = rows, *bmoff = rows + nrows + 1;
    const uint64_t ncols = rowptr[nrows], nwords = bmoff[nrows];
    if (base > ctx->rg_nnz || ncols > ctx->rg_nnz - base || tg_ranges_bytes(nrows, ncols, nwords) > ctx->rg_bytes) {
        set_err(err, errlen,
                "%s: rows [%llu, +%llu) with columns [%llu, +%llu) and %llu bitmap words do not fit a graph of "
                "%llu columns or a work area of %llu bytes",
                fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)base,
                (unsigned long long)ncols, (unsigned long long)nwords, (unsigned long long)ctx->rg_nnz,
                (unsigned long long)ctx->rg_bytes);
        return TG_ERR_INVALID;
    }
    if (nentries > 0 && !reg_holds(entries, nentries * sizeof *entries)) {
        set_err(err, errlen, "%s: the entries at %p are not registered host memory (tg_host_register)", fn,
                (const void *)entries);
        return TG_ERR_INVALID;
    }
    double t0 = now_ms();
    const uint32_t *cols = ctx->rg_cols + base;
    for (uint64_t r = 0; r < nrows; r++) {
        uint64_t b = rowptr[r], e = rowptr[r + 1];
        int bad = (r == 0 && (b != 0 || bmoff[0] != 0)) || e < b || e > ncols;
        for (uint64_t k = b; !bad && k < e; k++)
            bad = cols[k] >= ctx->rg_nvert || (k > b && cols[k - 1] >= cols[k]);
        /* The bitmaps' layout: each row's words as the rule gives them. */
        const uint64_t want = !bad && e > b ? tg_ranges_bm_words(e - b, cols[b], cols[e - 1], ctx->rg_ratio) : 0;
        bad = bad || bmoff[r + 1] < bmoff[r] || bmoff[r + 1] - bmoff[r] != want;
        if (bad) {
            set_err(err, errlen,
                    "%s: malformed rows [%llu, +%llu) (offsets not from 0, decreasing or past the range's %llu "
                    "columns, a column >= %llu, a row not strictly increasing, or bitmap offsets other than "
                    "tg_ranges_bm_words's)",
                    fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)ncols,
                    (unsigned long long)ctx->rg_nvert);
            return TG_ERR_INVALID;
        }
    }
    if (nrows == 0 && (rowptr[0] != 0 || bmoff[0] != 0)) {
        set_err(err, errlen, "%s: malformed rows [%llu, +0) (offsets not from 0)", fn, (unsigned long long)first);
        return TG_ERR_INVALID;
    }
    cols = ctx->rg_cols;
    uint64_t found = 0;
    for (uint64_t i = 0; i < nentries; i++) {
        const tg_range_row r = entries[i];
        int bad = r.seg == 0 || r.seg > r.len || r.start > ctx->rg_nnz || r.len > ctx->rg_nnz - r.start;
        const uint32_t *suf = cols + r.start;
        for (uint32_t j = 0; !bad && j < r.seg; j++) {
            const uint64_t v = suf[j];
            if (v < first || v - first >= nrows) {
                bad = 1;
                break;
            }
            /* |suf[j+1:] ∩ cols(v)| by merging: both sorted, cols(v) > v. */
            uint64_t a = j + 1, k = base + rowptr[v - first];
            const uint64_t ke = base + rowptr[v - first + 1];
            while (a < r.len && k < ke) {
                if (suf[a] < cols[k]) a++;
                else if (suf[a] > cols[k]) k++;
                else {
                    found++;
                    a++;
                    k++;
                }
            }
        }
        if (bad) {
            set_err(err, errlen,
                    "%s: rows [%llu, +%llu): an entry past the %llu columns, with no column in the range or more "
                    "than its row, or a column of an entry outside the range",
                    fn, (unsigned long long)first, (unsigned long long)nrows, (unsigned long long)ctx->rg_nnz);
            return TG_ERR_INVALID;
        }
    }
    *triangles = found;
    if (kernel_ms) *kernel_ms = now_ms() - t0;
    return TG_OK;
}

int32_t tg_ranges_end(tg_ctx *ctx, char *err, uint64_t errlen) {
    if (ctx == NULL) {
        set_err(err, errlen, "tg_ranges_end: NULL context");
        return TG_ERR_INVALID;
    }
    ranges_drop(ctx);
    return TG_OK;
}
