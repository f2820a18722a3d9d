// Indexes of a block (tg_internal.cuh): the dense-row bitmaps (layout by a
// scan, then the fill; the rule for which rows get one is there too) and
// the edge-row index, built at load; the row-summary and row-of-edge
// indexes, built at the first count that reads them. wetric.cu is the reader.
#include "tg_internal.cuh"

#include <algorithm>

#include <cub/device/device_scan.cuh>

namespace {

// tg_bitmap_layout's scratch: the 64-bit total in the first granule, the
// scan's room after it.
constexpr size_t kLayoutHead = 256;

// Per row: its bitmap's size in 4-word chunks (tg_bm_chunks; 0 without
// one; at most 2^25, as values are 32-bit). The total over all rows goes into *total
// in 64 bits, so that the caller can tell whether the 32-bit offsets of
// the scan hold it.
__global__ void bitmap_chunks(const uint64_t *__restrict__ rp, const uint32_t *__restrict__ c, int64_t nrows,
                              uint32_t ratio, uint32_t minlen, uint32_t *off, unsigned long long *total) {
    const int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long n = 0;
    if (v < nrows) {
        const uint64_t b0 = rp[v], b1 = rp[v + 1];
        if (b1 > b0) {
            const uint32_t lo = c[b0], hi = c[b1 - 1];
            if (tg_bm_has(ratio, minlen, b1 - b0, lo, hi)) n = tg_bm_chunks(lo, hi);
        }
    }
    if (v <= nrows) off[v] = (uint32_t)n; // off[nrows] = 0 turns into the total
    for (int o = 16; o > 0; o >>= 1) n += __shfl_xor_sync(0xffffffffu, n, o);
    if ((threadIdx.x & 31) == 0 && n) atomicAdd(total, n);
}

// One warp per rpw rows (rpw <= 32): lane l < rpw tests row base + l, then
// the warp clears (when asked) and sets the words of each row that gets a
// bitmap, one row after the other. rpw 1 is a warp per row; larger rpw
// launch rpw times fewer threads, most of which would only find that their
// row has no bitmap (the cost on small blocks).
__global__ void bitmap_fill(const uint64_t *__restrict__ rp, const uint32_t *__restrict__ c, int64_t nrows,
                            uint32_t ratio, uint32_t minlen, uint32_t rw, const uint32_t *__restrict__ off,
                            uint32_t *bits, bool clear, int rpw) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    const int lane = threadIdx.x & 31;
    const int64_t v = (((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5) * rpw + lane;
    bool mine = false;
    unsigned long long b0 = 0, b1 = 0, base = 0;
    uint32_t lo = 0, hi = 0;
    if (lane < rpw && v < nrows) {
        b0 = rp[v];
        b1 = rp[v + 1];
        if (b1 > b0) {
            lo = c[b0];
            hi = c[b1 - 1];
            mine = tg_bm_has(ratio, minlen, b1 - b0, lo, hi);
            base = off ? 4ull * off[v] : b0 * rw + (uint64_t)TG_BM_ROWPAD * v;
        }
    }
    unsigned todo = __ballot_sync(0xffffffffu, mine);
    while (todo) {
        const int src = __ffs(todo) - 1;
        todo &= todo - 1;
        const unsigned long long r0 = __shfl_sync(0xffffffffu, b0, src), r1 = __shfl_sync(0xffffffffu, b1, src);
        const unsigned long long wb = __shfl_sync(0xffffffffu, base, src);
        const uint32_t l = __shfl_sync(0xffffffffu, lo, src), h = __shfl_sync(0xffffffffu, hi, src);
        uint32_t *row = bits + wb;
        if (clear) {
            const uint32_t words = 4 * tg_bm_chunks(l, h);
            for (uint32_t i = lane; i < words; i += 32) row[i] = 0;
            __syncwarp();
        }
        const uint32_t first = tg_bm_first(l);
        for (uint64_t i = r0 + lane; i < r1; i += 32) {
            const uint32_t d = c[i] - first;
            atomicOr(row + (d >> 5), 1u << (d & 31));
        }
    }
}

// Thread per entry: the last row whose offset is <= the entry's edge.
__global__ void edge_rows(const uint64_t *__restrict__ rp, int64_t nrows, int64_t nnz, uint32_t *erow, int64_t n) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint64_t e = min((uint64_t)i << TG_EROW_SHIFT, (uint64_t)nnz - 1);
    int64_t lo = 0, hi = nrows; // rp[lo] <= e < rp[hi]
    while (hi - lo > 1) {
        const int64_t mid = lo + ((hi - lo) >> 1);
        if (rp[mid] <= e) lo = mid; else hi = mid;
    }
    erow[i] = (uint32_t)lo;
}

// Thread per row: the row-summary index entry (tg_internal.cuh).
__global__ void row_summaries(const uint64_t *__restrict__ rp, const uint32_t *__restrict__ c, int64_t nrows,
                              uint4 *rsum) {
    const int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nrows) return;
    const uint64_t b0 = rp[v], b1 = rp[v + 1];
    rsum[v] = b1 > b0 ? make_uint4((uint32_t)b0, (uint32_t)b1, c[b0], c[b1 - 1])
                      : make_uint4((uint32_t)b0, (uint32_t)b1, 0u, 0u);
}

