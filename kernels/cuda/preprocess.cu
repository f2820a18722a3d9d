// tg_preprocess: the whole cleaning and orientation pipeline on the GPU, as
// in Polak's paper (section 3.2: every preprocessing step on the device):
// upload compact-id pairs, drop self-loops, make each pair an undirected key
// (min, max), radix-sort and dedupe, count degrees, rank vertices by
// (degree, id), relabel and orient every edge from lower to higher rank,
// sort again and build the forward CSR straight into a slot.
//
// Keys are (a << 32) | b with a, b < n, so sorts only look at the low
// 32 + bits(n) bits. The forward CSR is the same as the CPU path builds
// (rank by (degree, id) ascending, edge u -> v when rank(u) < rank(v)).
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "tg_core.cuh"

namespace {

__global__ void pairs_to_keys(const uint2 *__restrict__ pairs, uint64_t *keys, int64_t npairs, uint32_t n,
                              uint64_t sentinel, unsigned long long *loops, unsigned long long *bad) {
    unsigned long long my_loops = 0, my_bad = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < npairs; i += (int64_t)gridDim.x * blockDim.x) {
        const uint2 p = pairs[i];
        uint64_t k;
        if (p.x >= n || p.y >= n) {
            my_bad++;
            k = sentinel;
        } else if (p.x == p.y) {
            my_loops++;
            k = sentinel;
        } else {
            const uint32_t a = min(p.x, p.y), b = max(p.x, p.y);
            k = ((uint64_t)a << 32) | b;
        }
        keys[i] = k;
    }
    for (int o = 16; o > 0; o >>= 1) {
        my_loops += __shfl_down_sync(0xffffffffu, my_loops, o);
        my_bad += __shfl_down_sync(0xffffffffu, my_bad, o);
    }
    if ((threadIdx.x & 31) == 0) {
        if (my_loops) atomicAdd(loops, my_loops);
        if (my_bad) atomicAdd(bad, my_bad);
    }
}

__global__ void count_degrees(const uint64_t *__restrict__ keys, int64_t m, uint32_t *deg) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t k = keys[i];
        atomicAdd(&deg[(uint32_t)(k >> 32)], 1u);
        atomicAdd(&deg[(uint32_t)k], 1u);
    }
}

// Sort keys for the ranking, plus wedges and the largest degree.
__global__ void degree_keys(const uint32_t *__restrict__ deg, int64_t n, uint64_t *keys, unsigned long long *wedges,
                            unsigned long long *maxdeg) {
    unsigned long long w = 0, mx = 0;
    for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long d = deg[v];
        keys[v] = (d << 32) | (uint64_t)v;
        w += d * (d - (d > 0)) / 2;
        mx = max(mx, d);
    }
    for (int o = 16; o > 0; o >>= 1) {
        w += __shfl_down_sync(0xffffffffu, w, o);
        mx = max(mx, __shfl_down_sync(0xffffffffu, mx, o));
    }
    if ((threadIdx.x & 31) == 0) {
        if (w) atomicAdd(wedges, w);
        if (mx) atomicMax(maxdeg, mx);
    }
}

__global__ void scatter_rank(const uint64_t *__restrict__ sorted, int64_t n, uint32_t *rank) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        rank[(uint32_t)sorted[i]] = (uint32_t)i;
}

__global__ void orient(const uint64_t *__restrict__ edges, int64_t m, const uint32_t *__restrict__ rank,
                       uint64_t *out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t k = edges[i];
        const uint32_t ra = rank[(uint32_t)(k >> 32)], rb = rank[(uint32_t)k];
        out[i] = ((uint64_t)min(ra, rb) << 32) | max(ra, rb);
    }
}

