// Core-private declarations shared by core.cu, slots.cu, count.cu and
// preprocess.cu. Kernels do not include this: they see tg_internal.cuh only.
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

#include "tg_internal.cuh"
#include "trigrid.h"
#include "tg_settings.h"

#define TG_SCRATCH_BUFS 8
#define TG_MAX_ALLOCS 128

struct tg_slot {
    uint64_t *rowptr = nullptr; // device
    uint32_t *cols = nullptr;   // device
    size_t rowptr_cap = 0;      // entries
    size_t cols_cap = 0;        // entries
    bool loaded = false;
    // upper: every column is greater than its row (a diagonal block of a
    // forward graph). Kernels use it to search only the tail of a row when
    // all three blocks are this one.
    bool upper = false;
    // The block's indexes (blk.bm, blk.erow, blk.rsum, blk.rowof), when built. Their
    // buffers (and the bitmap layout's temporary) are kept across loads of
    // the slot, of cap bytes each, so that reloading a slot allocates
    // nothing when they are large enough; idle ones are freed first when
    // memory is needed (tg_drop_idle_indexes).
    uint32_t *bm_off = nullptr;
    uint32_t *bm_bits = nullptr;
    uint32_t *erow = nullptr;
    uint4 *rsum = nullptr;
    bool rsum_tried = false; // tg_slot_build_rsum ran for this load
    uint32_t *rowof = nullptr;
    bool rowof_tried = false; // tg_slot_build_rowof ran for this load
    void *bm_tmp = nullptr;
    size_t bm_off_cap = 0, bm_bits_cap = 0, erow_cap = 0, rsum_cap = 0, rowof_cap = 0, bm_tmp_cap = 0;
    tg_dblock blk = {};
    // pending: tg_load_block (async) enqueued the copies into rowptr and cols
    // on the copy stream, recorded copied after them, and tg_slot_complete
    // has not yet checked the block (loaded is false until it has).
    bool pending = false;
    cudaEvent_t copied = nullptr; // created on first use, kept across loads
};

struct tg_alloc {
    void *p = nullptr;
    size_t bytes = 0;
};

struct tg_ctx {
    int device = 0;
    cudaStream_t stream = nullptr;
    // copy: host-to-device copies of tg_load_block (async), so that they run
    // beside the kernels of stream.
    cudaStream_t copy = nullptr;
    cudaEvent_t ev_start = nullptr, ev_stop = nullptr;
    uint64_t limit = 0; // bytes this context may hold on the device
    uint64_t used = 0;
    uint64_t peak = 0; // the most used has been
    tg_slot slots[TG_MAX_SLOTS];
    void *scratch[TG_SCRATCH_BUFS] = {};
    size_t scratch_cap[TG_SCRATCH_BUFS] = {};
    tg_alloc allocs[TG_MAX_ALLOCS];
    unsigned long long *d_count = nullptr; // device, 4 words
    unsigned long long *h_count = nullptr; // pinned host, 4 words
    tg_kernel_env env = {};
    tg_settings set = {}; // env.set points here
    // Slots of the subtask tg_count is running (-1: none), whose bitmaps
    // must stay when scratch needs room.
    int32_t active[3] = {-1, -1, -1};
    bool timing = false; // ev_start recorded for the current tg_count
    // The input buffer of tg_input_alloc (device, accounted), its size and
    // the bytes tg_input_copy_async has enqueued into it.
    void *input = nullptr;
    uint64_t input_bytes = 0, input_copied = 0;
    // tg_count_rows' sets of row-range buffers (TG_ROWS_SETS), one allocation of
    // rows_cap bytes each (kept across its calls while rows_held), carved
    // per call; per set the events: copied and checked, kernel done, kernel
    // start and stop.
    struct {
        void *arena = nullptr;
        cudaEvent_t copied = nullptr, checked = nullptr, done = nullptr, k0 = nullptr, k1 = nullptr;
    } rows[3]; // TG_ROWS_SETS (tg_rows.h)
    // The stream of tg_count_rows' checks, of the device's highest
    // priority: a range's check runs beside the kernel counting the range
    // before, so that the next kernel is queued before that one ends.
    cudaStream_t rows_stream = nullptr;
    uint64_t rows_cap = 0;
    bool rows_held = false;
    unsigned long long *rows_check = nullptr;   // device, 16 words
    unsigned long long *rows_h_check = nullptr; // pinned host, 16 words
    // tg_pieces_begin's work area (pieces.cu): the vertex words, the id
    // map's words (ids), two key buffers of cap items, the sort's scratch
    // and the unique count.
    struct {
        uint32_t *vert = nullptr;
        uint64_t *ids = nullptr;
        uint64_t *a = nullptr, *b = nullptr;
        void *tmp = nullptr;
        int64_t *nsel = nullptr;
        size_t tmp_bytes = 0;
        uint64_t cap = 0, nvert = 0, id_words = 0;
    } pieces;
    // tg_ranges_begin's work area (ranges.cu): one allocation of bytes,
    // carved per range into its offsets, columns and bitmaps, and the
    // graph's columns in host memory as the kernels address them.
    struct {
        void *arena = nullptr;
        uint64_t bytes = 0, nnz = 0, nvert = 0;
        uint32_t ratio = 0; // the bitmaps' rule (tg_ranges_bm_words)
        const uint32_t *host = nullptr;  // the host columns
        const uint32_t *hcols = nullptr; // their device address
    } ranges;
};