// A warp per row: the row-of-edge index (tg_internal.cuh), coalesced
// writes whatever the rows' lengths.
__global__ void rows_of_edges(const uint64_t *__restrict__ rp, int64_t nrows, uint32_t *rowof) {
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t r = warp; r < nrows; r += nwarps) {
        const uint64_t b = rp[r], e = rp[r + 1];
        for (uint64_t k = b + lane; k < e; k += 32) rowof[k] = (uint32_t)r;
    }
}

} // namespace

cudaError_t tg_rows_of_edges(const tg_dblock *b, uint32_t *rowof, cudaStream_t stream) {
    if (b->nnz <= 0 || b->nrows <= 0 || b->nrows >= TG_ROWOF_MAX || b->nnz >= TG_ROWOF_MAX)
        return cudaErrorInvalidValue;
    const int64_t blocks = std::min<int64_t>((b->nrows * 32 + 255) / 256, 65536);
    rows_of_edges<<<(unsigned)blocks, 256, 0, stream>>>(b->rowptr, b->nrows, rowof);
    return cudaGetLastError();
}

cudaError_t tg_row_summaries(const tg_dblock *b, uint4 *rsum, cudaStream_t stream) {
    if (b->nrows <= 0 || b->nrows >= TG_RSUM_MAX || b->nnz >= TG_RSUM_MAX) return cudaErrorInvalidValue;
    row_summaries<<<(unsigned)((b->nrows + 255) / 256), 256, 0, stream>>>(b->rowptr, b->cols, b->nrows, rsum);
    return cudaGetLastError();
}

cudaError_t tg_edge_rows(const tg_dblock *b, uint32_t *erow, cudaStream_t stream) {
    if (b->nnz <= 0 || b->nrows <= 0 || b->nrows > (int64_t(1) << 32)) return cudaErrorInvalidValue;
    const int64_t n = tg_edge_rows_len(b->nnz);
    edge_rows<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(b->rowptr, b->nrows, b->nnz, erow, n);
    return cudaGetLastError();
}

size_t tg_bitmap_layout_tmp(int64_t nrows) {
    size_t bytes = 0;
    uint32_t *p = nullptr;
    cub::DeviceScan::ExclusiveSum(nullptr, bytes, p, p, (int64_t)nrows + 1);
    return kLayoutHead + bytes;
}

cudaError_t tg_bitmap_layout(const tg_dblock *b, uint32_t ratio, uint32_t minlen, uint32_t *off, void *tmp,
                             size_t tmp_bytes, cudaStream_t stream) {
    const int64_t n = b->nrows + 1;
    if (tmp_bytes < kLayoutHead) return cudaErrorInvalidValue;
    unsigned long long *total = (unsigned long long *)tmp;
    cudaError_t e = cudaMemsetAsync(total, 0, sizeof *total, stream);
    if (e != cudaSuccess) return e;
    bitmap_chunks<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(b->rowptr, b->cols, b->nrows, ratio, minlen, off,
                                                                   total);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    // Offsets wrap modulo 2^32 where the total does not fit; the caller
    // then drops the layout.
    size_t scan_bytes = tmp_bytes - kLayoutHead;
    return cub::DeviceScan::ExclusiveSum((char *)tmp + kLayoutHead, scan_bytes, off, off, n, stream);
}

cudaError_t tg_bitmap_fill(const tg_dblock *b, uint32_t ratio, uint32_t minlen, uint32_t rw, const uint32_t *off,
                           uint32_t *bits, bool clear, int rpw, cudaStream_t stream) {
    if (rpw < 1 || rpw > 32) rpw = 1;
    const uint64_t warps = ((uint64_t)b->nrows + rpw - 1) / rpw;
    const uint64_t blocks = (warps * 32 + 255) / 256;
    if (blocks == 0) return cudaSuccess;
    if (blocks > 0x7fffffffull) return cudaErrorInvalidConfiguration;
    bitmap_fill<<<(unsigned)blocks, 256, 0, stream>>>(b->rowptr, b->cols, b->nrows, ratio, minlen, rw, off, bits,
                                                      clear, rpw);
    return cudaGetLastError();
}