// rowptr[r] = first key with row >= r, for r in [0, n]; cols = low words.
__global__ void build_csr(const uint64_t *__restrict__ keys, int64_t m, int64_t n, uint64_t *rowptr, uint32_t *cols) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r <= n; r += stride) {
        const uint64_t target = (uint64_t)r << 32;
        int64_t lo = 0, hi = m;
        while (lo < hi) {
            const int64_t mid = (lo + hi) >> 1;
            if (keys[mid] < target) lo = mid + 1;
            else hi = mid;
        }
        rowptr[r] = (uint64_t)lo;
    }
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) cols[i] = (uint32_t)keys[i];
}

int bits_for(uint64_t x) { // bits needed to write x
    int b = 0;
    while (b < 64 && (x >> b) != 0) b++;
    return b;
}

// Owns the temporaries of one tg_preprocess call.
struct temps {
    tg_ctx *ctx;
    void *p[8] = {};
    int n = 0;
    explicit temps(tg_ctx *c) : ctx(c) {}
    cudaError_t get(void **out, size_t bytes) {
        cudaError_t e = tg_ctx_malloc(ctx, out, bytes);
        if (e == cudaSuccess) p[n++] = *out;
        return e;
    }
    ~temps() {
        cudaStreamSynchronize(ctx->stream);
        for (int i = 0; i < n; i++) tg_ctx_free(ctx, p[i]);
    }
};

} // namespace

#define TG_TRY(call, what)                                                                                             \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) return tg_cuda_status(e_, err, errlen, "tg_preprocess: " what);                         \
    } while (0)

