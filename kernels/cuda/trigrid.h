/*
 * trigrid.h: the public C ABI of libtrigrid_cuda.so (and of the plain-C
 * reference library libtrigrid_ref.so, which implements the same ABI on the
 * CPU so that the Go loader can be tested where there is no GPU).
 *
 * Scalars and pointers only, so that a loader without cgo (purego) can bind
 * every entry. Host arrays passed in are read during the call only; the
 * library owns all device memory. Every entry that can fail returns a
 * TG_* status and, when err is not NULL, writes a NUL-terminated message of
 * at most errlen bytes (truncated if longer).
 *
 * A context is bound to one device and is not thread safe: the caller
 * serializes calls on one context (Go wraps it in a mutex). Distinct
 * contexts may be used from distinct threads.
 */
#ifndef TRIGRID_H
#define TRIGRID_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on every incompatible change of any signature or constant below. */
#define TG_ABI_VERSION 16

/* Status codes. */
#define TG_OK 0
#define TG_ERR_INVALID 1   /* bad argument: slot, kernel id, malformed CSR */
#define TG_ERR_CUDA 2      /* a CUDA call failed (message names it) */
#define TG_ERR_OOM 3       /* device memory or the context's mem_limit exhausted */
#define TG_ERR_NO_DEVICE 4 /* no usable device, or device index out of range */
#define TG_ERR_NOT_BUILT 5 /* the kernel was not compiled into this library */
#define TG_ERR_INTERNAL 6  /* a broken invariant inside the library */

/* Kernel ids for tg_count. The caller chooses the kernel of each subtask
 * (trigrid's `auto` rule lives in the caller); id 0 is not a kernel. */
#define TG_KERNEL_POLAK 1
#define TG_KERNEL_TRIX 2
#define TG_KERNEL_GROUPTC 3
#define TG_KERNEL_TRUST 4
#define TG_KERNEL_WETRIC 5
#define TG_KERNEL_COUNT 6

/* Block slots per context: a subtask needs three, the rest let a worker
 * keep blocks resident across subtasks that share them. */
#define TG_MAX_SLOTS 16

/* Indices into the stats array filled by tg_preprocess. */
#define TG_PREP_VERTICES 0     /* n, the compact id space */
#define TG_PREP_INPUT_PAIRS 1  /* pairs given */
#define TG_PREP_SELF_LOOPS 2   /* pairs with u == v, dropped */
#define TG_PREP_DUPLICATES 3   /* non-loop pairs that added no new undirected edge */
#define TG_PREP_EDGES 4        /* undirected simple edges = forward edges */
#define TG_PREP_WEDGES 5       /* sum over vertices of d(d-1)/2, undirected degree */
#define TG_PREP_MAX_DEGREE 6   /* largest undirected degree */
#define TG_PREP_MAX_FORWARD 7  /* largest forward (out-)degree */
#define TG_PREP_ISOLATED 8     /* ids that appear only in self-loops (tg_prep_ids; 0 from tg_preprocess) */
#define TG_PREP_NSTATS 9

/* Kernel settings: tuning that changes speed only, never a count. Every
 * field is an int32_t; a field marked "auto" also takes TG_SETTING_AUTO,
 * which selects the kernel's own rule by the subtask's size. The defaults
 * (tg_settings_default) are the library's best measured choice; a
 * context uses them until tg_ctx_set_settings installs others. */
