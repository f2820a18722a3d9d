// tg_preprocess: the whole cleaning and orientation pipeline on the GPU, as
// in Polak's paper (section 3.2: every preprocessing step on the device):
// upload compact-id pairs, drop self-loops, make each pair an undirected key
// (min, max), radix-sort and dedupe, count degrees, rank vertices by
// (degree, id), relabel and orient every edge from lower to higher rank,
// sort again and build the forward CSR straight into a slot.
//
// tg_prep_ids starts one step earlier, from the input's own ids: it
// compacts them on the device (a flag per id and a scan when the id range
// is small against the edges, a sort of the distinct ids and a binary
// search otherwise) into the keys that tg_preprocess makes from compact
// pairs, and goes on from there without a round trip through the host.
//
// Keys are (a << 32) | b with a, b < n, so sorts only look at the low
// 32 + bits(n) bits. Item counts are 64-bit throughout (TG_ITEMS), so an
// edge list may hold 2^31 pairs or more. The forward CSR is the same as the CPU path builds
// (rank by (degree, id) ascending, edge u -> v when rank(u) < rank(v)).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "tg_core.cuh"
#include "tg_rank.cuh"

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


// ---- id compaction (tg_prep_ids) ------------------------------------------

// Largest id and the number of self-loops.
template <typename T>
__global__ void ids_scan(const T *__restrict__ p, int64_t np, unsigned long long *maxid, unsigned long long *loops) {
    unsigned long long mx = 0, lp = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long u = p[2 * i], v = p[2 * i + 1];
        mx = max(mx, max(u, v));
        lp += u == v;
    }
    for (int o = 16; o > 0; o >>= 1) {
        mx = max(mx, __shfl_down_sync(0xffffffffu, mx, o));
        lp += __shfl_down_sync(0xffffffffu, lp, o);
    }
    if ((threadIdx.x & 31) == 0) {
        if (mx) atomicMax(maxid, mx);
        if (lp) atomicAdd(loops, lp);
    }
}

// Dense ids: flag[id] = 1 for the endpoints of non-loop pairs, lflag[id] =
// 1 for the ids of self-loops (racing writes store the same value).
template <typename T>
__global__ void ids_mark(const T *__restrict__ p, int64_t np, uint32_t *flag, uint8_t *lflag) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const T u = p[2 * i], v = p[2 * i + 1];
        if (u != v) {
            flag[u] = 1;
            flag[v] = 1;
        } else {
            lflag[u] = 1;
        }
    }
}

// Ids seen only in self-loops.
__global__ void ids_isolated(const uint32_t *__restrict__ flag, const uint8_t *__restrict__ lflag, int64_t nid,
                             unsigned long long *iso) {
    unsigned long long c = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nid; i += (int64_t)gridDim.x * blockDim.x)
        c += lflag[i] && !flag[i];
    for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(iso, c);
}

// keys[i] from pair i through the dense table (compact id = number of
// flagged ids below). keys may alias p when T is 32-bit: each thread reads
// its pair before writing its key over it, so no pointer is __restrict__.
template <typename T>
__global__ void ids_keys_dense(const T *p, int64_t np, const uint32_t *__restrict__ table, uint64_t *keys,
                               uint64_t sentinel) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const T u = p[2 * i], v = p[2 * i + 1];
        uint64_t k = sentinel;
        if (u != v) {
            const uint32_t a = table[u], b = table[v];
            k = ((uint64_t)min(a, b) << 32) | max(a, b);
        }
        keys[i] = k;
    }
}

// Sparse ids: the endpoints of non-loop pairs go to ends, the ids of
// self-loops to lids, each in any order (both are sorted next). One atomic
// per warp and array.
template <typename T>
__global__ void ids_gather(const T *__restrict__ p, int64_t np, uint64_t *ends, unsigned long long *nends,
                           uint64_t *lids, unsigned long long *nlids) {
    const unsigned lane = threadIdx.x & 31, below = (1u << lane) - 1;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t u = p[2 * i], v = p[2 * i + 1];
        const bool edge = u != v;
        const unsigned act = __activemask();
        const int leader = __ffs(act) - 1;
        const unsigned be = __ballot_sync(act, edge), bl = act & ~be;
        unsigned long long base_e = 0, base_l = 0;
        if ((int)lane == leader) {
            if (be) base_e = atomicAdd(nends, 2ull * __popc(be));
            if (bl) base_l = atomicAdd(nlids, (unsigned long long)__popc(bl));
        }
        base_e = __shfl_sync(act, base_e, leader);
        base_l = __shfl_sync(act, base_l, leader);
        if (edge) {
            const unsigned long long at = base_e + 2ull * __popc(be & below);
            ends[at] = u;
            ends[at + 1] = v;
        } else {
            lids[base_l + __popc(bl & below)] = u;
        }
    }
}

__device__ __forceinline__ int64_t lower_bound64(const uint64_t *__restrict__ a, int64_t n, uint64_t x) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = (lo + hi) >> 1;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// Distinct self-loop ids that are no endpoint of an edge.
__global__ void ids_isolated_sparse(const uint64_t *__restrict__ lids, int64_t nl, const uint64_t *__restrict__ ids,
                                    int64_t n, unsigned long long *iso) {
    unsigned long long c = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nl; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = lower_bound64(ids, n, lids[i]);
        c += j == n || ids[j] != lids[i];
    }
    for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(iso, c);
}