void tg_set_err(char *err, uint64_t errlen, const char *fmt, ...);
// Returns from the calling entry with the status of a failed CUDA call,
// its message naming the entry (fn) and the step (what); the caller has
// locals where (a char array), fn, err and errlen.
#define TG_STEP(call, what)                                                    \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            snprintf(where, sizeof where, "%s: %s", fn, what);                 \
            return tg_cuda_status(e_, err, errlen, where);                     \
        }                                                                      \
    } while (0)
int32_t tg_cuda_status(cudaError_t e, char *err, uint64_t errlen, const char *where);
cudaError_t tg_ctx_malloc(tg_ctx *ctx, void **p, size_t bytes);
void tg_ctx_free(tg_ctx *ctx, void *p);
void tg_alloc_note(tg_ctx *ctx, void *p, size_t bytes);
size_t tg_alloc_forget(tg_ctx *ctx, void *p);

// Makes sure slot s has room for nrows+1 offsets and nnz columns, keeping
// its buffers when they are large enough.
cudaError_t tg_slot_reserve(tg_ctx *ctx, tg_slot *s, int64_t nrows, int64_t nnz);
// Frees a slot's indexes and their buffers (not its CSR).
void tg_slot_drop_index(tg_ctx *ctx, tg_slot *s);
// Frees the indexes of every slot but the active ones, to make room (they
// are an accelerator: kernels rebuild what they need in scratch or do
// without).
// Returns whether anything was freed. The stream must be idle.
bool tg_drop_idle_indexes(tg_ctx *ctx);
// Builds a loaded slot's row-summary index (blk.rsum) once per load, where
// it fits; tg_count calls it for the blocks wetric reads it from, so that
// blocks only counted in row ranges (which never read it) go without.
cudaError_t tg_slot_build_rsum(tg_ctx *ctx, tg_slot *s);
// The same for the row-of-edge index (blk.rowof), which wetric reads from
// ij.
cudaError_t tg_slot_build_rowof(tg_ctx *ctx, tg_slot *s);
// Checks a slot's device CSR (columns < ncols, rows strictly increasing) and
// fills blk.max_degree and upper. Synchronizes the stream.
int32_t tg_slot_finish(tg_ctx *ctx, tg_slot *s, char *err, uint64_t errlen);
// Completes a pending asynchronous load of slot: the stream waits
// for its copy, then tg_slot_finish checks it and builds its indexes. A slot
// that is not pending is left as it is.
int32_t tg_slot_complete(tg_ctx *ctx, int32_t slot, char *err, uint64_t errlen);

// The preamble of a count on three slots (tg_count, tg_count_local, whose
// name prefixes every message): makes the context's device current,
// completes the slots' pending loads outside any timed region, checks that
// each is loaded and that their index spaces agree (ij.rows = ik.rows,
// ij.cols = jk.rows, ik.cols = jk.cols), and points ij, ik and jk at them.
int32_t tg_subtask_blocks(tg_ctx *ctx, const char *name, const int32_t slots[3], const tg_dblock **ij,
                          const tg_dblock **ik, const tg_dblock **jk, char *err, uint64_t errlen);

// Marks a count's three slots active for its lifetime: scratch growth may
// evict other slots' bitmap indexes, never theirs.
struct tg_active_guard {
    tg_ctx *c;
    tg_active_guard(tg_ctx *c_, const int32_t s[3]) : c(c_) {
        for (int i = 0; i < 3; i++) c->active[i] = s[i];
    }
    ~tg_active_guard() {
        for (int i = 0; i < 3; i++) c->active[i] = -1;
    }
};
// The kernel of a TG_KERNEL_* id (nullptr for another) and its name.
tg_kernel_fn tg_kernel_by_id(int32_t k);
const char *tg_kernel_name(int32_t k);

// Checks a device CSR of nrows rows and nnz columns (one warp per row):
// out[0] |= malformed (offsets decrease or pass nnz, a column >= ncols, a
// row not strictly increasing), out[1] = max(out[1], longest row), out[2]
// |= some column <= its row. Reads no column past nnz.
__global__ void tg_check_block(const uint64_t *__restrict__ rowptr, const uint32_t *__restrict__ cols,
                               int64_t nrows, int64_t ncols, uint64_t nnz, unsigned long long *out);

// Frees the row-range buffers and check words of tg_count_rows (idle
// between its calls), to make room; returns whether there were any.
bool tg_drop_row_buffers(tg_ctx *ctx);
// Frees everything tg_count_rows made (buffers, events); at tg_ctx_destroy.
void tg_rows_destroy(tg_ctx *ctx);
// Frees tg_pieces_begin's work area (none: a no-op).
void tg_pieces_drop(tg_ctx *ctx);
// Frees tg_ranges_begin's work area (none: a no-op).
void tg_ranges_drop(tg_ctx *ctx);

// Waits for a pending copy into s's buffers and drops the pending load, so
// that the buffers can be reused or freed.
cudaError_t tg_slot_settle(tg_slot *s);