#define TG_SETTING_AUTO (-1)
typedef struct tg_settings {
    int32_t slot_bitmap;       /* 1: tg_load_block builds the dense-row bitmap index; 0: never */
    int32_t trix_ratio;        /* 2: u's list is searched unless v's is longer than ratio x u's (1 = paper), 0..2^20 */
    int32_t trix_window;       /* 2048: entries of the shared u-list window, 0 (off)..2048 */
    int32_t trix_spread;       /* 8: lookups per owner search, 4, 8 or 16 */
    int32_t trix_minb;         /* 8: registers capped for 8 resident blocks; 1: uncapped */
    int32_t grouptc_ratio;     /* as trix_ratio, for grouptc */
    int32_t grouptc_window;    /* as trix_window */
    int32_t grouptc_spread;    /* as trix_spread */
    int32_t grouptc_minb;      /* as trix_minb */
    int32_t trust_warpmax;     /* auto: warp/CTA degree threshold, 1..128 */
    int32_t trust_cta_smem;    /* auto: shared bytes per CTA-tier block, 1024..65536; 0: the longest row's table */
    int32_t trust_cta_threads; /* 256: threads of a CTA-tier block, 128, 256 or 512 */
    int32_t trust_bitmap;      /* 1: bitmaps for dense rows; 0: hash tables only */
    int32_t wetric_erow;       /* 1: use the edge-row index; 0: search the rows */
    int32_t wetric_bitmap;     /* auto (256 when jk has rows of 32 or more, else 0): bitmap density ratio, 0 (off)..4096 */
    int32_t wetric_spread;     /* auto (8; 4 below 2^22 ij edges with 64-bit positions): wedges per thread, 4, 8, 16 or 32 */
    int32_t wetric_edges;      /* 256: edges per block, 64 or 256 */
    int32_t wetric_fillrpw;    /* 4: rows per warp of the bitmap build, 1..32 */
    int32_t wetric_bmmin;      /* 4: shortest row with a bitmap, 1..2^20 */
    int32_t wetric_andcost;    /* 4: cost of a bitmap word intersection (ik is jk), 0 (off)..64 */
    int32_t wetric_andmin;     /* 8: shortest u list intersected word by word, 0..2^16 */
    int32_t wetric_and4cost;   /* 4: cost of a four-word bitmap chunk, 0 (off)..64 */
    int32_t wetric_lb;         /* auto (8; 6 below 2^21 ij edges with 64-bit positions): blocks per SM the registers allow, 1 (uncapped), 6 or 8 */
    int32_t wetric_skipb;      /* 1: v's clip skipped when v has a bitmap; 0: never */
    int32_t wetric_rowcache;   /* 1: row cache on; 0: off */
    int32_t wetric_skipa;      /* 1: bitmap intersections replace clip searches when cheaper; 0: never */
    int32_t wetric_overlap;    /* 1: the wedge kernel overlaps the bitmap build (sm_90+); 0: one after the other */
    int32_t wetric_narrow;     /* 1: 32-bit positions where the subtask's sizes allow; 0: 64-bit always */
    int32_t ranges_dense;      /* 512: tg_ranges_count's window of a tail, bitmap words a warp (the last 32x values); 0 (off)..8192 */
} tg_settings;
/* Fields of tg_settings. */
#define TG_SETTINGS_FIELDS 29

typedef struct tg_ctx tg_ctx;

int32_t tg_abi_version(void);

/* Fills s with the defaults. */
void tg_settings_default(tg_settings *s);

/* Checks s and makes it the context's settings for every later call (the
 * context keeps a copy). An out-of-range field is TG_ERR_INVALID naming it;
 * the context's settings are then unchanged. */
int32_t tg_ctx_set_settings(tg_ctx *ctx, const tg_settings *s, char *err, uint64_t errlen);

/* Number of usable devices in *n (0 is not an error). */
int32_t tg_device_count(int32_t *n, char *err, uint64_t errlen);

/* Name (NUL-terminated, truncated to namelen), total and free memory in
 * bytes, multiprocessor count and compute capability of one device. */
int32_t tg_device_info(int32_t device, char *name, uint64_t namelen,
                       uint64_t *total_mem, uint64_t *free_mem,
                       int32_t *sm_count, int32_t *cc_major, int32_t *cc_minor,
                       char *err, uint64_t errlen);

/* Creates a context on device. mem_limit caps the bytes the context
 * allocates (slots, scratch, preprocessing); 0 means "free device memory at
 * creation less a 5% reserve". Exceeding it is TG_ERR_OOM, like a failed
 * cudaMalloc. Every allocation is counted rounded up to 256 bytes (an
 * empty one as 16 first); a context holds 256 bytes of its own, a slot its
 * offsets and its columns in two allocations, and best-effort indexes that
 * are built only where they fit and freed first when memory is needed. */
int32_t tg_ctx_create(int32_t device, uint64_t mem_limit, tg_ctx **out,
                      char *err, uint64_t errlen);

void tg_ctx_destroy(tg_ctx *ctx);