// keys[i] from pair i through the sorted distinct ids (compact id = index).
// keys may alias p (see ids_keys_dense).
template <typename T>
__global__ void ids_keys_sparse(const T *p, int64_t np, const uint64_t *__restrict__ ids, int64_t n, uint64_t *keys,
                                uint64_t sentinel) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t u = p[2 * i], v = p[2 * i + 1];
        uint64_t k = sentinel;
        if (u != v) {
            const uint32_t a = (uint32_t)lower_bound64(ids, n, u), b = (uint32_t)lower_bound64(ids, n, v);
            k = ((uint64_t)min(a, b) << 32) | max(a, b);
        }
        keys[i] = k;
    }
}

// orig[table[i]] = i for every flagged id i: the input id of each compact
// id (dense compaction).
__global__ void ids_orig_dense(const uint32_t *__restrict__ flag, const uint32_t *__restrict__ table, int64_t nid,
                               uint64_t *orig) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nid; i += (int64_t)gridDim.x * blockDim.x)
        if (flag[i]) orig[table[i]] = (uint64_t)i;
}

// out[rank[c]] = orig[c]: the input id of each forward id.
__global__ void orig_by_rank(const uint64_t *__restrict__ orig, const uint32_t *__restrict__ rank, int64_t n,
                             uint64_t *out) {
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += (int64_t)gridDim.x * blockDim.x)
        out[rank[c]] = orig[c];
}

int bits_for(uint64_t x) { // bits needed to write x
    int b = 0;
    while (b < 64 && (x >> b) != 0) b++;
    return b;
}

#ifdef TG_INT_ITEMS
typedef int TG_ITEMS; // a CUB without 64-bit item counts: npairs < 2^31
#define TG_MAX_ITEMS ((1ull << 31) - 1)
#else
typedef int64_t TG_ITEMS;
#define TG_MAX_ITEMS (1ull << 62)
#endif

// Owns the temporaries of one preprocessing call.
struct temps {
    tg_ctx *ctx;
    void *p[16] = {};
    int n = 0;
    explicit temps(tg_ctx *c) : ctx(c) {}
    cudaError_t get(void **out, size_t bytes) {
        if (n == 16) return cudaErrorMemoryAllocation;
        cudaError_t e = tg_ctx_malloc(ctx, out, bytes);
        if (e == cudaSuccess) p[n++] = *out;
        return e;
    }
    // Takes q, allocated with tg_ctx_malloc, as one of its temporaries.
    // Returns false (q not taken) when the table is full.
    bool adopt(void *q) {
        if (n == 16) return false;
        p[n++] = q;
        return true;
    }
    // Frees one temporary early (after the stream has finished with it).
    cudaError_t release(void *q) {
        cudaError_t e = cudaStreamSynchronize(ctx->stream);
        for (int i = 0; i < n; i++)
            if (p[i] == q) {
                tg_ctx_free(ctx, q);
                p[i] = p[--n];
                p[n] = nullptr;
                break;
            }
        return e;
    }
    // Frees every temporary (after the stream has finished with them), so
    // that the slot's indexes, built next, have their room.
    void clear() {
        if (n == 0) return;
        cudaStreamSynchronize(ctx->stream);
        for (int i = 0; i < n; i++) tg_ctx_free(ctx, p[i]);
        for (int i = 0; i < n; i++) p[i] = nullptr;
        n = 0;
    }
    ~temps() { clear(); }
};

struct launch {
    int threads = 256;
    int sms;
    unsigned operator()(int64_t items) const {
        int64_t g = (items + threads - 1) / threads;
        return (unsigned)std::max<int64_t>(1, std::min<int64_t>(g, (int64_t)sms * 32));
    }
};

#define TG_TRY(call, what)                                                                                             \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) return tg_cuda_status(e_, err, errlen, fn_what(what));                                 \
    } while (0)

