// WETRIC: wedge-parallel triangle counting.
//
// Paper: J. Spaan, K.-H. Chen, D. A. Bader, A.-L. Varbanescu, "Wedge-Parallel
// Triangle Counting for GPUs" (2025). Every thread evaluates a fixed number of
// wedges (the spread), wedges are found from prefix sums instead of being
// stored, threads of a block cooperate so that neighbouring threads evaluate
// neighbouring wedges, and dense rows are looked up in a bitmap.
//
// Preconditions: three CSR blocks with rows sorted ascending and without
// duplicates (tg_internal.cuh). Nothing else is assumed: the kernel is exact
// for any three blocks, ordered or not, empty or not, with hubs or not.
//
// Index spaces: rows of ij and ik are I-local, columns of ij and rows of jk
// are J-local, columns of ik and jk are K-local. A wedge is (u; v, x) with
// (u, v) an edge of ij and x either in ik.row(u) (searched for in jk.row(v))
// or in jk.row(v) (searched for in ik.row(u)); it closes when x lies in both.
//
// Differences from the original, all of which keep the count exact:
// - Wedges hang off edges, not vertices, and each edge enumerates only the
//   part of the shorter list that lies inside the value range of the other
//   (the "mixed" style). For the whole forward graph this is at most the
//   original's C(d, 2) wedges per vertex and usually fewer; for blocks of a
//   2D partition, where J-local and K-local ids are not comparable, it is what
//   makes an ordering-free kernel affordable.
// - A block takes a fixed run of edges, scans their wedge counts in shared
//   memory and walks its own wedges round by round. There is no global
//   prefix array, no binary search over it, no host synchronisation, and one
//   atomic per block.
// - The dense-tail bitmap is chosen per row of jk by density (the span of the
//   row's values against its length), which covers the tail of a
//   degree-ordered graph without knowing that the graph is one.
#include "tg_internal.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdlib>