/* Copies a CSR block into slot (0 <= slot < TG_MAX_SLOTS), replacing what
 * the slot held and reusing its device buffers when they are large enough.
 * rowptr has nrows+1 entries, rowptr[0] == 0, rowptr[nrows] == nnz,
 * non-decreasing; every column is < ncols and every row strictly
 * increasing, which the device checks (a malformed block is
 * TG_ERR_INVALID). nrows == 0 or nnz == 0 are valid empty blocks.
 *
 * With async 0 the block is copied, checked and indexed before the call
 * returns. With async 1 the call returns once the copies are enqueued on
 * the context's copy stream, a stream of its own beside the one kernels
 * run on, so that the copy overlaps the kernels of later tg_count calls on
 * other slots: from page-locked memory (tg_host_register) the copy engine
 * reads the arrays after the call returns; from other host memory the
 * copy may be done before it returns. Either way the arrays must then stay
 * allocated and unchanged until the load completes: at tg_load_wait for
 * the slot, at a tg_count, tg_load_block or tg_free_block naming the slot,
 * or at tg_ctx_destroy. The arguments are checked and the slot's device
 * memory is reserved in the call (TG_ERR_OOM leaves the slot empty); the
 * block's device-side check, its maximum degree and its indexes are made
 * when the load completes, and a malformed block is reported by the call
 * that completes it. */
int32_t tg_load_block(tg_ctx *ctx, int32_t slot, const uint64_t *rowptr,
                      int64_t nrows, const uint32_t *cols, int64_t nnz,
                      int64_t ncols, int32_t async, char *err, uint64_t errlen);

/* Completes slot's pending load (tg_load_block with async 1), if it has
 * one: waits for its copy, checks the block and builds its indexes. */
int32_t tg_load_wait(tg_ctx *ctx, int32_t slot, char *err, uint64_t errlen);

/* Page-locks bytes of existing host memory at p in place (cudaHostRegister,
 * portable to every context), so that copies from it or into it, by
 * tg_load_block or by any entry given a pointer into it, run at the
 * bus's speed without staging. Pinning memory the host has already touched
 * costs far less than allocating pinned memory and copying into it. A
 * range that overlaps one
 * already registered is TG_ERR_INVALID; TG_ERR_OOM when the host will not
 * lock more. Needs no context and may be called from any thread.
 * tg_host_unregister releases the range (p as registered) and must not be
 * called while a load from it is pending; the memory must stay allocated
 * until then. The reference library pins nothing and copies as before, but
 * keeps the ranges, refusing overlaps, unknown ranges and the release of a
 * range a pending load still reads, so that tests catch a caller's misuse. */
int32_t tg_host_register(void *p, uint64_t bytes, char *err, uint64_t errlen);
int32_t tg_host_unregister(void *p, char *err, uint64_t errlen);

/* Releases a slot's device memory. */
int32_t tg_free_block(tg_ctx *ctx, int32_t slot, char *err, uint64_t errlen);

/* Counts the subtask (slot_ij, slot_ik, slot_jk) with kernel (a
 * TG_KERNEL_* id): for every edge (u, v) of ij, |ik.row(u) ∩ jk.row(v)|.
 * Index spaces must agree: ij.nrows == ik.nrows, ij.ncols == jk.nrows,
 * ik.ncols == jk.ncols. *kernel_ms is the CUDA-event time of all GPU work
 * for the subtask (including the kernel's own per-subtask preparation), or
 * the CPU time in the reference library. */
int32_t tg_count(tg_ctx *ctx, int32_t kernel, int32_t slot_ij,
                 int32_t slot_ik, int32_t slot_jk, uint64_t *triangles,
                 double *kernel_ms, char *err, uint64_t errlen);

/* One subtask of tg_count_rows: its ij and ik as host CSR blocks of nrows
 * rows (offsets from 0, as tg_load_block takes them; ik_rowptr NULL: ik is
 * ij). */
typedef struct tg_rows_subtask {
    const uint64_t *ij_rowptr;
    const uint32_t *ij_cols;
    const uint64_t *ik_rowptr;
    const uint32_t *ik_cols;
    int64_t nrows;
} tg_rows_subtask;