extern "C" int32_t tg_preprocess(tg_ctx *ctx, int32_t slot, const uint32_t *edges, uint64_t npairs,
                                 uint64_t nvertices, uint64_t *rowptr_out, uint32_t *cols_out, uint32_t *rank_out,
                                 uint64_t *stats, double *ms, char *err, uint64_t errlen) {
    if (ctx == nullptr || stats == nullptr || (npairs > 0 && edges == nullptr)) {
        tg_set_err(err, errlen, "tg_preprocess: NULL context, stats or edges");
        return TG_ERR_INVALID;
    }
    if (slot < 0 || slot >= TG_MAX_SLOTS) {
        tg_set_err(err, errlen, "tg_preprocess: slot %d out of range", slot);
        return TG_ERR_INVALID;
    }
    if (nvertices >= 0xffffffffull || npairs >= (1ull << 31)) {
        tg_set_err(err, errlen, "tg_preprocess: %llu vertices / %llu pairs exceed the GPU path (< 2^32-1 / < 2^31)",
                   (unsigned long long)nvertices, (unsigned long long)npairs);
        return TG_ERR_INVALID;
    }
    for (int i = 0; i < TG_PREP_NSTATS; i++) stats[i] = 0;
    if (ms) *ms = 0;
    TG_TRY(cudaSetDevice(ctx->device), "cudaSetDevice");
    const int64_t np = (int64_t)npairs, n = (int64_t)nvertices;
    const int threads = 256;
    auto grid = [&](int64_t items) {
        int64_t g = (items + threads - 1) / threads;
        return (unsigned)std::max<int64_t>(1, std::min<int64_t>(g, (int64_t)ctx->env.sm_count * 32));
    };
    tg_slot *s = &ctx->slots[slot];
    s->loaded = false;
    temps t(ctx);
    uint64_t *d_a = nullptr, *d_b = nullptr, *d_nkeys = nullptr, *d_nb = nullptr;
    uint32_t *d_deg = nullptr, *d_rank = nullptr;
    int *d_nsel = nullptr;
    const size_t pair_bytes = (size_t)std::max<int64_t>(np, 1) * sizeof(uint64_t);
    TG_TRY(t.get((void **)&d_a, pair_bytes), "pair buffer");
    TG_TRY(t.get((void **)&d_b, pair_bytes), "key buffer");
    TG_TRY(t.get((void **)&d_nsel, 4 * sizeof(int)), "counter");
    const int vbits = bits_for((uint64_t)n);
    const int end_bit = std::min(64, 32 + vbits);
    const uint64_t sentinel = ~0ull >> (64 - end_bit); // above every (a << 32 | b) with a, b < n
    // Temp storage large enough for every sort and select below.
    size_t tmp_bytes = 0, tb = 0;
    {
        cub::DoubleBuffer<uint64_t> db(d_a, d_b);
        TG_TRY(cub::DeviceRadixSort::SortKeys(nullptr, tb, db, (int)std::max<int64_t>(np, n), 0, end_bit,
                                              ctx->stream),
               "sort sizing");
        tmp_bytes = std::max(tmp_bytes, tb);
        TG_TRY(cub::DeviceSelect::Unique(nullptr, tb, d_a, d_b, d_nsel, (int)std::max<int64_t>(np, 1), ctx->stream),
               "unique sizing");
        tmp_bytes = std::max(tmp_bytes, tb);
    }
    void *d_tmp = nullptr;
    TG_TRY(t.get(&d_tmp, tmp_bytes), "sort scratch");
    TG_TRY(t.get((void **)&d_deg, (size_t)std::max<int64_t>(n, 1) * sizeof(uint32_t)), "degrees");
    TG_TRY(t.get((void **)&d_rank, (size_t)std::max<int64_t>(n, 1) * sizeof(uint32_t)), "ranks");
    TG_TRY(t.get((void **)&d_nkeys, (size_t)std::max<int64_t>(n, 1) * sizeof(uint64_t)), "rank keys");
    TG_TRY(t.get((void **)&d_nb, (size_t)std::max<int64_t>(n, 1) * sizeof(uint64_t)), "rank keys 2");
    unsigned long long *dc = ctx->d_count; // [0] loops, [1] bad ids, [2] wedges, [3] max degree

    TG_TRY(cudaEventRecord(ctx->ev_start, ctx->stream), "event");
    TG_TRY(cudaMemsetAsync(dc, 0, 4 * sizeof(unsigned long long), ctx->stream), "memset");
    if (np > 0)
        TG_TRY(cudaMemcpyAsync(d_a, edges, (size_t)np * 8, cudaMemcpyHostToDevice, ctx->stream), "upload pairs");
    if (np > 0) {
        pairs_to_keys<<<grid(np), threads, 0, ctx->stream>>>((const uint2 *)d_a, d_a, np, (uint32_t)n, sentinel, &dc[0],
                                                            &dc[1]);
        TG_TRY(cudaGetLastError(), "keys kernel");
    }
    int64_t m = 0; // unique undirected edges
    uint64_t *uniq = d_a;
    if (np > 0) {
        cub::DoubleBuffer<uint64_t> db(d_a, d_b);
        TG_TRY(cub::DeviceRadixSort::SortKeys(d_tmp, tmp_bytes, db, (int)np, 0, end_bit, ctx->stream), "sort pairs");
        uint64_t *sorted = db.Current();
        uniq = sorted == d_a ? d_b : d_a;
        TG_TRY(cub::DeviceSelect::Unique(d_tmp, tmp_bytes, sorted, uniq, d_nsel, (int)np, ctx->stream), "unique");
        int h_nsel = 0;
        TG_TRY(cudaMemcpyAsync(ctx->h_count, dc, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctx->stream),
               "read counters");
        TG_TRY(cudaMemcpyAsync(&ctx->h_count[2], d_nsel, sizeof(int), cudaMemcpyDeviceToHost, ctx->stream),
               "read unique count");
        TG_TRY(cudaStreamSynchronize(ctx->stream), "dedupe");
        h_nsel = *(int *)&ctx->h_count[2];
        if (ctx->h_count[1] != 0) {
            tg_set_err(err, errlen, "tg_preprocess: %llu pairs hold an id >= %llu vertices",
                       (unsigned long long)ctx->h_count[1], (unsigned long long)n);
            return TG_ERR_INVALID;
        }
        stats[TG_PREP_SELF_LOOPS] = ctx->h_count[0];
        m = h_nsel - (ctx->h_count[0] > 0 ? 1 : 0); // the sentinel sorts last
    }
    stats[TG_PREP_VERTICES] = (uint64_t)n;
    stats[TG_PREP_INPUT_PAIRS] = npairs;
    stats[TG_PREP_EDGES] = (uint64_t)m;
    stats[TG_PREP_DUPLICATES] = npairs - stats[TG_PREP_SELF_LOOPS] - (uint64_t)m;

    if (n > 0) {
        TG_TRY(cudaMemsetAsync(d_deg, 0, (size_t)n * sizeof(uint32_t), ctx->stream), "memset degrees");
        if (m > 0) {
            count_degrees<<<grid(m), threads, 0, ctx->stream>>>(uniq, m, d_deg);
            TG_TRY(cudaGetLastError(), "degree kernel");
        }
        TG_TRY(cudaMemsetAsync(dc, 0, 4 * sizeof(unsigned long long), ctx->stream), "memset");
        degree_keys<<<grid(n), threads, 0, ctx->stream>>>(d_deg, n, d_nkeys, &dc[2], &dc[3]);
        TG_TRY(cudaGetLastError(), "degree keys kernel");
        cub::DoubleBuffer<uint64_t> db(d_nkeys, d_nb);
        TG_TRY(cub::DeviceRadixSort::SortKeys(d_tmp, tmp_bytes, db, (int)n, 0, end_bit, ctx->stream), "rank sort");
        scatter_rank<<<grid(n), threads, 0, ctx->stream>>>(db.Current(), n, d_rank);
        TG_TRY(cudaGetLastError(), "rank kernel");
    }
    // Forward keys into the other pair buffer, sorted, then the CSR.
    uint64_t *fwd = uniq == d_a ? d_b : d_a;
    if (m > 0) {
        orient<<<grid(m), threads, 0, ctx->stream>>>(uniq, m, d_rank, fwd);
        TG_TRY(cudaGetLastError(), "orient kernel");
        cub::DoubleBuffer<uint64_t> db(fwd, uniq);
        TG_TRY(cub::DeviceRadixSort::SortKeys(d_tmp, tmp_bytes, db, (int)m, 0, end_bit, ctx->stream), "forward sort");
        fwd = db.Current();
    }
    TG_TRY(tg_slot_reserve(ctx, s, n, m), "slot allocation");
    build_csr<<<grid(std::max<int64_t>(n + 1, m)), threads, 0, ctx->stream>>>(fwd, m, n, s->rowptr, s->cols);
    TG_TRY(cudaGetLastError(), "csr kernel");
    if (rowptr_out) TG_TRY(cudaMemcpyAsync(rowptr_out, s->rowptr, (size_t)(n + 1) * 8, cudaMemcpyDeviceToHost, ctx->stream), "copy offsets");
    if (cols_out && m > 0) TG_TRY(cudaMemcpyAsync(cols_out, s->cols, (size_t)m * 4, cudaMemcpyDeviceToHost, ctx->stream), "copy columns");
    if (rank_out && n > 0) TG_TRY(cudaMemcpyAsync(rank_out, d_rank, (size_t)n * 4, cudaMemcpyDeviceToHost, ctx->stream), "copy ranks");
    TG_TRY(cudaEventRecord(ctx->ev_stop, ctx->stream), "event");
    TG_TRY(cudaMemcpyAsync(ctx->h_count, dc, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctx->stream),
           "read counters");
    TG_TRY(cudaStreamSynchronize(ctx->stream), "preprocess");
    stats[TG_PREP_WEDGES] = ctx->h_count[2];
    stats[TG_PREP_MAX_DEGREE] = ctx->h_count[3];
    float f = 0;
    TG_TRY(cudaEventElapsedTime(&f, ctx->ev_start, ctx->ev_stop), "elapsed");
    if (ms) *ms = f;
    s->blk = tg_dblock{};
    s->blk.nrows = n;
    s->blk.nnz = m;
    s->blk.ncols = n;
    int32_t rc = tg_slot_finish(ctx, s, err, errlen);
    if (rc != TG_OK) return rc;
    stats[TG_PREP_MAX_FORWARD] = (uint64_t)s->blk.max_degree;
    return TG_OK;
}