// The rest of both entries: d_a holds np keys, self-loops as the sentinel
// (loops of them, already in stats), d_b room for np more. Sorts and
// dedupes the keys, ranks, orients and builds the forward CSR in slot s,
// copying back what the caller asked for, then fills the remaining stats.
// With d_orig (the input id of each compact id) and orig_out, the input id
// of each forward id is copied back into orig_out.
// dc[0] and dc[1] hold the loops and bad ids counted on the device.
int32_t prep_tail(tg_ctx *ctx, tg_slot *s, temps &t, const char *fn, uint64_t *d_a, uint64_t *d_b, int64_t np,
                  int64_t n, uint64_t *rowptr_out, uint32_t *cols_out, uint32_t *rank_out, const uint64_t *d_orig,
                  uint64_t *orig_out, uint64_t *stats, char *err, uint64_t errlen) {
    char what[128];
    auto fn_what = [&](const char *w) {
        snprintf(what, sizeof what, "%s: %s", fn, w);
        return (const char *)what;
    };
    const launch grid{256, ctx->env.sm_count};
    const int threads = grid.threads;
    const int vbits = bits_for((uint64_t)n);
    const int end_bit = std::min(64, 32 + vbits);
    unsigned long long *dc = ctx->d_count; // [0] loops, [1] bad ids, [2] wedges, [3] max degree
    uint64_t *d_nkeys = nullptr, *d_nb = nullptr;
    uint32_t *d_deg = nullptr, *d_rank = nullptr;
    TG_ITEMS *d_nsel = nullptr;
    TG_TRY(t.get((void **)&d_nsel, sizeof(TG_ITEMS)), "counter");
    size_t tmp_bytes = 0, tb = 0;
    {
        cub::DoubleBuffer<uint64_t> db(d_a, d_b);
        TG_TRY(cub::DeviceRadixSort::SortKeys(nullptr, tb, db, (TG_ITEMS)std::max<int64_t>(np, n), 0, end_bit,
                                              ctx->stream),
               "sort sizing");
        tmp_bytes = std::max(tmp_bytes, tb);
        TG_TRY(cub::DeviceSelect::Unique(nullptr, tb, d_a, d_b, d_nsel, (TG_ITEMS)std::max<int64_t>(np, 1),
                                         ctx->stream),
               "unique sizing");
        tmp_bytes = std::max(tmp_bytes, tb);
    }
    void *d_tmp = nullptr;
    TG_TRY(t.get(&d_tmp, tmp_bytes), "sort scratch");
    TG_TRY(t.get((void **)&d_deg, (size_t)std::max<int64_t>(n, 1) * sizeof(uint32_t)), "degrees");
    TG_TRY(t.get((void **)&d_rank, (size_t)std::max<int64_t>(n, 1) * sizeof(uint32_t)), "ranks");
    TG_TRY(t.get((void **)&d_nkeys, (size_t)std::max<int64_t>(n, 1) * sizeof(uint64_t)), "rank keys");
    TG_TRY(t.get((void **)&d_nb, (size_t)std::max<int64_t>(n, 1) * sizeof(uint64_t)), "rank keys 2");

    int64_t m = 0; // unique undirected edges
    uint64_t *uniq = d_a;
    if (np > 0) {
        cub::DoubleBuffer<uint64_t> db(d_a, d_b);
        TG_TRY(cub::DeviceRadixSort::SortKeys(d_tmp, tmp_bytes, db, (TG_ITEMS)np, 0, end_bit, ctx->stream),
               "sort pairs");
        uint64_t *sorted = db.Current();
        uniq = sorted == d_a ? d_b : d_a;
        TG_TRY(cub::DeviceSelect::Unique(d_tmp, tmp_bytes, sorted, uniq, d_nsel, (TG_ITEMS)np, ctx->stream),
               "unique");
        TG_TRY(cudaMemcpyAsync(ctx->h_count, dc, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctx->stream),
               "read counters");
        TG_TRY(cudaMemcpyAsync(&ctx->h_count[2], d_nsel, sizeof(TG_ITEMS), cudaMemcpyDeviceToHost, ctx->stream),
               "read unique count");
        TG_TRY(cudaStreamSynchronize(ctx->stream), "dedupe");
        const int64_t nsel = (int64_t) * (TG_ITEMS *)&ctx->h_count[2];
        if (ctx->h_count[1] != 0) {
            tg_set_err(err, errlen, "%s: %llu pairs hold an id >= %llu vertices", fn,
                       (unsigned long long)ctx->h_count[1], (unsigned long long)n);
            return TG_ERR_INVALID;
        }
        stats[TG_PREP_SELF_LOOPS] = ctx->h_count[0];
        m = nsel - (ctx->h_count[0] > 0 ? 1 : 0); // the sentinel sorts last
    }
    stats[TG_PREP_VERTICES] = (uint64_t)n;
    stats[TG_PREP_INPUT_PAIRS] = (uint64_t)np;
    stats[TG_PREP_EDGES] = (uint64_t)m;
    stats[TG_PREP_DUPLICATES] = (uint64_t)np - stats[TG_PREP_SELF_LOOPS] - (uint64_t)m;

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
        TG_TRY(cub::DeviceRadixSort::SortKeys(d_tmp, tmp_bytes, db, (TG_ITEMS)n, 0, end_bit, ctx->stream),
               "rank sort");
        scatter_rank<<<grid(n), threads, 0, ctx->stream>>>(db.Current(), n, d_rank);
        TG_TRY(cudaGetLastError(), "rank kernel");
        if (d_orig && orig_out) {
            // The rank keys are spent: their room takes the forward ids' input ids.
            orig_by_rank<<<grid(n), threads, 0, ctx->stream>>>(d_orig, d_rank, n, d_nkeys);
            TG_TRY(cudaGetLastError(), "input id kernel");
            TG_TRY(cudaMemcpyAsync(orig_out, d_nkeys, (size_t)n * 8, cudaMemcpyDeviceToHost, ctx->stream),
                   "copy input ids");
        }
    } else {
        TG_TRY(cudaMemsetAsync(dc, 0, 4 * sizeof(unsigned long long), ctx->stream), "memset");
    }
    // Forward keys into the other pair buffer, sorted, then the CSR.
    uint64_t *fwd = uniq == d_a ? d_b : d_a;
    if (m > 0) {
        orient<<<grid(m), threads, 0, ctx->stream>>>(uniq, m, d_rank, fwd);
        TG_TRY(cudaGetLastError(), "orient kernel");
        cub::DoubleBuffer<uint64_t> db(fwd, uniq);
        TG_TRY(cub::DeviceRadixSort::SortKeys(d_tmp, tmp_bytes, db, (TG_ITEMS)m, 0, end_bit, ctx->stream),
               "forward sort");
        fwd = db.Current();
    }
    TG_TRY(tg_slot_reserve(ctx, s, n, m), "slot allocation");
    build_csr<<<grid(std::max<int64_t>(n + 1, m)), threads, 0, ctx->stream>>>(fwd, m, n, s->rowptr, s->cols);
    TG_TRY(cudaGetLastError(), "csr kernel");
    if (rowptr_out)
        TG_TRY(cudaMemcpyAsync(rowptr_out, s->rowptr, (size_t)(n + 1) * 8, cudaMemcpyDeviceToHost, ctx->stream),
               "copy offsets");
    if (cols_out && m > 0)
        TG_TRY(cudaMemcpyAsync(cols_out, s->cols, (size_t)m * 4, cudaMemcpyDeviceToHost, ctx->stream), "copy columns");
    if (rank_out && n > 0)
        TG_TRY(cudaMemcpyAsync(rank_out, d_rank, (size_t)n * 4, cudaMemcpyDeviceToHost, ctx->stream), "copy ranks");
    TG_TRY(cudaEventRecord(ctx->ev_stop, ctx->stream), "event");
    TG_TRY(cudaMemcpyAsync(ctx->h_count, dc, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctx->stream),
           "read counters");
    TG_TRY(cudaStreamSynchronize(ctx->stream), "preprocess");
    stats[TG_PREP_WEDGES] = ctx->h_count[2];
    stats[TG_PREP_MAX_DEGREE] = ctx->h_count[3];
    s->blk = tg_dblock{};
    s->blk.nrows = n;
    s->blk.nnz = m;
    s->blk.ncols = n;
    return TG_OK;
}

