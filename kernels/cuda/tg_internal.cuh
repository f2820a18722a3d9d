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

#include "trigrid.h"

// Dense-row bitmap index of a block (wetric.cu reads it): row v has a bitmap
// when it holds at least minlen elements and its value span (last - first +
// 1) is at most ratio times its length. Its bits are aligned to values, not
// to the row: bit d is value tg_bm_first(first) + d, the row's first value
// rounded down to a multiple of 128, and the bitmap takes tg_bm_chunks
// 4-word chunks (128 values each), so that word or chunk i of any two rows
// covers the same values when their first values share it, and the words
// of two rows are intersected without shifts or masks. Two layouts:
// compact (off set), where row v's chunks start at word 4 * off[v], built
// once when a block is loaded into a slot; and by row offsets (off NULL),
// where they start at word rowptr[v] * ceil(ratio / 32) + TG_BM_ROWPAD * v,
// which needs no scan and is what a kernel builds in scratch for a block
// without an index (a row's chunks take fewer than its ceil(ratio / 32)
// words per element plus TG_BM_ROWPAD). Either way a row's chunks start
// at a multiple of 4 words when ceil(ratio / 32) is, every word of a
// row's chunks that is not one of its elements is zero, and there are
// TG_BM_PAD readable words before the first row and after the last.
#define TG_BM_RATIO 256
#define TG_BM_MINLEN 4
#define TG_BM_PAD 8
#define TG_BM_ROWPAD 8

// Edge-row index: erow[i] is the row that holds edge min(i << TG_EROW_SHIFT,
// nnz - 1), for i in [0, (nnz >> TG_EROW_SHIFT) + 1], so the edges of run i
// lie in rows erow[i] .. erow[i + 1]. A kernel that hands out runs of
// 2^TG_EROW_SHIFT edges finds their rows with two loads instead of a
// search over rowptr (wetric, whose blocks take 256 edges).
#define TG_EROW_SHIFT 8

// Row-summary index: rsum[v] = {rowptr[v], rowptr[v + 1], first value,
// last value} of row v in 32 bits ({b, b, 0, 0} for an empty row), for
// every row of a block with fewer than 2^31 rows and elements. A kernel
// reads a row's bounds and value range with one 16-byte load instead of
// two dependent pairs (wetric, with 32-bit positions). A slot builds it at
// the first count that reads it (tg_slot_build_rsum), not at load.
#define TG_RSUM_MAX (int64_t(1) << 31)

// Row-of-edge index: rowof[e] is the row that holds edge e, for every edge
// of a block with fewer than TG_ROWOF_MAX rows and elements (4 bytes an
// edge, so only blocks of small graphs and small subtasks). A kernel that
// takes one edge a thread reads its row with one coalesced load instead of
// searching rowptr (wetric, with 32-bit positions). A slot builds it at the
// first count that reads it (tg_slot_build_rowof).
#define TG_ROWOF_MAX (int64_t(1) << 27)

struct tg_bitmap {
    const uint32_t *bits; // device; NULL: the block has no index
    const uint32_t *off;  // device, nrows + 1 entries (compact), or NULL
    uint32_t ratio, minlen;
};

__host__ __device__ __forceinline__ bool tg_bm_has(uint64_t ratio, uint32_t minlen, uint64_t len, uint32_t lo,
                                                   uint32_t hi) {
    return len >= minlen && len > 0 && (uint64_t)hi - lo + 1 <= len * ratio;
}

// The value of bit 0 of the bitmap of a row whose first value is lo, and
// the number of 4-word chunks of a row from lo to hi.
__host__ __device__ __forceinline__ uint32_t tg_bm_first(uint32_t lo) { return lo & ~127u; }
__host__ __device__ __forceinline__ uint32_t tg_bm_chunks(uint32_t lo, uint32_t hi) {
    return (hi >> 7) - (lo >> 7) + 1;
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
    // The block's dense-row bitmaps, when the slot built them at load.
    tg_bitmap bm;
    // The edge-row index (device, NULL when not built: rows >= 2^32).
    const uint32_t *erow;
    // The row-summary index (device, nrows entries; NULL when not built).
    const uint4 *rsum;
    // The row-of-edge index (device, nnz entries; NULL when not built).
    const uint32_t *rowof;
};

// Bitmap index construction (bitmap.cu). tg_bitmap_layout writes the
// compact layout's offsets (off: nrows + 1 entries, off[nrows] = the total
// in 4-word chunks) using tmp (tg_bitmap_layout_tmp bytes, device), and
// the total in 64 bits to the first 8 bytes of tmp: the offsets are valid
// only when that total is below 2^32 (they wrap otherwise).
// tg_bitmap_fill sets the bits of every row that has a bitmap (clear: zero
// its words first; the compact layout is zeroed as a whole instead). rw:
// words per element of the row-offset layout, unused when off is set.
size_t tg_bitmap_layout_tmp(int64_t nrows);
cudaError_t tg_bitmap_layout(const tg_dblock *b, uint32_t ratio, uint32_t minlen, uint32_t *off, void *tmp,
                             size_t tmp_bytes, cudaStream_t stream);
