// tg_pieces_*: the device's part of a preprocessing done in pieces, for
// pairs that do not fit the device whole (trigrid.h). The host keeps the
// keys; each call uploads a piece into the work area, makes its keys,
// sorts them (CUB radix sort over the bits a key of n vertices can have),
// drops repeats and counts degrees when asked, and copies the result back.
// One stream, one piece at a time: a piece's upload completes before its
// result is copied back, so a caller may sort its keys in place.
#include <algorithm>
#include <cstdio>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "tg_core.cuh"
#include "tg_rank.cuh"

namespace {

#ifdef TG_INT_ITEMS
typedef int items_t; // a CUB without 64-bit item counts
#else
typedef int64_t items_t;
#endif

int key_bits(uint64_t n) { // bits of a key whose words are below n
    int b = 0;
    while (b < 32 && (n >> b) != 0) b++;
    return std::min(64, 32 + b);
}

unsigned grid_for(const tg_ctx *ctx, int64_t items) {
    const int64_t g = (items + 255) / 256;
    return (unsigned)std::max<int64_t>(1, std::min<int64_t>(g, (int64_t)ctx->env.sm_count * 32));
}

// The vertex of id u under the id map (tg_pieces_begin) of words words,
// or ~0u for an id the map does not mark.
__device__ __forceinline__ uint32_t mapped_id(const uint64_t *__restrict__ ids, uint64_t words, uint32_t u) {
    const uint64_t i = 2 * (uint64_t)(u >> 6);
    if (i + 1 >= words) return ~0u;
    const uint64_t w = ids[i], bit = 1ull << (u & 63);
    if (!(w & bit)) return ~0u;
    return (uint32_t)ids[i + 1] + (uint32_t)__popcll(w & (bit - 1));
}

// Makes keys of the items in place; counts the items that break op's rule
// into bad (their key becomes 0, and the call fails), and the pairs' loops
// into loops (their key becomes kLoop, which sorts last). With an id map
// (ids, words > 0) a pair's ids are mapped to vertices after the loop test.
constexpr uint64_t kLoop = ~0ull;
__global__ void piece_keys(uint64_t *k, int64_t m, int32_t op, uint32_t n, const uint32_t *__restrict__ rank,
                           const uint64_t *__restrict__ ids, uint64_t words, unsigned long long *bad,
                           unsigned long long *loops) {
    unsigned long long nb = 0, nl = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t x = k[i];
        uint32_t a, b;
        if (op == TG_PIECES_PAIRS) {
            a = (uint32_t)x; // u: the pair's first id, the low word
            b = (uint32_t)(x >> 32);
            if (words > 0) {
                if (a == b && 2 * (uint64_t)(a >> 6) + 1 < words) { // a loop of an id the map covers
                    nl++;
                    k[i] = kLoop;
                    continue;
                }
                a = mapped_id(ids, words, a);
                b = mapped_id(ids, words, b);
            }
        } else {
            a = (uint32_t)(x >> 32);
            b = (uint32_t)x;
        }
        if (a >= n || b >= n || (op == TG_PIECES_ORIENT && a == b)) {
            nb++;
            k[i] = 0;
            continue;
        }
        if (op == TG_PIECES_PAIRS && a == b) {
            nl++;
            k[i] = kLoop;
            continue;
        }
        if (op == TG_PIECES_ORIENT) {
            a = rank[a];
            b = rank[b];
        }
        if (op != TG_PIECES_KEYS) k[i] = ((uint64_t)min(a, b) << 32) | max(a, b);
    }
    for (int o = 16; o > 0; o >>= 1) {
        nb += __shfl_down_sync(0xffffffffu, nb, o);
        nl += __shfl_down_sync(0xffffffffu, nl, o);
    }
    if ((threadIdx.x & 31) == 0 && nb) atomicAdd(bad, nb);
    if ((threadIdx.x & 31) == 0 && nl) atomicAdd(loops, nl);
}

__global__ void piece_degrees(const uint64_t *__restrict__ k, int64_t m, uint32_t *deg) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t x = k[i];
        atomicAdd(&deg[(uint32_t)(x >> 32)], 1u);
        atomicAdd(&deg[(uint32_t)x], 1u);
    }
}