// Validation shared by both entries.
int32_t prep_check(tg_ctx *ctx, int32_t slot, const void *edges, uint64_t npairs, uint64_t *stats, const char *fn,
                   char *err, uint64_t errlen) {
    if (ctx == nullptr || stats == nullptr || (npairs > 0 && edges == nullptr)) {
        tg_set_err(err, errlen, "%s: NULL context, stats or edges", fn);
        return TG_ERR_INVALID;
    }
    if (slot < 0 || slot >= TG_MAX_SLOTS) {
        tg_set_err(err, errlen, "%s: slot %d out of range", fn, slot);
        return TG_ERR_INVALID;
    }
    if (npairs > TG_MAX_ITEMS) {
        tg_set_err(err, errlen, "%s: %llu pairs exceed the GPU path (at most %llu)", fn, (unsigned long long)npairs,
                   (unsigned long long)TG_MAX_ITEMS);
        return TG_ERR_INVALID;
    }
    for (int i = 0; i < TG_PREP_NSTATS; i++) stats[i] = 0;
    return TG_OK;
}

// Finishes either entry: the timing and the slot's own checks.
int32_t prep_finish(tg_ctx *ctx, tg_slot *s, uint64_t *stats, double *ms, const char *fn, char *err,
                    uint64_t errlen) {
    float f = 0;
    cudaError_t e = cudaEventElapsedTime(&f, ctx->ev_start, ctx->ev_stop);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, fn);
    if (ms) *ms = f;
    int32_t rc = tg_slot_finish(ctx, s, err, errlen);
    if (rc != TG_OK) return rc;
    stats[TG_PREP_MAX_FORWARD] = (uint64_t)s->blk.max_degree;
    return TG_OK;
}

} // namespace

extern "C" int32_t tg_preprocess(tg_ctx *ctx, int32_t slot, const uint32_t *edges, uint64_t npairs,
                                 uint64_t nvertices, uint64_t *rowptr_out, uint32_t *cols_out, uint32_t *rank_out,
                                 uint64_t *stats, double *ms, char *err, uint64_t errlen) {
    const char *fn = "tg_preprocess";
    auto fn_what = [&](const char *w) { return w; };
    int32_t rc = prep_check(ctx, slot, edges, npairs, stats, fn, err, errlen);
    if (rc != TG_OK) return rc;
    if (nvertices >= 0xffffffffull) {
        tg_set_err(err, errlen, "tg_preprocess: %llu vertices exceed the GPU path (< 2^32-1)",
                   (unsigned long long)nvertices);
        return TG_ERR_INVALID;
    }
    if (ms) *ms = 0;
    TG_TRY(cudaSetDevice(ctx->device), "tg_preprocess: cudaSetDevice");
    const int64_t np = (int64_t)npairs, n = (int64_t)nvertices;
    const launch grid{256, ctx->env.sm_count};
    tg_slot *s = &ctx->slots[slot];
    s->loaded = false;
    temps t(ctx);
    uint64_t *d_a = nullptr, *d_b = nullptr;
    const size_t pair_bytes = (size_t)std::max<int64_t>(np, 1) * sizeof(uint64_t);
    TG_TRY(t.get((void **)&d_a, pair_bytes), "tg_preprocess: pair buffer");
    TG_TRY(t.get((void **)&d_b, pair_bytes), "tg_preprocess: key buffer");
    const int end_bit = std::min(64, 32 + bits_for((uint64_t)n));
    const uint64_t sentinel = ~0ull >> (64 - end_bit); // above every (a << 32 | b) with a, b < n
    unsigned long long *dc = ctx->d_count;

    TG_TRY(cudaEventRecord(ctx->ev_start, ctx->stream), "tg_preprocess: event");
    TG_TRY(cudaMemsetAsync(dc, 0, 4 * sizeof(unsigned long long), ctx->stream), "tg_preprocess: memset");
    if (np > 0) {
        TG_TRY(cudaMemcpyAsync(d_a, edges, (size_t)np * 8, cudaMemcpyHostToDevice, ctx->stream),
               "tg_preprocess: upload pairs");
        pairs_to_keys<<<grid(np), grid.threads, 0, ctx->stream>>>((const uint2 *)d_a, d_a, np, (uint32_t)n, sentinel,
                                                                  &dc[0], &dc[1]);
        TG_TRY(cudaGetLastError(), "tg_preprocess: keys kernel");
    }
    rc = prep_tail(ctx, s, t, fn, d_a, d_b, np, n, rowptr_out, cols_out, rank_out, nullptr, nullptr, stats, err,
                   errlen);
    if (rc != TG_OK) return rc;
    t.clear();
    return prep_finish(ctx, s, stats, ms, fn, err, errlen);
}