/* The most subtasks one tg_count_rows call counts. */
#define TG_ROWS_MAX_SUBTASKS 64

/* Counts nsubs subtasks that share the jk in slot_jk, streaming each
 * one's ij and ik through the device in row ranges: rows of ij and ik are
 * the same I-local space, so a subtask's ranges' counts sum to its count.
 * While the kernel counts one range, the next (of the same subtask or the
 * next one) is copied on the copy stream, its offsets rebased and checked
 * (a malformed range is TG_ERR_INVALID naming the subtask, block and
 * rows). Each subtask is cut into the fewest ranges (at least two when it
 * has two rows) whose two sets of buffers fit in the context's free
 * memory, less a sixteenth of its limit for the kernel's scratch
 * (tg_rows.h states the rule); the buffers are kept for later calls and
 * given up when a load needs room. TG_ERR_OOM when even single rows do
 * not fit. Index spaces: ij's columns < jk.nrows, ik's < jk.ncols. The
 * host arrays are read until the call returns (page-locked memory,
 * tg_host_register, copies at the bus's rate). triangles[i] and, when
 * kernel_ms is not NULL, kernel_ms[i] (the CUDA-event time of its ranges'
 * GPU work) are subtask i's; *parts is the number of ranges. */
int32_t tg_count_rows(tg_ctx *ctx, int32_t kernel, int32_t slot_jk,
                      const tg_rows_subtask *subs, int32_t nsubs,
                      uint64_t *triangles, double *kernel_ms, int64_t *parts,
                      char *err, uint64_t errlen);

/* Where tg_count_local adds a subtask's per-vertex and per-edge counts:
 * host arrays, each NULL when not wanted. A triangle found from edge
 * (u, v) of ij and a column x common to ik.row(u) and jk.row(v) adds 1 to
 * vi[u], vj[v] and vk[x], and to the support of its three edges: eij,
 * eik and ejk at the positions of (u, v), (u, x) and (v, x) in their
 * block's columns. Counts are added, never stored. Arrays may be the same
 * pointer (the whole graph passes one vertex array as vi, vj and vk and
 * one edge array as eij, eik and ejk): the counts of every role are added
 * to it. */
typedef struct tg_local_out {
    uint64_t *vi;  /* ij.nrows entries: per I-local vertex (a row of ij and ik) */
    uint64_t *vj;  /* jk.nrows entries: per J-local vertex (a column of ij, a row of jk) */
    uint64_t *vk;  /* ik.ncols (= jk.ncols) entries: per K-local vertex */
    uint64_t *eij; /* ij.nnz entries: support of each edge of ij */
    uint64_t *eik; /* ik.nnz entries */
    uint64_t *ejk; /* jk.nnz entries */
} tg_local_out;

/* Counts the subtask like tg_count (pending loads of its slots complete
 * first) and adds its per-vertex (and, when any
 * of eij, eik, ejk is set, per-edge) counts to out's arrays. Kernels with
 * a per-vertex mode: TG_KERNEL_POLAK and TG_KERNEL_WETRIC; another id is
 * TG_ERR_INVALID naming them. The device counts vertices in 64 bits and
 * support in 32 bits, which cannot overflow: an entry of one role counts
 * distinct vertices of one index space, so the sum of all roles is below
 * ij.nrows + jk.nrows + ik.ncols, which must be below 2^32 for per-edge
 * counts (TG_ERR_INVALID otherwise; count through partitions). The arrays
 * live on the device for the call (TG_ERR_OOM when they do not fit
 * beside the blocks). *kernel_ms is the CUDA-event time of the GPU work:
 * zeroing the device arrays and the kernel, not the copy back. */
int32_t tg_count_local(tg_ctx *ctx, int32_t kernel, int32_t slot_ij,
                       int32_t slot_ik, int32_t slot_jk, const tg_local_out *out,
                       uint64_t *triangles, double *kernel_ms, char *err,
                       uint64_t errlen);

/* Device bytes the context holds now, its limit, and the most it has held
 * since it was created (any pointer may be NULL). */
int32_t tg_mem_usage(tg_ctx *ctx, uint64_t *used, uint64_t *limit, uint64_t *peak);