// tg_edge_rows writes the edge-row index of a block with nnz > 0 (erow:
// tg_edge_rows_len(nnz) entries).
inline int64_t tg_edge_rows_len(int64_t nnz) { return (nnz >> TG_EROW_SHIFT) + 2; }
cudaError_t tg_edge_rows(const tg_dblock *b, uint32_t *erow, cudaStream_t stream);
// tg_row_summaries writes the row-summary index of a block with 0 < nrows
// and nnz < TG_RSUM_MAX (rsum: nrows entries).
cudaError_t tg_row_summaries(const tg_dblock *b, uint4 *rsum, cudaStream_t stream);
// tg_rows_of_edges writes the row-of-edge index of a block with 0 < nnz
// and nrows, nnz < TG_ROWOF_MAX (rowof: nnz entries).
cudaError_t tg_rows_of_edges(const tg_dblock *b, uint32_t *rowof, cudaStream_t stream);
// The fill lets a programmatic dependent launch after it start early
// (griddepcontrol.launch_dependents); the dependent must wait before it
// reads a bitmap.
cudaError_t tg_bitmap_fill(const tg_dblock *b, uint32_t ratio, uint32_t minlen, uint32_t rw, const uint32_t *off,
                           uint32_t *bits, bool clear, int rows_per_warp, cudaStream_t stream);

struct tg_kernel_env {
    cudaStream_t stream;
    int device;
    int sm_count;
    size_t shared_mem_per_block_optin;
    // The context's settings (trigrid.h): every kernel reads its tuning
    // here and nowhere else; all of it is exact, only speed changes.
    const tg_settings *set;
    // Returns device scratch of at least `bytes`, reused across calls and
    // grown on demand (contents undefined). cudaErrorMemoryAllocation means
    // the subtask does not fit; the caller maps it to TG_ERR_OOM.
    cudaError_t (*scratch)(struct tg_kernel_env *env, int which, size_t bytes, void **out);
    // Starts the timed region (records the start event on the stream). A
    // kernel calls it once, after its host-side setup (settings, launch
    // shapes) and before its first GPU work, scratch included, so that the
    // event time is the subtask's GPU work as an original's timer around
    // its launches measures it, not host arithmetic with the GPU idle.
    cudaError_t (*begin)(struct tg_kernel_env *env);
    void *ctx; // opaque, for scratch()
};

// Every kernel has this signature. It must leave the triangle count of the
// subtask in *d_count (device memory, zeroed by the caller), enqueue all work
// on env->stream, and return the first CUDA error it sees. Everything it
// does per subtask on the GPU (including per-subtask preprocessing and
// scratch growth) is inside the timed region, which it opens with
// env->begin before its first GPU work.
typedef cudaError_t (*tg_kernel_fn)(const tg_dblock *ij, const tg_dblock *ik,
                                    const tg_dblock *jk, tg_kernel_env *env,
                                    unsigned long long *d_count);

cudaError_t tg_kernel_polak(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);
cudaError_t tg_kernel_trix(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);
cudaError_t tg_kernel_grouptc(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);
cudaError_t tg_kernel_trust(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);
cudaError_t tg_kernel_wetric(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *, unsigned long long *);

// Per-vertex mode (tg_count_local). A kernel with one counts like its
// tg_kernel_fn and, for every triangle found from edge e = (u, v) of ij
// and column x common to ik.row(u) and jk.row(v), adds 1 to vi[u], vj[v]
// and vk[x] and, when eij is set, to eij[e] and to eik and ejk at the
// positions of x in ik.row(u) and jk.row(v). The arrays are device
// memory, zeroed by the caller, and may alias one another (atomic adds
// only). Support fits 32 bits (tg_count_local checks the bound).
struct tg_local {
    unsigned long long *vi, *vj, *vk; // never NULL
    uint32_t *eij, *eik, *ejk;        // all NULL (per vertex only) or none
};

typedef cudaError_t (*tg_local_fn)(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk,
                                   tg_kernel_env *env, unsigned long long *d_count, const tg_local *loc);

cudaError_t tg_kernel_polak_local(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *,
                                  unsigned long long *, const tg_local *);
cudaError_t tg_kernel_wetric_local(const tg_dblock *, const tg_dblock *, const tg_dblock *, tg_kernel_env *,
                                   unsigned long long *, const tg_local *);