namespace {

// Compacts the ids of the np pairs at d_p (T ids) into keys at d_keys
// (which may be d_p for 32-bit ids), fills *n, the isolated ids and the
// loops counter dc[0]. Leaves dc[1] (bad ids) 0. With d_orig not NULL,
// *d_orig receives a temporary of n entries: the input id of each compact
// id.
template <typename T>
int32_t compact_ids(tg_ctx *ctx, temps &t, const T *d_p, int64_t np, uint64_t *d_keys, int64_t *n_out,
                    uint64_t **d_orig, uint64_t *stats, char *err, uint64_t errlen) {
    const char *fn = "tg_prep_ids";
    char what[128];
    auto fn_what = [&](const char *w) {
        snprintf(what, sizeof what, "%s: %s", fn, w);
        return (const char *)what;
    };
    const launch grid{256, ctx->env.sm_count};
    unsigned long long *dc = ctx->d_count;
    *n_out = 0;
    TG_TRY(cudaMemsetAsync(dc, 0, 4 * sizeof(unsigned long long), ctx->stream), "memset");
    if (np == 0) return TG_OK;
    ids_scan<T><<<grid(np), grid.threads, 0, ctx->stream>>>(d_p, np, &dc[2], &dc[0]);
    TG_TRY(cudaGetLastError(), "scan kernel");
    TG_TRY(cudaMemcpyAsync(ctx->h_count, dc, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctx->stream),
           "read counters");
    TG_TRY(cudaStreamSynchronize(ctx->stream), "scan");
    const uint64_t maxid = ctx->h_count[2], loops = ctx->h_count[0];
    const int64_t nonloop = np - (int64_t)loops;
    // The flag table (a word and a byte per id, then the scanned table)
    // when the id range is no larger than the endpoints (the common case:
    // ids from 0 or 1 with few gaps), so that it costs at most the keys'
    // own memory; beyond 2^31 ids its 32-bit sums could overflow.
    const bool dense = maxid < (1ull << 31) - 1 && maxid + 1 <= 2 * (uint64_t)np + (1ull << 20);
    int64_t n = 0;
    if (dense) {
        const int64_t nid = (int64_t)maxid + 1;
        uint32_t *flag = nullptr, *table = nullptr;
        uint8_t *lflag = nullptr;
        TG_TRY(t.get((void **)&flag, (size_t)nid * 4), "id flags");
        TG_TRY(t.get((void **)&lflag, (size_t)nid), "loop flags");
        TG_TRY(cudaMemsetAsync(flag, 0, (size_t)nid * 4, ctx->stream), "memset flags");
        TG_TRY(cudaMemsetAsync(lflag, 0, (size_t)nid, ctx->stream), "memset loop flags");
        ids_mark<T><<<grid(np), grid.threads, 0, ctx->stream>>>(d_p, np, flag, lflag);
        TG_TRY(cudaGetLastError(), "mark kernel");
        ids_isolated<<<grid(nid), grid.threads, 0, ctx->stream>>>(flag, lflag, nid, &dc[3]);
        TG_TRY(cudaGetLastError(), "isolated kernel");
        TG_TRY(t.release(lflag), "free loop flags");
        TG_TRY(t.get((void **)&table, (size_t)nid * 4), "id table");
        size_t tb = 0;
        void *tmp = nullptr;
        TG_TRY(cub::DeviceScan::ExclusiveSum(nullptr, tb, flag, table, (TG_ITEMS)nid, ctx->stream), "scan sizing");
        TG_TRY(t.get(&tmp, tb), "scan scratch");
        TG_TRY(cub::DeviceScan::ExclusiveSum(tmp, tb, flag, table, (TG_ITEMS)nid, ctx->stream), "id scan");
        uint32_t last[2] = {0, 0};
        TG_TRY(cudaMemcpyAsync(&ctx->h_count[0], &table[nid - 1], 4, cudaMemcpyDeviceToHost, ctx->stream),
               "read id count");
        TG_TRY(cudaMemcpyAsync((char *)&ctx->h_count[0] + 4, &flag[nid - 1], 4, cudaMemcpyDeviceToHost, ctx->stream),
               "read id count");
        TG_TRY(cudaMemcpyAsync(&ctx->h_count[1], &dc[3], 8, cudaMemcpyDeviceToHost, ctx->stream), "read isolated");
        TG_TRY(cudaStreamSynchronize(ctx->stream), "id scan");
        memcpy(last, &ctx->h_count[0], 8);
        stats[TG_PREP_ISOLATED] = ctx->h_count[1];
        n = (int64_t)last[0] + last[1];
        if (d_orig) {
            TG_TRY(t.get((void **)d_orig, (size_t)std::max<int64_t>(n, 1) * 8), "input ids");
            ids_orig_dense<<<grid(nid), grid.threads, 0, ctx->stream>>>(flag, table, nid, *d_orig);
            TG_TRY(cudaGetLastError(), "input id kernel");
        }
        TG_TRY(t.release(tmp), "free scan scratch");
        TG_TRY(t.release(flag), "free flags");
        const int end_bit = std::min(64, 32 + bits_for((uint64_t)n));
        const uint64_t sentinel = ~0ull >> (64 - end_bit);
        ids_keys_dense<T><<<grid(np), grid.threads, 0, ctx->stream>>>(d_p, np, table, d_keys, sentinel);
        TG_TRY(cudaGetLastError(), "dense keys kernel");
        TG_TRY(t.release(table), "free id table");
    } else {
        const int64_t ne = 2 * nonloop, nl = (int64_t)loops;
        uint64_t *ends = nullptr, *ends2 = nullptr, *lids = nullptr, *lids2 = nullptr;
        TG_TRY(t.get((void **)&ends, (size_t)std::max<int64_t>(ne, 1) * 8), "endpoints");
        TG_TRY(t.get((void **)&ends2, (size_t)std::max<int64_t>(ne, 1) * 8), "endpoints 2");
        TG_TRY(t.get((void **)&lids, (size_t)std::max<int64_t>(nl, 1) * 8), "loop ids");
        TG_TRY(t.get((void **)&lids2, (size_t)std::max<int64_t>(nl, 1) * 8), "loop ids 2");
        TG_ITEMS *d_nsel = nullptr;
        TG_TRY(t.get((void **)&d_nsel, 2 * sizeof(TG_ITEMS)), "counter");
        TG_TRY(cudaMemsetAsync(dc, 0, 2 * sizeof(unsigned long long), ctx->stream), "memset");
        ids_gather<T><<<grid(np), grid.threads, 0, ctx->stream>>>(d_p, np, ends, &dc[0], lids, &dc[1]);
        TG_TRY(cudaGetLastError(), "gather kernel");
        const int idbits = std::max(1, bits_for(maxid));
        size_t tb = 0, tb2 = 0;
        {
            cub::DoubleBuffer<uint64_t> db(ends, ends2);
            TG_TRY(cub::DeviceRadixSort::SortKeys(nullptr, tb, db, (TG_ITEMS)std::max<int64_t>(ne, nl), 0, idbits,
                                                  ctx->stream),
                   "id sort sizing");
            TG_TRY(cub::DeviceSelect::Unique(nullptr, tb2, ends, ends2, d_nsel, (TG_ITEMS)std::max<int64_t>(ne, nl),
                                             ctx->stream),
                   "id unique sizing");
        }
        void *tmp = nullptr;
        size_t tbytes = std::max(tb, tb2);
        TG_TRY(t.get(&tmp, tbytes), "id sort scratch");
        uint64_t *ids = ends, *lu = lids;
        if (ne > 0) {
            cub::DoubleBuffer<uint64_t> db(ends, ends2);
            TG_TRY(cub::DeviceRadixSort::SortKeys(tmp, tbytes, db, (TG_ITEMS)ne, 0, idbits, ctx->stream), "id sort");
            ids = db.Current() == ends ? ends2 : ends;
            TG_TRY(cub::DeviceSelect::Unique(tmp, tbytes, db.Current(), ids, &d_nsel[0], (TG_ITEMS)ne, ctx->stream),
                   "id unique");
        }
        if (nl > 0) {
            cub::DoubleBuffer<uint64_t> db(lids, lids2);
            TG_TRY(cub::DeviceRadixSort::SortKeys(tmp, tbytes, db, (TG_ITEMS)nl, 0, idbits, ctx->stream),
                   "loop id sort");
            lu = db.Current() == lids ? lids2 : lids;
            TG_TRY(cub::DeviceSelect::Unique(tmp, tbytes, db.Current(), lu, &d_nsel[1], (TG_ITEMS)nl, ctx->stream),
                   "loop id unique");
        }
        TG_ITEMS h_nsel[2] = {0, 0};
        TG_TRY(cudaMemcpyAsync(ctx->h_count, d_nsel, 2 * sizeof(TG_ITEMS), cudaMemcpyDeviceToHost, ctx->stream),
               "read id counts");
        TG_TRY(cudaStreamSynchronize(ctx->stream), "id sort");
        memcpy(h_nsel, ctx->h_count, sizeof h_nsel);
        n = ne > 0 ? (int64_t)h_nsel[0] : 0;
        const int64_t nlu = nl > 0 ? (int64_t)h_nsel[1] : 0;
        if ((uint64_t)n >= 0xffffffffull) {
            tg_set_err(err, errlen, "%s: %lld distinct ids exceed the GPU path (< 2^32-1)", fn, (long long)n);
            return TG_ERR_INVALID;
        }
        TG_TRY(cudaMemsetAsync(dc, 0, 4 * sizeof(unsigned long long), ctx->stream), "memset");
        if (nlu > 0) {
            ids_isolated_sparse<<<grid(nlu), grid.threads, 0, ctx->stream>>>(lu, nlu, ids, n, &dc[3]);
            TG_TRY(cudaGetLastError(), "isolated kernel");
        }
        const int end_bit = std::min(64, 32 + bits_for((uint64_t)n));
        const uint64_t sentinel = ~0ull >> (64 - end_bit);
        ids_keys_sparse<T><<<grid(np), grid.threads, 0, ctx->stream>>>(d_p, np, ids, n, d_keys, sentinel);
        TG_TRY(cudaGetLastError(), "sparse keys kernel");
        if (d_orig) {
            // The sorted distinct ids are the input id of each compact id.
            TG_TRY(t.get((void **)d_orig, (size_t)std::max<int64_t>(n, 1) * 8), "input ids");
            if (n > 0)
                TG_TRY(cudaMemcpyAsync(*d_orig, ids, (size_t)n * 8, cudaMemcpyDeviceToDevice, ctx->stream),
                       "copy input ids");
        }
        TG_TRY(cudaMemcpyAsync(&ctx->h_count[1], &dc[3], 8, cudaMemcpyDeviceToHost, ctx->stream), "read isolated");
        TG_TRY(cudaStreamSynchronize(ctx->stream), "sparse keys");
        stats[TG_PREP_ISOLATED] = ctx->h_count[1];
        TG_TRY(t.release(tmp), "free");
        TG_TRY(t.release(d_nsel), "free");
        TG_TRY(t.release(lids2), "free");
        TG_TRY(t.release(lids), "free");
        TG_TRY(t.release(ends2), "free");
        TG_TRY(t.release(ends), "free");
    }
    // The tail reads the loops from dc[0] and bad ids from dc[1].
    TG_TRY(cudaStreamSynchronize(ctx->stream), "compaction");
    ctx->h_count[0] = loops;
    ctx->h_count[1] = 0;
    TG_TRY(cudaMemcpyAsync(dc, ctx->h_count, 2 * sizeof(unsigned long long), cudaMemcpyHostToDevice, ctx->stream),
           "loop count");
    TG_TRY(cudaStreamSynchronize(ctx->stream), "loop count");
    *n_out = n;
    return TG_OK;
}

} // namespace