/* GPU preprocessing (Polak: everything on the GPU). edges holds npairs
 * (u, v) pairs of compact ids (2*npairs uint32, u then v), every id <
 * nvertices. The library uploads them, symmetrizes, drops self-loops and
 * duplicates, ranks vertices by (undirected degree, id), relabels by rank,
 * orients every edge from lower to higher rank and builds the forward CSR
 * (nvertices rows, columns sorted) in slot. When rowptr_out / cols_out /
 * rank_out are not NULL the forward CSR (nvertices+1 offsets, up to npairs
 * columns) and rank (nvertices entries: new id of each compact id) are
 * copied back. stats receives TG_PREP_NSTATS values; ms the CUDA-event time
 * of the GPU work including transfers. nvertices must be < 2^32 - 1;
 * npairs may be 2^31 or more. */
int32_t tg_preprocess(tg_ctx *ctx, int32_t slot, const uint32_t *edges,
                      uint64_t npairs, uint64_t nvertices,
                      uint64_t *rowptr_out, uint32_t *cols_out,
                      uint32_t *rank_out, uint64_t *stats, double *ms,
                      char *err, uint64_t errlen);

/* GPU preprocessing from the input's own ids: npairs (u, v) pairs in
 * input order, each id a little-endian unsigned integer of width bytes (4
 * or 8), any value. They are at edges in host memory (from_input 0), or
 * in the context's input buffer (from_input 1, edges unused; see
 * tg_input_alloc): its first npairs pairs, every byte of which
 * tg_input_copy_async must have copied (the copied bytes must sum to
 * npairs * 2 * width, else TG_ERR_INVALID); the call waits for the copies,
 * and the buffer is consumed, freed whether the call succeeds or not.
 *
 * The library compacts the ids as the host does (the ids with a non-loop
 * edge, in ascending order, become 0..n-1; ids seen only in self-loops are
 * counted in TG_PREP_ISOLATED and dropped), then does what tg_preprocess
 * does with the compact pairs, building the forward CSR in slot (n rows).
 * It copies back what a caller that splits the forward graph into blocks
 * needs (each output pointer may be NULL: not wanted): the forward CSR's
 * n+1 offsets into rowptr_out and its columns into cols_out (room for
 * npairs), and into orig_out (n entries) the input id of each forward id.
 * max_vertices is the room of orig_out and rowptr_out (one more): a graph
 * of more than max_vertices vertices is TG_ERR_INVALID when either is
 * given. stats receives TG_PREP_NSTATS values (TG_PREP_VERTICES is n), ms
 * the CUDA-event time of the GPU work, including the upload from host
 * memory. More than 2^32 - 2 distinct ids is TG_ERR_INVALID; TG_ERR_OOM
 * means the pairs do not fit the device. */
int32_t tg_prep_ids(tg_ctx *ctx, int32_t slot, int32_t from_input,
                    const void *edges, uint64_t npairs, int32_t width,
                    uint64_t max_vertices, uint64_t *rowptr_out,
                    uint32_t *cols_out, uint64_t *orig_out, uint64_t *stats,
                    double *ms, char *err, uint64_t errlen);

/* The input's pairs uploaded in pieces while the caller still reads the
 * rest, then preprocessed where they are (tg_prep_ids with from_input 1),
 * so that the upload overlaps the read. tg_input_alloc reserves a device
 * buffer of bytes (8 a pair of 32-bit ids, 16 of 64-bit ones), freeing any
 * earlier one; TG_ERR_OOM when it does not fit. tg_input_copy_async
 * enqueues a copy of bytes from host memory src into the buffer at offset,
 * on the copy stream, and returns: from registered memory
 * (tg_host_register) the copy engine reads src after the call returns, so
 * src must stay allocated, unchanged and registered until the buffer is
 * consumed or freed (tg_prep_ids, tg_input_free, tg_input_alloc,
 * tg_ctx_destroy). A range beyond the buffer, or no buffer, is
 * TG_ERR_INVALID. tg_input_free waits for the pending copies and frees the
 * buffer (none: a no-op). */
int32_t tg_input_alloc(tg_ctx *ctx, uint64_t bytes, char *err, uint64_t errlen);
int32_t tg_input_copy_async(tg_ctx *ctx, uint64_t offset, const void *src,
                            uint64_t bytes, char *err, uint64_t errlen);