// Sorted keys k of rows row0 .. row0+nrows-1: each key's low word into
// cols; keys of other rows and repeated keys counted into bad.
__global__ void piece_cols(const uint64_t *__restrict__ k, int64_t m, uint64_t row0, uint64_t nrows, uint32_t *cols,
                           unsigned long long *bad) {
    unsigned long long nb = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t x = k[i], r = x >> 32;
        nb += r < row0 || r - row0 >= nrows || (i > 0 && k[i - 1] == x);
        cols[i] = (uint32_t)x;
    }
    for (int o = 16; o > 0; o >>= 1) nb += __shfl_down_sync(0xffffffffu, nb, o);
    if ((threadIdx.x & 31) == 0 && nb) atomicAdd(bad, nb);
}

__device__ __forceinline__ int64_t first_at_least(const uint64_t *__restrict__ k, int64_t m, uint64_t x) {
    int64_t lo = 0, hi = m;
    while (lo < hi) {
        const int64_t mid = (lo + hi) >> 1;
        if (k[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// counts[r] = the keys of row row0 + r in the sorted keys k.
__global__ void piece_counts(const uint64_t *__restrict__ k, int64_t m, uint64_t row0, int64_t nrows,
                             uint32_t *counts) {
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < nrows; r += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t row = row0 + (uint64_t)r;
        counts[r] = (uint32_t)(first_at_least(k, m, (row + 1) << 32) - first_at_least(k, m, row << 32));
    }
}

// Scratch of a sort and a unique of cap keys.
cudaError_t scratch_bytes(uint64_t cap, int end_bit, size_t *bytes) {
    size_t a = 0, b = 0;
    cub::DoubleBuffer<uint64_t> db(nullptr, nullptr);
    cudaError_t e = cub::DeviceRadixSort::SortKeys(nullptr, a, db, (items_t)cap, 0, end_bit);
    if (e != cudaSuccess) return e;
    e = cub::DeviceSelect::Unique(nullptr, b, (uint64_t *)nullptr, (uint64_t *)nullptr, (items_t *)nullptr,
                                  (items_t)cap);
    *bytes = std::max(a, b);
    return e;
}

uint64_t rounded(uint64_t b) { return ((b ? b : 16) + 255) & ~(uint64_t)255; } // as tg_ctx_malloc

int32_t need_area(tg_ctx *ctx, const char *fn, char *err, uint64_t errlen) {
    if (ctx == nullptr) {
        tg_set_err(err, errlen, "%s: NULL context", fn);
        return TG_ERR_INVALID;
    }
    if (ctx->pieces.a == nullptr) {
        tg_set_err(err, errlen, "%s: no work area (tg_pieces_begin)", fn);
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, fn);
    return TG_OK;
}

// Uploads the spans into the work area's first buffer and makes their
// keys; *m receives their number. bad counts are reset first.
int32_t upload(tg_ctx *ctx, const char *fn, int32_t op, const void *base, const uint64_t *spans, int32_t nspans,
               int64_t *m, char *err, uint64_t errlen) {
    char where[160];
    auto &pc = ctx->pieces;
    if (nspans < 0 || (nspans > 0 && (spans == nullptr || base == nullptr))) {
        tg_set_err(err, errlen, "%s: %d spans, spans or base NULL", fn, nspans);
        return TG_ERR_INVALID;
    }
    uint64_t total = 0;
    for (int32_t i = 0; i < nspans; i++) {
        if (spans[2 * i + 1] > pc.cap - total) {
            tg_set_err(err, errlen, "%s: the spans hold more than the capacity of %llu items", fn,
                       (unsigned long long)pc.cap);
            return TG_ERR_INVALID;
        }
        total += spans[2 * i + 1];
    }
    TG_STEP(cudaMemsetAsync(ctx->d_count, 0, 2 * sizeof(unsigned long long), ctx->stream), "reset");
    uint64_t at = 0;
    for (int32_t i = 0; i < nspans; i++) {
        const uint64_t first = spans[2 * i], count = spans[2 * i + 1];
        if (count == 0) continue;
        TG_STEP(cudaMemcpyAsync(pc.a + at, (const uint64_t *)base + first, count * 8, cudaMemcpyHostToDevice,
                                   ctx->stream),
                   "upload");
        at += count;
    }
    if (total > 0) {
        piece_keys<<<grid_for(ctx, (int64_t)total), 256, 0, ctx->stream>>>(
            pc.a, (int64_t)total, op, (uint32_t)pc.nvert, pc.vert, pc.ids, pc.id_words, ctx->d_count, ctx->d_count + 1);
        TG_STEP(cudaGetLastError(), "key kernel");
    }
    *m = (int64_t)total;
    return TG_OK;
}

// Sorts the m keys of the first buffer; *sorted receives the buffer that
// holds them, *other the other one.
int32_t sort_keys(tg_ctx *ctx, const char *fn, int64_t m, uint64_t **sorted, uint64_t **other, char *err,
                  uint64_t errlen) {
    char where[160];
    auto &pc = ctx->pieces;
    cub::DoubleBuffer<uint64_t> db(pc.a, pc.b);
    if (m > 1) {
        size_t tb = pc.tmp_bytes;
        TG_STEP(cub::DeviceRadixSort::SortKeys(pc.tmp, tb, db, (items_t)m, 0, key_bits(pc.nvert), ctx->stream),
                   "sort");
    }
    *sorted = db.Current();
    *other = *sorted == pc.a ? pc.b : pc.a;
    return TG_OK;
}

// Waits for the stream and reads the bad and loop counts (and, with nsel,
// the unique count); fails naming the bad items.
int32_t settle(tg_ctx *ctx, const char *fn, const char *rule, bool nsel, int64_t *selected, uint64_t *loops,
               char *err, uint64_t errlen) {
    char where[160];
    auto &pc = ctx->pieces;
    TG_STEP(cudaMemcpyAsync(ctx->h_count, ctx->d_count, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                               ctx->stream),
               "read counters");
    if (nsel)
        TG_STEP(cudaMemcpyAsync(&ctx->h_count[2], pc.nsel, sizeof(items_t), cudaMemcpyDeviceToHost, ctx->stream),
                   "read unique count");
    TG_STEP(cudaStreamSynchronize(ctx->stream), "piece");
    if (ctx->h_count[0] != 0) {
        tg_set_err(err, errlen, "%s: %llu items %s", fn, (unsigned long long)ctx->h_count[0], rule);
        return TG_ERR_INVALID;
    }
    if (nsel) *selected = (int64_t) * (items_t *)&ctx->h_count[2];
    if (loops) *loops = ctx->h_count[1];
    return TG_OK;
}

// Queues the copy of bytes bytes of device memory at from back over the
// spans of base (8-byte items), in the spans' order, each span filled
// before the next. The stream's uploads of those spans come first.
int32_t copy_back(tg_ctx *ctx, const char *fn, const void *from, uint64_t bytes, uint64_t *base,
                  const uint64_t *spans, int32_t nspans, char *err, uint64_t errlen) {
    char where[160];
    const char *p = (const char *)from;
    for (int32_t i = 0; i < nspans && bytes > 0; i++) {
        const uint64_t b = std::min<uint64_t>(spans[2 * i + 1] * 8, bytes);
        if (b == 0) continue;
        TG_STEP(cudaMemcpyAsync(base + spans[2 * i], p, b, cudaMemcpyDeviceToHost, ctx->stream), "copy back");
        p += b;
        bytes -= b;
    }
    return TG_OK;
}

const char *rule_of(int32_t op) {
    switch (op) {
    case TG_PIECES_PAIRS: return "hold an id beyond the vertices";
    case TG_PIECES_ORIENT: return "are loops or hold a word beyond the vertices";
    default: return "hold a word beyond the vertices";
    }
}

} // namespace

void tg_pieces_drop(tg_ctx *ctx) {
    auto &pc = ctx->pieces;
    tg_ctx_free(ctx, pc.vert);
    tg_ctx_free(ctx, pc.ids);
    tg_ctx_free(ctx, pc.a);
    tg_ctx_free(ctx, pc.b);
    tg_ctx_free(ctx, pc.tmp);
    tg_ctx_free(ctx, pc.nsel);
    pc = {};
}

extern "C" int32_t tg_pieces_begin(tg_ctx *ctx, uint64_t nvertices, uint64_t max_items, const uint64_t *id_map,
                                   uint64_t id_words, uint64_t *capacity, char *err, uint64_t errlen) {
    const char *fn = "tg_pieces_begin";
    char where[160];
    if (ctx == nullptr || capacity == nullptr || (id_words > 0 && id_map == nullptr) || id_words % 2 != 0) {
        tg_set_err(err, errlen, "%s: NULL context or capacity, or an id map of %llu words at %p", fn,
                   (unsigned long long)id_words, (const void *)id_map);
        return TG_ERR_INVALID;
    }
    *capacity = 0;
    if (nvertices >= 0xffffffffull) {
        tg_set_err(err, errlen, "%s: %llu vertices exceed the GPU path (< 2^32-1)", fn,
                   (unsigned long long)nvertices);
        return TG_ERR_INVALID;
    }
    TG_STEP(cudaSetDevice(ctx->device), "cudaSetDevice");
    TG_STEP(cudaStreamSynchronize(ctx->stream), "earlier work");
    tg_pieces_drop(ctx);
    const int end_bit = key_bits(nvertices);
    const uint64_t fixed = rounded(nvertices * 4) + (id_words ? rounded(id_words * 8) : 0) + rounded(sizeof(items_t));
    const uint64_t free_bytes = ctx->limit > ctx->used ? ctx->limit - ctx->used : 0;
    auto area = [&](uint64_t cap, uint64_t *bytes) -> cudaError_t {
        size_t tb = 0;
        cudaError_t e = scratch_bytes(cap, end_bit, &tb);
        *bytes = fixed + 2 * rounded(cap * 8) + rounded(tb);
        return e;
    };
    // The most items whose area fits: the area grows with the items.
    uint64_t lo = 0, hi = std::min<uint64_t>(std::max<uint64_t>(max_items, TG_PIECES_MIN_ITEMS), free_bytes / 16 + 1);
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo + 1) / 2;
        uint64_t b = 0;
        TG_STEP(area(mid, &b), "scratch sizing");
        if (b <= free_bytes) lo = mid;
        else hi = mid - 1;
    }
    if (lo < TG_PIECES_MIN_ITEMS) {
        uint64_t least = 0;
        TG_STEP(area(TG_PIECES_MIN_ITEMS, &least), "scratch sizing");
        tg_set_err(err, errlen,
                   "%s: out of device memory: %llu vertices, %llu id map words and %d items need %llu bytes, %llu "
                   "are free",
                   fn, (unsigned long long)nvertices, (unsigned long long)id_words, TG_PIECES_MIN_ITEMS,
                   (unsigned long long)least, (unsigned long long)free_bytes);
        return TG_ERR_OOM;
    }
    auto &pc = ctx->pieces;
    size_t tb = 0;
    TG_STEP(scratch_bytes(lo, end_bit, &tb), "scratch sizing");
    cudaError_t e;
    if ((e = tg_ctx_malloc(ctx, (void **)&pc.vert, nvertices * 4)) != cudaSuccess ||
        (id_words > 0 && (e = tg_ctx_malloc(ctx, (void **)&pc.ids, id_words * 8)) != cudaSuccess) ||
        (e = tg_ctx_malloc(ctx, (void **)&pc.a, lo * 8)) != cudaSuccess ||
        (e = tg_ctx_malloc(ctx, (void **)&pc.b, lo * 8)) != cudaSuccess ||
        (e = tg_ctx_malloc(ctx, &pc.tmp, tb)) != cudaSuccess ||
        (e = tg_ctx_malloc(ctx, (void **)&pc.nsel, sizeof(items_t))) != cudaSuccess) {
        tg_pieces_drop(ctx);
        return tg_cuda_status(e, err, errlen, "tg_pieces_begin: work area");
    }
    pc.tmp_bytes = tb;
    pc.cap = lo;
    pc.nvert = nvertices;
    pc.id_words = id_words;
    if (nvertices > 0 || id_words > 0) {
        e = cudaMemsetAsync(pc.vert, 0, nvertices * 4, ctx->stream);
        if (e == cudaSuccess && id_words > 0)
            e = cudaMemcpyAsync(pc.ids, id_map, id_words * 8, cudaMemcpyHostToDevice, ctx->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(ctx->stream);
        if (e != cudaSuccess) {
            tg_pieces_drop(ctx);
            return tg_cuda_status(e, err, errlen, "tg_pieces_begin: zero the vertex words, copy the id map");
        }
    }
    *capacity = lo;
    return TG_OK;
}

extern "C" int32_t tg_pieces_sort(tg_ctx *ctx, int32_t op, int32_t flags, const void *base, const uint64_t *spans,
                                  int32_t nspans, uint64_t *out, uint64_t *nout, uint64_t *nloops, char *err,
                                  uint64_t errlen) {
    const char *fn = "tg_pieces_sort";
    char where[160];
    int32_t rc = need_area(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    if (op < TG_PIECES_PAIRS || op > TG_PIECES_ORIENT || (flags & ~(TG_PIECES_UNIQUE | TG_PIECES_DEGREES)) != 0 ||
        ((flags & TG_PIECES_DEGREES) && !(flags & TG_PIECES_UNIQUE)) || nout == nullptr) {
        tg_set_err(err, errlen, "%s: op %d, flags %d or nout NULL", fn, op, flags);
        return TG_ERR_INVALID;
    }
    *nout = 0;
    if (nloops) *nloops = 0;
    int64_t m = 0;
    if ((rc = upload(ctx, fn, op, base, spans, nspans, &m, err, errlen)) != TG_OK) return rc;
    uint64_t *sorted = nullptr, *other = nullptr;
    if ((rc = sort_keys(ctx, fn, m, &sorted, &other, err, errlen)) != TG_OK) return rc;
    auto &pc = ctx->pieces;
    const bool uniq = (flags & TG_PIECES_UNIQUE) && m > 0;
    if (uniq) {
        size_t tb = pc.tmp_bytes;
        TG_STEP(cub::DeviceSelect::Unique(pc.tmp, tb, sorted, other, pc.nsel, (items_t)m, ctx->stream), "unique");
        std::swap(sorted, other);
    }
    int64_t kept = m;
    uint64_t loops = 0;
    if ((rc = settle(ctx, fn, rule_of(op), uniq, &kept, &loops, err, errlen)) != TG_OK) return rc;
    if (loops > 0) kept -= uniq ? 1 : (int64_t)loops; // they sort last
    if (nloops) *nloops = loops;
    if ((flags & TG_PIECES_DEGREES) && kept > 0) {
        piece_degrees<<<grid_for(ctx, kept), 256, 0, ctx->stream>>>(sorted, kept, pc.vert);
        TG_STEP(cudaGetLastError(), "degree kernel");
    }
    if (kept > 0 && out != nullptr)
        TG_STEP(cudaMemcpyAsync(out, sorted, (size_t)kept * 8, cudaMemcpyDeviceToHost, ctx->stream), "copy back");
    if (kept > 0 && out == nullptr &&
        (rc = copy_back(ctx, fn, sorted, (uint64_t)kept * 8, (uint64_t *)base, spans, nspans, err, errlen)) != TG_OK)
        return rc;
    TG_STEP(cudaStreamSynchronize(ctx->stream), "copy back");
    *nout = (uint64_t)kept;
    return TG_OK;
}

extern "C" int32_t tg_pieces_csr(tg_ctx *ctx, uint64_t *base, const uint64_t *spans, int32_t nspans,
                                 uint64_t row0, uint64_t nrows, uint32_t *cols, uint32_t *counts, uint64_t *nout,
                                 char *err, uint64_t errlen) {
    const char *fn = "tg_pieces_csr";
    char where[160];
    int32_t rc = need_area(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    auto &pc = ctx->pieces;
    if (nout == nullptr || nrows > pc.cap || (nrows > 0 && counts == nullptr)) {
        tg_set_err(err, errlen, "%s: %llu rows beyond the capacity of %llu, or counts or nout NULL", fn,
                   (unsigned long long)nrows, (unsigned long long)pc.cap);
        return TG_ERR_INVALID;
    }
    *nout = 0;
    int64_t m = 0;
    if ((rc = upload(ctx, fn, TG_PIECES_KEYS, base, spans, nspans, &m, err, errlen)) != TG_OK) return rc;
    uint64_t *sorted = nullptr, *other = nullptr;
    if ((rc = sort_keys(ctx, fn, m, &sorted, &other, err, errlen)) != TG_OK) return rc;
    // The other buffer takes the columns (m words) and the counts (nrows
    // words after cap of them).
    uint32_t *d_cols = (uint32_t *)other, *d_counts = (uint32_t *)other + pc.cap;
    if (m > 0) {
        piece_cols<<<grid_for(ctx, m), 256, 0, ctx->stream>>>(sorted, m, row0, nrows, d_cols, ctx->d_count);
        TG_STEP(cudaGetLastError(), "column kernel");
    }
    if (nrows > 0) {
        piece_counts<<<grid_for(ctx, (int64_t)nrows), 256, 0, ctx->stream>>>(sorted, m, row0, (int64_t)nrows,
                                                                             d_counts);
        TG_STEP(cudaGetLastError(), "count kernel");
    }
    if ((rc = settle(ctx, fn, "are repeated or of rows beyond the piece's", false, nullptr, nullptr, err, errlen)) !=
        TG_OK)
        return rc;
    if (m > 0 && cols != nullptr)
        TG_STEP(cudaMemcpyAsync(cols, d_cols, (size_t)m * 4, cudaMemcpyDeviceToHost, ctx->stream), "columns");
    if (m > 0 && cols == nullptr &&
        (rc = copy_back(ctx, fn, d_cols, (uint64_t)m * 4, base, spans, nspans, err, errlen)) != TG_OK)
        return rc;
    if (nrows > 0)
        TG_STEP(cudaMemcpyAsync(counts, d_counts, (size_t)nrows * 4, cudaMemcpyDeviceToHost, ctx->stream),
                   "counts");
    TG_STEP(cudaStreamSynchronize(ctx->stream), "copy back");
    *nout = (uint64_t)m;
    return TG_OK;
}

extern "C" int32_t tg_pieces_vertices(tg_ctx *ctx, uint32_t *words, int32_t to_device, char *err, uint64_t errlen) {
    const char *fn = "tg_pieces_vertices";
    char where[160];
    int32_t rc = need_area(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    auto &pc = ctx->pieces;
    if (pc.nvert == 0) return TG_OK;
    if (words == nullptr) {
        tg_set_err(err, errlen, "%s: NULL words", fn);
        return TG_ERR_INVALID;
    }
    if (to_device)
        TG_STEP(cudaMemcpyAsync(pc.vert, words, pc.nvert * 4, cudaMemcpyHostToDevice, ctx->stream), "upload");
    else
        TG_STEP(cudaMemcpyAsync(words, pc.vert, pc.nvert * 4, cudaMemcpyDeviceToHost, ctx->stream), "download");
    TG_STEP(cudaStreamSynchronize(ctx->stream), "vertex words");
    return TG_OK;
}

extern "C" int32_t tg_pieces_rank(tg_ctx *ctx, uint32_t *rank, uint64_t *wedges, uint64_t *max_degree, char *err,
                                  uint64_t errlen) {
    const char *fn = "tg_pieces_rank";
    char where[160];
    int32_t rc = need_area(ctx, fn, err, errlen);
    if (rc != TG_OK) return rc;
    auto &pc = ctx->pieces;
    if (wedges == nullptr || max_degree == nullptr || (pc.nvert > 0 && rank == nullptr)) {
        tg_set_err(err, errlen, "%s: NULL rank, wedges or max_degree", fn);
        return TG_ERR_INVALID;
    }
    if (pc.nvert > pc.cap) {
        tg_set_err(err, errlen, "%s: %llu vertices beyond the capacity of %llu", fn, (unsigned long long)pc.nvert,
                   (unsigned long long)pc.cap);
        return TG_ERR_INVALID;
    }
    const int64_t n = (int64_t)pc.nvert;
    TG_STEP(cudaMemsetAsync(ctx->d_count, 0, 2 * sizeof(unsigned long long), ctx->stream), "reset");
    if (n > 0) {
        // The degrees become sort keys in the first buffer, the sorted
        // keys the ranks in the vertex words.
        degree_keys<<<grid_for(ctx, n), 256, 0, ctx->stream>>>(pc.vert, n, pc.a, ctx->d_count, ctx->d_count + 1);
        TG_STEP(cudaGetLastError(), "degree keys kernel");
        cub::DoubleBuffer<uint64_t> db(pc.a, pc.b);
        if (n > 1) {
            size_t tb = pc.tmp_bytes;
            TG_STEP(cub::DeviceRadixSort::SortKeys(pc.tmp, tb, db, (items_t)n, 0, key_bits(pc.nvert), ctx->stream),
                       "rank sort");
        }
        scatter_rank<<<grid_for(ctx, n), 256, 0, ctx->stream>>>(db.Current(), n, pc.vert);
        TG_STEP(cudaGetLastError(), "rank kernel");
        TG_STEP(cudaMemcpyAsync(rank, pc.vert, (size_t)n * 4, cudaMemcpyDeviceToHost, ctx->stream), "copy ranks");
    }
    TG_STEP(cudaMemcpyAsync(ctx->h_count, ctx->d_count, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                               ctx->stream),
               "read counters");
    TG_STEP(cudaStreamSynchronize(ctx->stream), "ranks");
    *wedges = ctx->h_count[0];
    *max_degree = ctx->h_count[1];
    return TG_OK;
}

extern "C" int32_t tg_pieces_end(tg_ctx *ctx, char *err, uint64_t errlen) {
    if (ctx == nullptr) {
        tg_set_err(err, errlen, "tg_pieces_end: NULL context");
        return TG_ERR_INVALID;
    }
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e == cudaSuccess) e = cudaStreamSynchronize(ctx->stream);
    tg_pieces_drop(ctx);
    if (e != cudaSuccess) return tg_cuda_status(e, err, errlen, "tg_pieces_end");
    return TG_OK;
}