namespace {

// A device buffer freed when it goes out of scope unless taken (p = NULL).
struct owned_buf {
    tg_ctx *ctx;
    void *p;
    ~owned_buf() {
        if (p != nullptr) tg_ctx_free(ctx, p);
    }
};

// tg_prep_ids. With d_in (from the input buffer) the pairs are already on
// the device there, in a buffer of at least npairs * 2 * width bytes (and
// of 8 bytes or more) that this call owns and frees; edges is then d_in.
int32_t prep_ids(tg_ctx *ctx, int32_t slot, const void *edges, uint64_t npairs, int32_t width, uint64_t max_vertices,
                 uint64_t *rowptr_out, uint32_t *cols_out, uint64_t *orig_out, uint64_t *stats, double *ms,
                 const char *fn, char *err, uint64_t errlen, void *d_in = nullptr) {
    owned_buf in{ctx, d_in};
    char what[128];
    auto fn_what = [&](const char *w) {
        snprintf(what, sizeof what, "%s: %s", fn, w);
        return (const char *)what;
    };
    int32_t rc = prep_check(ctx, slot, edges, npairs, stats, fn, err, errlen);
    if (rc != TG_OK) return rc;
    if (width != 4 && width != 8) {
        tg_set_err(err, errlen, "%s: id width %d: want 4 or 8 bytes", fn, (int)width);
        return TG_ERR_INVALID;
    }
    if (ms) *ms = 0;
    TG_TRY(cudaSetDevice(ctx->device), "cudaSetDevice");
    const int64_t np = (int64_t)npairs;
    tg_slot *s = &ctx->slots[slot];
    s->loaded = false;
    temps t(ctx);
    uint64_t *d_a = nullptr, *d_b = nullptr;
    void *d_raw = nullptr;
    const size_t key_bytes = (size_t)std::max<int64_t>(np, 1) * sizeof(uint64_t);
    TG_TRY(cudaEventRecord(ctx->ev_start, ctx->stream), "event");
    int64_t n = 0;
    uint64_t *d_orig = nullptr;
    uint64_t **want_orig = orig_out ? &d_orig : nullptr;
    if (in.p != nullptr) {
        if (!t.adopt(in.p)) {
            tg_set_err(err, errlen, "%s: too many temporaries", fn);
            return TG_ERR_INTERNAL;
        }
        in.p = nullptr;
    }
    if (width == 4) {
        // 32-bit pairs take the keys' own room and become the keys in place.
        if (d_in != nullptr) {
            d_a = (uint64_t *)d_in;
        } else {
            TG_TRY(t.get((void **)&d_a, key_bytes), "pair buffer");
            if (np > 0)
                TG_TRY(cudaMemcpyAsync(d_a, edges, (size_t)np * 8, cudaMemcpyHostToDevice, ctx->stream),
                       "upload pairs");
        }
        rc = compact_ids<uint32_t>(ctx, t, (const uint32_t *)d_a, np, d_a, &n, want_orig, stats, err, errlen);
    } else {
        if (d_in != nullptr) {
            d_raw = d_in;
        } else {
            TG_TRY(t.get(&d_raw, (size_t)std::max<int64_t>(np, 1) * 16), "pair buffer");
        }
        TG_TRY(t.get((void **)&d_a, key_bytes), "key buffer");
        if (np > 0 && d_in == nullptr)
            TG_TRY(cudaMemcpyAsync(d_raw, edges, (size_t)np * 16, cudaMemcpyHostToDevice, ctx->stream),
                   "upload pairs");
        rc = compact_ids<uint64_t>(ctx, t, (const uint64_t *)d_raw, np, d_a, &n, want_orig, stats, err, errlen);
        if (rc == TG_OK) TG_TRY(t.release(d_raw), "free pairs");
    }
    if (rc != TG_OK) return rc;
    if ((uint64_t)n >= 0xffffffffull) {
        tg_set_err(err, errlen, "%s: %lld vertices exceed the GPU path (< 2^32-1)", fn, (long long)n);
        return TG_ERR_INVALID;
    }
    if ((rowptr_out || orig_out) && (uint64_t)n > max_vertices) {
        tg_set_err(err, errlen, "%s: %lld vertices exceed the caller's room for %llu", fn, (long long)n,
                   (unsigned long long)max_vertices);
        return TG_ERR_INVALID;
    }
    TG_TRY(t.get((void **)&d_b, key_bytes), "key buffer");
    const uint64_t iso = stats[TG_PREP_ISOLATED];
    rc = prep_tail(ctx, s, t, fn, d_a, d_b, np, n, rowptr_out, cols_out, nullptr, d_orig, orig_out, stats, err,
                   errlen);
    stats[TG_PREP_ISOLATED] = iso;
    if (rc != TG_OK) return rc;
    t.clear();
    return prep_finish(ctx, s, stats, ms, fn, err, errlen);
}

} // namespace