int32_t tg_input_free(tg_ctx *ctx, char *err, uint64_t errlen);

/* Splits the forward graph that slot src holds (as tg_prep_ids leaves it:
 * n rows, n columns, rows sorted) into the p x p blocks of a 2D partition
 * on the device, block (i, j) into slot slots[i*p + j]. The p*p slots are
 * distinct; src may be one of them (its forward graph is given up once
 * the blocks are made); what the other target slots held is released
 * first. Groups: without ranges (nranges == 0) vertex v is in group
 * v mod p with local id v div p (the hash scheme); with ranges, range r
 * holds the ids bounds[r] .. bounds[r+1]-1 (bounds: nranges+1 entries,
 * non-decreasing from 0 to n) and belongs to group groups[r], whose local
 * ids number its ranges' vertices in id order (an id lies in the last
 * range whose start is at most the id). Block (i, j) has group i's
 * vertices as rows, in local id order, and their columns in group j as
 * group j's local ids, in the order of the forward graph's rows: the
 * blocks a host split by the same groups makes. nnz_out (p*p entries)
 * receives each block's edges. The blocks are loaded as by tg_load_block
 * (checked, indexes built). On an error the target slots are left empty
 * and src as it was (TG_ERR_OOM: the blocks do not fit beside the forward
 * graph), except when a block fails its own check, a broken invariant
 * that leaves src given up too. p is at most 4. */
int32_t tg_split_blocks(tg_ctx *ctx, int32_t src, int32_t p, const int32_t *slots,
                        int32_t nranges, const uint64_t *bounds,
                        const int32_t *groups, int64_t *nnz_out, char *err,
                        uint64_t errlen);

/* Copies the block that slot holds back to host memory: its nrows+1
 * offsets into rowptr_out and its nnz columns into cols_out (either may be
 * NULL: not wanted), returning when both copies are done. Into memory
 * registered with tg_host_register the copies run at the bus's speed.
 * A slot with a pending load completes it first; an empty slot is
 * TG_ERR_INVALID. */
int32_t tg_block_out(tg_ctx *ctx, int32_t slot, uint64_t *rowptr_out,
                     uint32_t *cols_out, char *err, uint64_t errlen);