namespace {

constexpr int kThreads = 256; // threads per block

struct Blk {
    const uint64_t *rp;
    const uint32_t *c;
    int64_t nrows;
    int64_t nnz;
};

Blk view(const tg_dblock *b) { return Blk{b->rowptr, b->cols, b->nrows, b->nnz}; }

// First index in [lo, hi) whose value is >= x.
__device__ __forceinline__ uint64_t lower_bound(const uint32_t *a, uint64_t lo, uint64_t hi, uint32_t x) {
    while (lo < hi) {
        uint64_t mid = lo + ((hi - lo) >> 1);
        if (__ldg(a + mid) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// First index in [lo, hi) whose value is > x.
__device__ __forceinline__ uint64_t upper_bound(const uint32_t *a, uint64_t lo, uint64_t hi, uint32_t x) {
    while (lo < hi) {
        uint64_t mid = lo + ((hi - lo) >> 1);
        if (__ldg(a + mid) <= x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Membership in a sorted run. The loop runs ceil(log2(len)) times whatever x
// is, so threads of a warp searching runs of similar length stay converged.
__device__ __forceinline__ bool contains(const uint32_t *a, uint64_t base, uint32_t len, uint32_t x) {
    if (len == 0) return false;
    while (len > 1) {
        uint32_t half = len >> 1;
        if (__ldg(a + base + half) <= x) base += half;
        len -= half;
    }
    return __ldg(a + base) == x;
}

// Largest row u in [lo, hi) with rp[u] <= e (rp[lo] <= e must hold): the row
// that owns edge e, skipping empty rows.
__device__ __forceinline__ int64_t row_of(const uint64_t *rp, int64_t lo, int64_t hi, uint64_t e) {
    while (hi - lo > 1) {
        int64_t mid = lo + ((hi - lo) >> 1);
        if (__ldg(rp + mid) <= e) lo = mid; else hi = mid;
    }
    return lo;
}

enum : uint8_t { kIterIK = 0, kIterJK = 1, kIterIKBitmap = 2 };

// E edges per block: fewer edges shorten the longest block, which bounds
// the kernel on small subtasks; more amortise the block's setup on large ones.
template <int S, int E>
__global__ void __launch_bounds__(kThreads)
wedge_kernel(Blk ij, Blk ik, Blk jk, const uint64_t *__restrict__ bm_off,
             const uint32_t *__restrict__ bm, bool self, unsigned long long *out) {
    typedef cub::BlockScan<uint64_t, kThreads> Scan;
    typedef cub::BlockReduce<unsigned long long, kThreads> Reduce;
    __shared__ union {
        typename Scan::TempStorage scan;
        typename Reduce::TempStorage reduce;
    } tmp;
    __shared__ uint64_t s_pre[kThreads + 1]; // exclusive prefix of wedges per edge
    __shared__ uint64_t s_iter[E];           // first element to enumerate
    __shared__ uint64_t s_sbase[E];          // run to search in, or bitmap word base
    __shared__ uint32_t s_slen[E];           // its length, or the bitmap's first value
    __shared__ uint8_t s_mode[E];
    __shared__ uint16_t s_k[kThreads * S];   // edge of each wedge slot in a round
    __shared__ int64_t s_rows[2];

    const int t = threadIdx.x;
    const uint64_t e0 = (uint64_t)blockIdx.x * E;
    const uint64_t e1 = min(e0 + E, (uint64_t)ij.nnz);
    const int64_t nrows = min(ij.nrows, ik.nrows);
    // Rows of ij past ik's rows have no list to intersect; their edges count 0.
    if (t == 0) s_rows[0] = row_of(ij.rp, 0, ij.nrows, e0);
    if (t == 1) s_rows[1] = row_of(ij.rp, 0, ij.nrows, e1 - 1);
    __syncthreads();

    uint64_t cnt = 0;
    uint8_t mode = kIterIK;
    uint64_t iter = 0, sbase = 0;
    uint32_t slen = 0;
    const uint64_t e = e0 + t;
    if (t < E && e < e1) {
        const int64_t u = row_of(ij.rp, s_rows[0], s_rows[1] + 1, e);
        const uint32_t v = __ldg(ij.c + e);
        if (u < nrows && (int64_t)v < jk.nrows) {
            // One upper block as all three: every value of jk.row(v) is > v,
            // so only the part of row u after the edge can match.
            const uint64_t a0 = self ? e + 1 : __ldg(ik.rp + u), a1 = __ldg(ik.rp + u + 1);
            const uint64_t b0 = __ldg(jk.rp + v), b1 = __ldg(jk.rp + v + 1);
            if (a0 < a1 && b0 < b1) {
                const uint32_t ilo = __ldg(ik.c + a0), ihi = __ldg(ik.c + a1 - 1);
                const uint32_t jlo = __ldg(jk.c + b0), jhi = __ldg(jk.c + b1 - 1);
                if (ilo <= jhi && jlo <= ihi) {
                    // Only the overlap of the two value ranges can hold common
                    // elements; enumerate the shorter clipped list.
                    const uint64_t pa0 = ilo >= jlo ? a0 : lower_bound(ik.c, a0, a1, jlo);
                    const uint64_t pa1 = ihi <= jhi ? a1 : upper_bound(ik.c, pa0, a1, jhi);
                    const uint64_t pb0 = jlo >= ilo ? b0 : lower_bound(jk.c, b0, b1, ilo);
                    const uint64_t pb1 = jhi <= ihi ? b1 : upper_bound(jk.c, pb0, b1, ihi);
                    const uint64_t ca = pa1 - pa0, cb = pb1 - pb0;
                    uint64_t o0 = 0, o1 = 0;
                    if (bm_off) { o0 = __ldg(bm_off + v); o1 = __ldg(bm_off + v + 1); }
                    // Cost per wedge: a fixed part (find, load) plus one load
                    // for a bitmap or one per binary-search step.
                    const uint64_t cost_a = ca * (2 + (o1 > o0 ? 1 : 64 - __clzll(cb)));
                    const uint64_t cost_b = cb * (2 + (64 - __clzll(ca)));
                    if (cost_a <= cost_b) {
                        cnt = ca;
                        iter = pa0;
                        if (o1 > o0) {
                            mode = kIterIKBitmap;
                            sbase = o0;
                            slen = jlo;
                        } else {
                            sbase = pb0;
                            slen = (uint32_t)cb;
                        }
                    } else {
                        cnt = cb;
                        mode = kIterJK;
                        iter = pb0;
                        sbase = pa0;
                        slen = (uint32_t)ca;
                    }
                }
            }
        }
    }
    if (t < E) {
        s_iter[t] = iter;
        s_sbase[t] = sbase;
        s_slen[t] = slen;
        s_mode[t] = mode;
    }
    uint64_t excl, total;
    Scan(tmp.scan).ExclusiveSum(cnt, excl, total);
    s_pre[t] = excl;
    if (t == 0) s_pre[kThreads] = total;
    __syncthreads();

    unsigned long long found = 0;
    for (uint64_t r0 = 0; r0 < total; r0 += (uint64_t)kThreads * S) {
        // Spread: each thread locates its first wedge once and walks S
        // consecutive ones, recording only which edge each belongs to.
        const uint64_t w0 = r0 + (uint64_t)t * S;
        if (w0 < total) {
            int lo = 0, hi = E; // last k with s_pre[k] <= w0
            while (hi - lo > 1) {
                int mid = (lo + hi) >> 1;
                if (s_pre[mid] <= w0) lo = mid; else hi = mid;
            }
            int k = lo;
#pragma unroll
            for (int j = 0; j < S; j++) {
                const uint64_t w = w0 + j;
                if (w < total) {
                    while (s_pre[k + 1] <= w) k++;
                    s_k[t * S + j] = (uint16_t)k;
                }
            }
        }
        __syncthreads();
        // Cooperation: evaluate slot j*kThreads + t, so that neighbouring
        // threads take neighbouring wedges, which share an edge and so read
        // neighbouring elements and search the same run.
#pragma unroll
        for (int j = 0; j < S; j++) {
            const int q = j * kThreads + t;
            const uint64_t w = r0 + q;
            if (w < total) {
                const int k = s_k[q];
                const uint64_t off = w - s_pre[k];
                const uint8_t m = s_mode[k];
                bool hit;
                if (m == kIterJK) {
                    const uint32_t x = __ldg(jk.c + s_iter[k] + off);
                    hit = contains(ik.c, s_sbase[k], s_slen[k], x);
                } else {
                    const uint32_t x = __ldg(ik.c + s_iter[k] + off);
                    if (m == kIterIKBitmap) {
                        const uint32_t d = x - s_slen[k];
                        hit = (__ldg(bm + s_sbase[k] + (d >> 5)) >> (d & 31)) & 1u;
                    } else {
                        hit = contains(jk.c, s_sbase[k], s_slen[k], x);
                    }
                }
                found += hit;
            }
        }
        __syncthreads();
    }
    const unsigned long long sum = Reduce(tmp.reduce).Sum(found);
    if (t == 0 && sum) atomicAdd(out, sum);
}

// Words of bitmap for each row of jk: a row gets one when it is long enough
// for a binary search to cost several steps and dense enough (span at most
// ratio * length) that its bitmap is at most ratio/32 words per element.
__global__ void bitmap_words(Blk jk, uint32_t ratio, uint32_t minlen, uint64_t *words) {
    const int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v > jk.nrows) return;
    uint64_t w = 0;
    if (v < jk.nrows) {
        const uint64_t b0 = jk.rp[v], b1 = jk.rp[v + 1];
        const uint64_t len = b1 - b0;
        if (len >= minlen) {
            const uint64_t span = (uint64_t)jk.c[b1 - 1] - jk.c[b0] + 1;
            if (span <= len * ratio) w = (span + 31) >> 5;
        }
    }
    words[v] = w;
}

// One warp per row: clear the row's words, then set one bit per element,
// relative to the row's first value.
__global__ void bitmap_fill(Blk jk, const uint64_t *off, uint32_t *bm) {
    const int64_t v = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (v >= jk.nrows) return;
    const uint64_t o0 = off[v], o1 = off[v + 1];
    if (o0 == o1) return;
    for (uint64_t i = o0 + lane; i < o1; i += 32) bm[i] = 0;
    __syncwarp();
    const uint64_t b0 = jk.rp[v], b1 = jk.rp[v + 1];
    const uint32_t lo = jk.c[b0];
    for (uint64_t i = b0 + lane; i < b1; i += 32) {
        const uint32_t d = jk.c[i] - lo;
        atomicOr(bm + o0 + (d >> 5), 1u << (d & 31));
    }
}

template <int S, int E>
cudaError_t launch_wedges(Blk ij, Blk ik, Blk jk, const uint64_t *bm_off, const uint32_t *bm, bool self,
                          cudaStream_t stream, unsigned long long *d_count) {
    const uint64_t blocks = ((uint64_t)ij.nnz + E - 1) / E;
    if (blocks > 0x7fffffffull) return cudaErrorInvalidConfiguration;
    wedge_kernel<S, E><<<(unsigned)blocks, kThreads, 0, stream>>>(ij, ik, jk, bm_off, bm, self, d_count);
    return cudaGetLastError();
}

long env_long(const char *name, long dflt) {
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end = nullptr;
    long v = strtol(s, &end, 10);
    return (end && *end == 0) ? v : dflt;
}

} // namespace

// Parameters come from the blocks' sizes, which the host already knows, so
// choosing them costs no device round trip: the bitmap (density ratio 256,
// rows of at least 16 elements) when jk has 2^20 edges or more and rows of
// 32 or more, spread 16, 256 edges per block. For measurements,
// TG_WETRIC_SPREAD (4, 8, 16, 32), TG_WETRIC_BITMAP (0 = off, else the ratio),
// TG_WETRIC_BMMIN (shortest row with a bitmap) and TG_WETRIC_EDGES (64 or
// 256) override them.
cudaError_t tg_kernel_wetric(const tg_dblock *ij_, const tg_dblock *ik_, const tg_dblock *jk_,
                             tg_kernel_env *env, unsigned long long *d_count) {
    if (!ij_ || !ik_ || !jk_ || !env || !d_count) return cudaErrorInvalidValue;
    const Blk ij = view(ij_), ik = view(ik_), jk = view(jk_);
    const bool self = ij_ == ik_ && ik_ == jk_ && ij_->upper;
    if (ij.nnz <= 0 || ik.nnz <= 0 || jk.nnz <= 0 || ij.nrows <= 0 || ik.nrows <= 0 || jk.nrows <= 0)
        return cudaSuccess;

    // The bitmap pays for its three extra launches and its build only when
    // jk is large and has rows long enough for binary search to hurt.
    long ratio = (jk.nnz >= (1 << 20) && jk_->max_degree >= 32) ? 256 : 0;
    ratio = env_long("TG_WETRIC_BITMAP", ratio);
    // Spread 8 on small subtasks (soc-Epinions1: 0.089 against 0.094 ms),
    // 16 from 2^20 edges (rmat18: 0.934 against 0.950 ms).
    long spread = env_long("TG_WETRIC_SPREAD", ij.nnz < (1 << 20) ? 8 : 16);

    const uint64_t *bm_off = nullptr;
    const uint32_t *bm = nullptr;
    if (ratio > 0) {
        const uint32_t minlen = (uint32_t)env_long("TG_WETRIC_BMMIN", 16);
        const size_t n1 = (size_t)jk.nrows + 1;
        size_t temp_bytes = 0;
        cudaError_t err = cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, (uint64_t *)nullptr,
                                                        (uint64_t *)nullptr, (int64_t)n1, env->stream);
        if (err != cudaSuccess) return err;
        // Every row with a bitmap has span <= ratio * len, so the words are
        // bounded by ratio/32 per element plus one per row.
        const size_t max_words = (size_t)jk.nnz * (size_t)ratio / 32 + (size_t)jk.nrows;
        const size_t a_words = (n1 * sizeof(uint64_t) + 255) & ~(size_t)255;
        const size_t a_temp = (temp_bytes + 255) & ~(size_t)255;
        const size_t bytes = 2 * a_words + a_temp + max_words * sizeof(uint32_t);
        void *scr = nullptr;
        err = env->scratch(env, 0, bytes, &scr);
        if (err == cudaErrorMemoryAllocation) {
            // Without the bitmap the count is the same, only slower.
            cudaGetLastError();
            ratio = 0;
        } else if (err != cudaSuccess) {
            return err;
        } else {
            char *p = (char *)scr;
            uint64_t *words = (uint64_t *)p;
            uint64_t *off = (uint64_t *)(p + a_words);
            void *temp = p + 2 * a_words;
            uint32_t *bits = (uint32_t *)(p + 2 * a_words + a_temp);
            const unsigned nb = (unsigned)((n1 + 255) / 256);
            bitmap_words<<<nb, 256, 0, env->stream>>>(jk, (uint32_t)ratio, minlen, words);
            if ((err = cudaGetLastError()) != cudaSuccess) return err;
            err = cub::DeviceScan::ExclusiveSum(temp, temp_bytes, words, off, (int64_t)n1, env->stream);
            if (err != cudaSuccess) return err;
            const uint64_t fb = ((uint64_t)jk.nrows * 32 + 255) / 256;
            bitmap_fill<<<(unsigned)fb, 256, 0, env->stream>>>(jk, off, bits);
            if ((err = cudaGetLastError()) != cudaSuccess) return err;
            bm_off = off;
            bm = bits;
        }
    }
    // 256 edges per block measured faster than 64 on every graph tried
    // (docs/kernels.md), small ones included.
    long epb = env_long("TG_WETRIC_EDGES", 256);
    if (epb == 64) {
        switch (spread) {
        case 4: return launch_wedges<4, 64>(ij, ik, jk, bm_off, bm, self, env->stream, d_count);
        case 16: return launch_wedges<16, 64>(ij, ik, jk, bm_off, bm, self, env->stream, d_count);
        default: return launch_wedges<8, 64>(ij, ik, jk, bm_off, bm, self, env->stream, d_count);
        }
    }
    switch (spread) {
    case 4: return launch_wedges<4, 256>(ij, ik, jk, bm_off, bm, self, env->stream, d_count);
    case 16: return launch_wedges<16, 256>(ij, ik, jk, bm_off, bm, self, env->stream, d_count);
    case 32: return launch_wedges<32, 256>(ij, ik, jk, bm_off, bm, self, env->stream, d_count);
    default: return launch_wedges<8, 256>(ij, ik, jk, bm_off, bm, self, env->stream, d_count);
    }
}