// ---- the input buffer (tg_input_*) ------------------------------------------

namespace {

// Waits for the copies into the context's input buffer and frees it.
cudaError_t input_drop(tg_ctx *ctx) {
    cudaError_t e = cudaSuccess;
    if (ctx->input != nullptr) {
        e = cudaStreamSynchronize(ctx->copy);
        tg_ctx_free(ctx, ctx->input);
    }
    ctx->input = nullptr;
    ctx->input_bytes = ctx->input_copied = 0;
    return e;
}

} // namespace

extern "C" int32_t tg_input_alloc(tg_ctx *ctx, uint64_t bytes, char *err, uint64_t errlen) {
    if (ctx == nullptr) {
        tg_set_err(err, errlen, "tg_input_alloc: NULL context");
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_input_alloc: cudaSetDevice");
    if ((e = input_drop(ctx)) != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_input_alloc: earlier copies");
    void *p = nullptr;
    // At least one key's room, as tg_prep_ids's pair buffer.
    if ((e = tg_ctx_malloc(ctx, &p, (size_t)std::max<uint64_t>(bytes, 8))) != cudaSuccess)
        return tg_cuda_status(e, err, errlen, "tg_input_alloc: input buffer");
    ctx->input = p;
    ctx->input_bytes = bytes;
    ctx->input_copied = 0;
    return TG_OK;
}

extern "C" int32_t tg_input_copy_async(tg_ctx *ctx, uint64_t offset, const void *src, uint64_t bytes, char *err,
                                       uint64_t errlen) {
    if (ctx == nullptr || (bytes > 0 && src == nullptr)) {
        tg_set_err(err, errlen, "tg_input_copy_async: NULL context or source");
        return TG_ERR_INVALID;
    }
    if (ctx->input == nullptr) {
        tg_set_err(err, errlen, "tg_input_copy_async: no input buffer (tg_input_alloc)");
        return TG_ERR_INVALID;
    }
    if (offset > ctx->input_bytes || bytes > ctx->input_bytes - offset) {
        tg_set_err(err, errlen, "tg_input_copy_async: %llu bytes at offset %llu exceed the input buffer's %llu",
                   (unsigned long long)bytes, (unsigned long long)offset, (unsigned long long)ctx->input_bytes);
        return TG_ERR_INVALID;
    }
    if (bytes == 0) return TG_OK;
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_input_copy_async: cudaSetDevice");
    e = cudaMemcpyAsync((char *)ctx->input + offset, src, (size_t)bytes, cudaMemcpyHostToDevice, ctx->copy);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_input_copy_async: copy");
    ctx->input_copied += bytes;
    return TG_OK;
}

extern "C" int32_t tg_input_free(tg_ctx *ctx, char *err, uint64_t errlen) {
    if (ctx == nullptr) {
        tg_set_err(err, errlen, "tg_input_free: NULL context");
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_input_free: cudaSetDevice");
    if ((e = input_drop(ctx)) != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_input_free: copies");
    return TG_OK;
}

namespace {

// tg_prep_ids from the input buffer, which it consumes whatever the outcome.
int32_t prep_ids_input(tg_ctx *ctx, int32_t slot, uint64_t npairs, int32_t width, uint64_t max_vertices,
                       uint64_t *rowptr_out, uint32_t *cols_out, uint64_t *orig_out, uint64_t *stats, double *ms,
                       char *err, uint64_t errlen) {
    const char *fn = "tg_prep_ids (from the input buffer)";
    if (ctx == nullptr) {
        tg_set_err(err, errlen, "%s: NULL context", fn);
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) {
        input_drop(ctx);
        return tg_cuda_status(e, err, errlen, "tg_prep_ids (from the input buffer): cudaSetDevice");
    }
    // The copies end before the buffer changes hands: kernels run on the
    // other stream.
    if ((e = cudaStreamSynchronize(ctx->copy)) != cudaSuccess) {
        input_drop(ctx);
        return tg_cuda_status(e, err, errlen, "tg_prep_ids (from the input buffer): input copies");
    }
    const uint64_t have = ctx->input_copied, room = ctx->input_bytes;
    void *in = ctx->input;
    const bool wide_ok = width == 4 || width == 8;
    const uint64_t per_pair = 2 * (uint64_t)(wide_ok ? width : 4);
    const bool fits = npairs <= room / per_pair;
    if (in == nullptr || !wide_ok || !fits || have != npairs * per_pair || stats == nullptr || slot < 0 ||
        slot >= TG_MAX_SLOTS) {
        input_drop(ctx);
        if (in == nullptr) tg_set_err(err, errlen, "%s: no input buffer (tg_input_alloc)", fn);
        else if (!wide_ok) tg_set_err(err, errlen, "%s: id width %d: want 4 or 8 bytes", fn, (int)width);
        else if (!fits || have != npairs * per_pair)
            tg_set_err(err, errlen, "%s: %llu pairs of %d-byte ids need %llu bytes; the input buffer has %llu, %llu copied",
                       fn, (unsigned long long)npairs, (int)width, (unsigned long long)(npairs * per_pair),
                       (unsigned long long)room, (unsigned long long)have);
        else tg_set_err(err, errlen, "%s: NULL stats or slot %d out of range", fn, slot);
        return TG_ERR_INVALID;
    }
    ctx->input = nullptr;
    ctx->input_bytes = ctx->input_copied = 0;
    return prep_ids(ctx, slot, in, npairs, width, max_vertices, rowptr_out, cols_out, orig_out, stats, ms, fn, err,
                    errlen, in);
}

} // namespace

extern "C" int32_t tg_prep_ids(tg_ctx *ctx, int32_t slot, int32_t from_input, const void *edges, uint64_t npairs,
                               int32_t width, uint64_t max_vertices, uint64_t *rowptr_out, uint32_t *cols_out,
                               uint64_t *orig_out, uint64_t *stats, double *ms, char *err, uint64_t errlen) {
    if (from_input == 1)
        return prep_ids_input(ctx, slot, npairs, width, max_vertices, rowptr_out, cols_out, orig_out, stats, ms, err,
                              errlen);
    if (from_input != 0) {
        tg_set_err(err, errlen, "tg_prep_ids: from_input %d: want 0 or 1", (int)from_input);
        return TG_ERR_INVALID;
    }
    return prep_ids(ctx, slot, edges, npairs, width, max_vertices, rowptr_out, cols_out, orig_out, stats, ms,
                    "tg_prep_ids", err, errlen);
}