/* Preprocessing in pieces, for pairs that do not fit the device for
 * tg_preprocess: the caller keeps the keys in host memory and the device
 * transforms, sorts and deduplicates them a piece at a time (kernels/gpu's
 * orientInPieces: the pairs' keys sorted in runs, key ranges of the runs
 * merged with their duplicates dropped and their degrees counted, ranks
 * made on the host, the runs oriented, the forward CSR built by key range).
 *
 * tg_pieces_begin reserves the work area: nvertices 32-bit vertex words,
 * zeroed (degrees, then ranks), a copy of the id map (id_words words, an
 * even number; NULL and 0: none), and room for pieces of up to max_items
 * 8-byte items, or as many as fit (*capacity receives the count), with
 * their sort's scratch. Fewer than TG_PIECES_MIN_ITEMS items (or the vertex
 * words and the map alone) not fitting is TG_ERR_OOM, with nothing held. It
 * frees an earlier area; tg_pieces_end (and tg_ctx_destroy) frees it. The
 * id map maps the ids of TG_PIECES_PAIRS to vertices, two words for each 64
 * ids: an id u with m[2(u>>6)] holding bit u&63 becomes the vertex
 * m[2(u>>6)+1] + the bits of m[2(u>>6)] below bit u&63; an unmarked id, or
 * one beyond the map, breaks the op's rule unless in a self-loop.
 *
 * tg_pieces_sort uploads the items of nspans spans of host memory at base
 * (spans: 2*nspans words, each span's first item and its item count; at
 * most capacity items together), makes each a key by op, sorts the keys
 * ascending and copies them back to out (room for the items uploaded),
 * *nout their number. out may overlap base's spans: the uploads complete
 * before anything is copied back. out NULL writes them back over the
 * spans themselves, in the spans' order, each span filled before the next
 * (the caller's keys sorted in place without a second host array).
 *   TG_PIECES_PAIRS: an item is a pair of 32-bit ids (u, v), both below
 *     nvertices (or, with an id map, mapped to vertices u', v'); its key is
 *     (min(u, v) << 32) | max(u, v) of the vertices. A self-loop (u == v)
 *     is dropped and counted into *nloops (when not NULL).
 *   TG_PIECES_KEYS: an item is a key (a << 32) | b, a and b below
 *     nvertices, kept as it is.
 *   TG_PIECES_ORIENT: an item is a key as for TG_PIECES_KEYS; it becomes
 *     (min(r[a], r[b]) << 32) | max(r[a], r[b]) for the vertex words r.
 * flags: TG_PIECES_UNIQUE drops repeated keys; TG_PIECES_DEGREES (with
 * TG_PIECES_UNIQUE) adds one to vertex words a and b for each key kept.
 * An item breaking its op's rule is TG_ERR_INVALID (the message gives how
 * many), with nothing copied back or counted.
 *
 * tg_pieces_csr uploads and sorts keys as tg_pieces_sort with
 * TG_PIECES_KEYS, and copies back the forward CSR's part for rows row0 ..
 * row0 + nrows - 1: cols receives each key's low word in key order (*nout
 * of them), counts the number of keys of each of the nrows rows. A key of
 * another row, or a repeated key, is TG_ERR_INVALID. nrows is at most the
 * capacity. cols NULL writes the columns back over the spans themselves as
 * 32-bit words, in the spans' order, each span (two words an item) filled
 * before the next.
 *
 * tg_pieces_vertices copies the nvertices vertex words to host (to_device
 * 0) or from it (1).
 *
 * tg_pieces_rank ranks the vertices by (degree, id) ascending, the degrees
 * being the vertex words (as TG_PIECES_DEGREES counted them), which then
 * hold the ranks, and copies the ranks to rank (nvertices words);
 * *wedges receives the sum of d(d-1)/2 over the degrees, *max_degree the
 * largest. nvertices above the capacity is TG_ERR_INVALID (the caller then
 * ranks on the host through tg_pieces_vertices). */
#define TG_PIECES_MIN_ITEMS 1024
#define TG_PIECES_PAIRS 0
#define TG_PIECES_KEYS 1
#define TG_PIECES_ORIENT 2
#define TG_PIECES_UNIQUE 1
#define TG_PIECES_DEGREES 2
int32_t tg_pieces_begin(tg_ctx *ctx, uint64_t nvertices, uint64_t max_items,
                        const uint64_t *id_map, uint64_t id_words,
                        uint64_t *capacity, char *err, uint64_t errlen);
int32_t tg_pieces_sort(tg_ctx *ctx, int32_t op, int32_t flags, const void *base,
                       const uint64_t *spans, int32_t nspans, uint64_t *out,
                       uint64_t *nout, uint64_t *nloops, char *err,
                       uint64_t errlen);
int32_t tg_pieces_csr(tg_ctx *ctx, uint64_t *base, const uint64_t *spans,
                      int32_t nspans, uint64_t row0, uint64_t nrows,
                      uint32_t *cols, uint32_t *counts, uint64_t *nout,
                      char *err, uint64_t errlen);
int32_t tg_pieces_vertices(tg_ctx *ctx, uint32_t *words, int32_t to_device,
                           char *err, uint64_t errlen);
int32_t tg_pieces_rank(tg_ctx *ctx, uint32_t *rank, uint64_t *wedges,
                       uint64_t *max_degree, char *err, uint64_t errlen);
int32_t tg_pieces_end(tg_ctx *ctx, char *err, uint64_t errlen);

/* tg_ranges_*: counts a forward graph whose columns stay in host memory,
 * for a graph larger than the device. The rows are cut into ranges; a
 * range's rows are copied to the device and checked, and for every row u
 * with columns in the range, the kernel reads u's columns from the first
 * of those to the row's end straight from host memory over the bus (no
 * staging copy) and, for each column v in the range, adds
 * |cols(u) ∩ cols(v)| with cols(v) looked up on the device (in its bitmap
 * when it has one, else by binary search). Every forward
 * edge (u, v) is counted once, in the range holding v, so the ranges'
 * counts sum to the graph's.
 *
 * tg_ranges_begin takes the whole graph's nnz columns (host memory
 * registered with tg_host_register, which maps it for the kernels) of
 * nvertices rows and reserves a work area of bytes (one allocation;
 * TG_ERR_OOM when it does not fit); bm_ratio (0 to TG_RANGES_BM_MAX_RATIO,
 * 0: no bitmaps) decides which rows get bitmaps (tg_ranges_bm_words). A
 * range of nrows rows, m columns and w bitmap words needs
 * tg_ranges_bytes(nrows, m, w) of it, and loads the ranges' kernels, so
 * that no count pays for their loading. tg_ranges_end (and tg_ctx_destroy)
 * frees it.
 *
 * tg_ranges_count counts rows [first, first + nrows), whose columns are
 * the graph's [base, base + rows[nrows]). rows (registered host memory)
 * holds 2 (nrows + 1) words: the rows' offsets from base (rows[0] = 0,
 * row first + i from rows[i] to rows[i+1]), then their bitmaps' offsets
 * from the range's first word (b = rows + nrows + 1, b[0] = 0: row
 * first + i has words [b[i], b[i+1]), as many as tg_ranges_bm_words gives
 * for it, which the device checks). A range's columns and bitmap words
 * are each below 2^32. entries is the
 * nentries rows u that have columns in the range (registered host memory,
 * read by the kernel). A column of entries outside the range, an entry
 * past the columns, malformed rows (offsets not from 0, decreasing or
 * past the graph's columns, a column >= nvertices, a row not strictly
 * increasing) or a bitmap layout other than the rule's are
 * TG_ERR_INVALID. *kernel_ms is
 * the CUDA-event time of the range's GPU work (copy, check, bitmaps and
 * count), or the CPU time in the reference. */
typedef struct tg_range_row {
    uint64_t start; /* index of u's first column in the range */
    uint32_t seg;   /* u's columns in the range: cols[start, start + seg) */
    uint32_t len;   /* u's columns from start to the row's end */
} tg_range_row;
/* With tg_ranges_begin's ratio, a row of len columns from lo to hi has a
 * bitmap of its values lo..hi when it has at least TG_RANGES_BM_MINLEN
 * columns spread over at most ratio values each:
 * tg_ranges_bm_words(len, lo, hi, ratio) words (0: none). */
#define TG_RANGES_BM_MINLEN 8
#define TG_RANGES_BM_MAX_RATIO 4096
#define tg_ranges_bm_words(len, lo, hi, ratio)                                 \
    ((uint64_t)(len) >= TG_RANGES_BM_MINLEN &&                                 \
             (uint64_t)(hi) - (uint64_t)(lo) + 1 <=                            \
                 (uint64_t)(len) * (uint64_t)(ratio)                           \
         ? ((uint64_t)(hi) - (uint64_t)(lo) + 32) / 32                         \
         : 0)
/* The work area of a range of nrows rows, ncols columns and words bitmap
 * words: the check words (256 bytes), the offsets and the bitmaps'
 * offsets (a word a row each, together in 256-byte granules), each row's
 * first column in the window (a word a row) and the columns (together in
 * granules), the bitmaps. */
#define tg_ranges_granules(b) (((uint64_t)(b) + 255) / 256 * 256)
#define tg_ranges_bytes(nrows, ncols, words)                                   \
    (256 + tg_ranges_granules(((uint64_t)(nrows) + 1) * 8) +                   \
     tg_ranges_granules(((uint64_t)(nrows) + (uint64_t)(ncols)) * 4) +         \
     (uint64_t)(words) * 4)
int32_t tg_ranges_begin(tg_ctx *ctx, const uint32_t *cols, uint64_t nnz,
                        uint64_t nvertices, uint64_t bytes, uint32_t bm_ratio,
                        char *err, uint64_t errlen);
int32_t tg_ranges_count(tg_ctx *ctx, const uint32_t *rows, uint64_t base,
                        uint64_t first, uint64_t nrows,
                        const tg_range_row *entries,
                        uint64_t nentries, uint64_t *triangles,
                        double *kernel_ms, char *err, uint64_t errlen);
int32_t tg_ranges_end(tg_ctx *ctx, char *err, uint64_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* TRIGRID_H */
