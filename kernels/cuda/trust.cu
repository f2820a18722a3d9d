// TRUST: vertex-centric hashing triangle counting.
//
// Paper: S. Pandey, Z. Wang, S. Zhong, C. Tian, B. Zheng, X. Li, L. Li,
// A. Hoisie, C. Ding, D. Li, H. Liu, "TRUST: Triangle Counting Reloaded on
// GPUs", IEEE TPDS 32(11), 2021. For each row u a hash table of ik.row(u) is
// built once, in shared memory, and every element of jk.row(v) for every v in
// ij.row(u) is looked up in it (vertex-centric hashing, section 3.3, in the
// interleaved bucket layout of section 3.2). Small rows get a warp, large
// rows a CTA (degree-aware resources), the 2-hop lists of a warp's row are
// walked as one virtually combined list so every lane has work (section
// 4.2), and rows too large for shared memory hash into global scratch.
//
// Preconditions: three CSR blocks with rows sorted ascending and without
// duplicates (tg_internal.cuh). The count is exact for any three blocks: the
// table keeps every element (buckets that fill up spill to the next bucket,
// the paper's linear probing), so collisions cost time, never triangles.
//
// Index spaces: rows of ij and ik are I-local (the hashed vertex u), columns
// of ij and rows of jk are J-local (v), columns of ik and jk are K-local (the
// hashed and probed values w).
//
// Besides the paper: each 2-hop list jk.row(v) is clipped to the value range
// of ik.row(u) before it is combined, since nothing outside that range can be
// in the table, and the hash is multiplicative rather than x mod buckets, so
// that local ids of a 2D partition (x div P) spread as well as global ones.
// When the value span of ik.row(u) fits the space the table would take, the
// table is a bitmap of that span instead (one load per probe, no bucket
// walk): in a degree-ordered graph the rows long enough to matter belong to
// high-degree vertices, whose forward neighbours are the few top ranks, so
// their spans are narrow. The CTA tier's shared memory is sized for
// occupancy and for those bitmaps, not for the longest row's hash table; a
// row that fits neither takes a per-CTA region of global scratch. The CTA
// tier gives each neighbour a warp (its 2-hop lists are long); the warp tier
// combines the lists of 32 neighbours virtually.
#include "tg_internal.cuh"

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cstdlib>

namespace {

constexpr int kWarps = 8;             // warps per block in the warp tier
constexpr int kWarpBuckets = 128;     // buckets per warp table (rows up to kWarpMax)
constexpr int kSlots = 4;             // slots per bucket
// Rows with more hashed entries than this get a CTA: kWarpMaxTiny below
// kSmallEdges ik edges, kWarpMaxSmall below kLargeEdges, kWarpMaxLarge from
// there (trust_warpmax; docs/decisions/2026-11-21-trust-settings.md).
constexpr int kWarpMaxTiny = 32;
constexpr int kWarpMaxSmall = 16;
constexpr int kWarpMaxLarge = 64;
constexpr int64_t kSmallEdges = 1ll << 20;
constexpr int64_t kLargeEdges = 1ll << 25;
constexpr int kCtaMaxBuckets = 4096;  // larger rows hash into global scratch

struct Blk {
    const uint64_t *rp;
    const uint32_t *c;
    int64_t nrows;
    int64_t nnz;
};

Blk view(const tg_dblock *b) { return Blk{b->rowptr, b->cols, b->nrows, b->nnz}; }

// Work lists filled by the warp tier for the CTA tiers.
struct Lists {
    unsigned long long *cta_n, *glob_n, *cta_next, *glob_next;
    uint32_t *cta, *glob;
    uint64_t cta_cap, glob_cap;
};

__device__ __forceinline__ uint32_t bucket_of(uint32_t x, int logb) {
    return (x * 0x9E3779B1u) >> (32 - logb);
}

// Bucketed table: nb = 2^logb buckets of kSlots slots; slot j of bucket b is
// at slots[j * nb + b], so a warp probing different buckets at the same depth
// reads consecutive words (the paper's interleaved layout). lens[b] counts
// every insertion attempt, so lens[b] >= kSlots also means "may have spilled".
struct Table {
    uint32_t *lens;
    uint32_t *slots;
    int logb;

    __device__ __forceinline__ void insert(uint32_t x) const {
        const uint32_t mask = (1u << logb) - 1;
        uint32_t b = bucket_of(x, logb);
        for (;;) {
            const uint32_t pos = atomicAdd(lens + b, 1u);
            if (pos < kSlots) {
                slots[pos * (mask + 1) + b] = x;
                return;
            }
            b = (b + 1) & mask;
        }
    }

    __device__ __forceinline__ bool find(uint32_t x) const {
        const uint32_t mask = (1u << logb) - 1;
        uint32_t b = bucket_of(x, logb);
        for (uint32_t n = 0; n <= mask; n++) {
            const uint32_t len = lens[b];
            const uint32_t m = len < kSlots ? len : kSlots;
            for (uint32_t j = 0; j < m; j++)
                if (slots[j * (mask + 1) + b] == x) return true;
            if (len < kSlots) return false;
            b = (b + 1) & mask;
        }
        return false;
    }
};

// Membership test of a row u: its hash table, or a bitmap of its value span
// [lo, hi] (bit x - lo). Probes are clipped to [lo, hi] first, so the bit
// index is always inside the bitmap.
struct Lookup {
    Table tab;
    const uint32_t *bits; // null: use the table
    uint32_t lo;

    __device__ __forceinline__ bool operator()(uint32_t x) const {
        if (bits) {
            const uint32_t d = x - lo;
            return (bits[d >> 5] >> (d & 31)) & 1u;
        }
        return tab.find(x);
    }
};

__device__ __forceinline__ uint64_t lower_bound(const uint32_t *a, uint64_t lo, uint64_t hi, uint32_t x) {
    while (lo < hi) {
        uint64_t mid = lo + ((hi - lo) >> 1);
        if (__ldg(a + mid) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

__device__ __forceinline__ uint64_t upper_bound(const uint32_t *a, uint64_t lo, uint64_t hi, uint32_t x) {
    while (lo < hi) {
        uint64_t mid = lo + ((hi - lo) >> 1);
        if (__ldg(a + mid) <= x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// The part of jk.row(v) inside [lo, hi], as [*b, *b + return).
__device__ __forceinline__ uint64_t clipped_row(const Blk &jk, uint32_t v, uint32_t lo, uint32_t hi, uint64_t *b) {
    *b = 0;
    if ((int64_t)v >= jk.nrows) return 0;
    uint64_t b0 = __ldg(jk.rp + v), b1 = __ldg(jk.rp + v + 1);
    if (b0 == b1) return 0;
    if (__ldg(jk.c + b0) < lo) b0 = lower_bound(jk.c, b0, b1, lo);
    if (b0 < b1 && __ldg(jk.c + b1 - 1) > hi) b1 = upper_bound(jk.c, b0, b1, hi);
    *b = b0;
    return b1 - b0;
}

__device__ __forceinline__ int ceil_log2(uint64_t x) {
    return x <= 1 ? 0 : 64 - __clzll(x - 1);
}

// Virtual combination for one warp: the neighbours ij.c[c0 + 32 k + lane]
// for c0 in [s0, s1) stepping by `step`, their clipped 2-hop lists laid end to
// end 32 at a time (warp scan), one element per lane per step; the owner of an
// element is found with five shuffles. All 32 lanes must call it together.
__device__ __forceinline__ unsigned long long warp_vc(const Blk &ij, const Blk &jk, uint64_t s0, uint64_t s1,
                                                      uint64_t step, uint32_t lo, uint32_t hi, const Lookup &look,
                                                      int lane) {
    unsigned long long cnt = 0;
    for (uint64_t c0 = s0; c0 < s1; c0 += step) {
        uint64_t len = 0, base = 0;
        if (c0 + lane < s1) len = clipped_row(jk, __ldg(ij.c + c0 + lane), lo, hi, &base);
        uint64_t incl = len;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const uint64_t y = __shfl_up_sync(0xffffffffu, incl, d);
            if (lane >= d) incl += y;
        }
        const uint64_t excl = incl - len;
        const uint64_t total = __shfl_sync(0xffffffffu, incl, 31);
        for (uint64_t i0 = 0; i0 < total; i0 += 32) {
            const uint64_t i = i0 + lane;
            // Owner: number of lanes whose inclusive end is <= i.
            int pos = 0;
#pragma unroll
            for (int s = 16; s > 0; s >>= 1) {
                const uint64_t y = __shfl_sync(0xffffffffu, incl, pos + s - 1);
                if (y <= i) pos += s;
            }
            const uint64_t ob = __shfl_sync(0xffffffffu, base, pos & 31);
            const uint64_t oe = __shfl_sync(0xffffffffu, excl, pos & 31);
            if (i < total) cnt += look(__ldg(jk.c + ob + (i - oe)));
        }
    }
    return cnt;
}

// Words of a bitmap of [lo, hi].
__device__ __forceinline__ uint64_t span_words(uint32_t lo, uint32_t hi) {
    return (((uint64_t)hi - lo + 1) + 31) >> 5;
}

// Warp tier: one warp per row u < min(ij.nrows, ik.nrows) with at most
// warp_max hashed entries. Longer rows are handed to the CTA tiers through
// the lists: rows of at most cta_max entries to the shared-memory tier, the
// others to the global one.
__global__ void __launch_bounds__(kWarps * 32)
warp_tier(Blk ij, Blk ik, Blk jk, int warp_max, int cta_max, bool use_bitmap, Lists lists, unsigned long long *out) {
    __shared__ uint32_t s_lens[kWarps][kWarpBuckets];
    __shared__ uint32_t s_slots[kWarps][kWarpBuckets * kSlots];
    typedef cub::BlockReduce<unsigned long long, kWarps * 32> Reduce;
    __shared__ typename Reduce::TempStorage red;

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t u = (int64_t)blockIdx.x * kWarps + warp;
    const int64_t nrows = min(ij.nrows, ik.nrows);
    unsigned long long cnt = 0;
    if (u < nrows) {
        const uint64_t a0 = __ldg(ik.rp + u), a1 = __ldg(ik.rp + u + 1);
        const uint64_t s0 = __ldg(ij.rp + u), s1 = __ldg(ij.rp + u + 1);
        const uint64_t dk = a1 - a0, dj = s1 - s0;
        if (dk > 0 && dj > 0) {
            const uint32_t lo = __ldg(ik.c + a0), hi = __ldg(ik.c + a1 - 1);
            const uint64_t words = span_words(lo, hi);
            if (dk > (uint64_t)warp_max) {
                if (lane == 0) {
                    if (dk > (uint64_t)cta_max) {
                        const unsigned long long i = atomicAdd(lists.glob_n, 1ull);
                        if (i < lists.glob_cap) lists.glob[i] = (uint32_t)u;
                    } else {
                        const unsigned long long i = atomicAdd(lists.cta_n, 1ull);
                        if (i < lists.cta_cap) lists.cta[i] = (uint32_t)u;
                    }
                }
            } else {
                const int logb = max(5, ceil_log2(dk));
                const Table tab{s_lens[warp], s_slots[warp], logb};
                Lookup look{tab, nullptr, lo};
                if (use_bitmap && words <= (uint64_t)kWarpBuckets * kSlots) {
                    uint32_t *bits = s_slots[warp];
                    for (uint64_t w = lane; w < words; w += 32) bits[w] = 0;
                    __syncwarp();
                    for (uint64_t i = a0 + lane; i < a1; i += 32) {
                        const uint32_t d = __ldg(ik.c + i) - lo;
                        atomicOr(bits + (d >> 5), 1u << (d & 31));
                    }
                    look.bits = bits;
                } else {
                    for (int b = lane; b < (1 << logb); b += 32) tab.lens[b] = 0;
                    __syncwarp();
                    for (uint64_t i = a0 + lane; i < a1; i += 32) tab.insert(__ldg(ik.c + i));
                }
                __syncwarp();
                cnt = warp_vc(ij, jk, s0, s1, 32, lo, hi, look, lane);
            }
        }
    }
    const unsigned long long sum = Reduce(red).Sum(cnt);
    if (threadIdx.x == 0 && sum) atomicAdd(out, sum);
}

// CTA tiers: one CTA per listed row, taken from a shared counter so that big
// and small rows balance across CTAs. The table is in dynamic shared memory
// (GLOBAL = false) or in this CTA's region of scratch (GLOBAL = true), of
// `words` words either way; a bitmap of the row's span is used instead when
// it fits in those words. Each neighbour v gets a warp, whose lanes stride
// v's clipped 2-hop list (the CTA's rows are long, and so are their
// neighbours' lists).
template <bool GLOBAL, int kCtaThreads>
__global__ void __launch_bounds__(kCtaThreads)
cta_tier(Blk ij, Blk ik, Blk jk, const uint32_t *list, const unsigned long long *list_n,
         unsigned long long *next, uint32_t *gtab, uint64_t words, uint32_t *gfall, uint64_t fwords,
         bool use_bitmap, unsigned long long *out) {
    extern __shared__ uint32_t s_dyn[];
    typedef cub::BlockReduce<unsigned long long, kCtaThreads> Reduce;
    __shared__ typename Reduce::TempStorage red;
    __shared__ unsigned long long s_item;

    const int t = threadIdx.x;
    const int warp = t >> 5, lane = t & 31;
    uint32_t *region = GLOBAL ? gtab + (uint64_t)blockIdx.x * words : s_dyn;
    const unsigned long long n = *list_n;
    unsigned long long cnt = 0;
    for (;;) {
        if (t == 0) s_item = atomicAdd(next, 1ull);
        __syncthreads();
        const unsigned long long item = s_item;
        __syncthreads();
        if (item >= n) break;
        const uint32_t u = list[item];
        const uint64_t a0 = __ldg(ik.rp + u), a1 = __ldg(ik.rp + u + 1);
        const uint64_t s0 = __ldg(ij.rp + u), s1 = __ldg(ij.rp + u + 1);
        const uint32_t lo = __ldg(ik.c + a0), hi = __ldg(ik.c + a1 - 1);
        const int logb = max(7, ceil_log2(a1 - a0));
        const uint64_t nb = 1ull << logb;
        const uint64_t bwords = span_words(lo, hi);
        // The shared region is sized for occupancy, not for the longest row:
        // a row whose bitmap and table both exceed it uses this CTA's region
        // of global scratch (fwords >= any table of the tier).
        uint32_t *reg = region;
        uint64_t cap = words;
        if (!GLOBAL && !(use_bitmap && bwords <= words) && nb * (kSlots + 1) > words) {
            reg = gfall + (uint64_t)blockIdx.x * fwords;
            cap = fwords;
        }
        const Table tab{reg, reg + nb, logb};
        Lookup look{tab, nullptr, lo};
        if (use_bitmap && bwords <= cap) {
            for (uint64_t w = t; w < bwords; w += kCtaThreads) reg[w] = 0;
            __syncthreads();
            for (uint64_t i = a0 + t; i < a1; i += kCtaThreads) {
                const uint32_t d = __ldg(ik.c + i) - lo;
                atomicOr(reg + (d >> 5), 1u << (d & 31));
            }
            look.bits = reg;
        } else {
            for (uint64_t b = t; b < nb; b += kCtaThreads) tab.lens[b] = 0;
            __syncthreads();
            for (uint64_t i = a0 + t; i < a1; i += kCtaThreads) tab.insert(__ldg(ik.c + i));
        }
        __syncthreads();
        for (uint64_t c = s0 + warp; c < s1; c += kCtaThreads / 32) {
            uint64_t base;
            const uint64_t len = clipped_row(jk, __ldg(ij.c + c), lo, hi, &base);
            for (uint64_t i = lane; i < len; i += 32) cnt += look(__ldg(jk.c + base + i));
        }
        __syncthreads();
    }
    const unsigned long long sum = Reduce(red).Sum(cnt);
    if (t == 0 && sum) atomicAdd(out, sum);
}

size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

// Launches the CTA tiers of NT threads: the shared-memory tier on the
// rows listed for it (need_cta), the global one on the rest (need_glob).
template <int NT>
cudaError_t launch_cta(Blk ij, Blk ik, Blk jk, const Lists &lists, bool need_cta, size_t cta_shared,
                       uint64_t cta_cap, bool need_glob, unsigned glob_grid, uint32_t *gtab, uint64_t gwords,
                       uint32_t *gfall, uint64_t fwords, uint64_t fall_ctas, bool use_bitmap, tg_kernel_env *env,
                       unsigned long long *d_count) {
    cudaError_t err;
    if (need_cta) {
        // Static shared memory plus the table can pass 48 KiB, which needs
        // the opt-in even when the table alone does not.
        err = cudaFuncSetAttribute(cta_tier<false, NT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cta_shared);
        if (err != cudaSuccess) return err;
        int per_sm = 0;
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cta_tier<false, NT>, NT, cta_shared);
        if (err != cudaSuccess) return err;
        if (per_sm < 1) per_sm = 1;
        uint64_t grid = (uint64_t)env->sm_count * per_sm;
        if (grid > cta_cap) grid = cta_cap;
        if (fwords > 0 && grid > fall_ctas) grid = fall_ctas;
        cta_tier<false, NT><<<(unsigned)grid, NT, cta_shared, env->stream>>>(
            ij, ik, jk, lists.cta, lists.cta_n, lists.cta_next, nullptr, cta_shared / 4, gfall, fwords, use_bitmap,
            d_count);
        if ((err = cudaGetLastError()) != cudaSuccess) return err;
    }
    if (need_glob && glob_grid > 0) {
        cta_tier<true, NT><<<glob_grid, NT, 0, env->stream>>>(ij, ik, jk, lists.glob, lists.glob_n, lists.glob_next,
                                                              gtab, gwords, nullptr, 0, use_bitmap, d_count);
        if ((err = cudaGetLastError()) != cudaSuccess) return err;
    }
    return cudaSuccess;
}

} // namespace

// Settings (tg_settings, trigrid.h): trust_warpmax (the warp/CTA degree
// threshold), trust_cta_smem (bytes of shared memory per CTA-tier block),
// trust_cta_threads (128, 256, 512), trust_bitmap (0: hash tables only).
cudaError_t tg_kernel_trust(const tg_dblock *ij_, const tg_dblock *ik_, const tg_dblock *jk_,
                            tg_kernel_env *env, unsigned long long *d_count) {
    if (!ij_ || !ik_ || !jk_ || !env || !d_count) return cudaErrorInvalidValue;
    const Blk ij = view(ij_), ik = view(ik_), jk = view(jk_);
    if (ij.nnz <= 0 || ik.nnz <= 0 || jk.nnz <= 0 || ij.nrows <= 0 || ik.nrows <= 0 || jk.nrows <= 0)
        return cudaSuccess;
    const int64_t nrows = ij.nrows < ik.nrows ? ij.nrows : ik.nrows;
    const tg_settings &set = *env->set;
    long warp_max = set.trust_warpmax != TG_SETTING_AUTO ? set.trust_warpmax
                    : ik.nnz >= kLargeEdges              ? kWarpMaxLarge
                    : ik.nnz >= kSmallEdges              ? kWarpMaxSmall
                                                         : kWarpMaxTiny;
    if (warp_max < 1) warp_max = 1;
    if (warp_max > kWarpBuckets) warp_max = kWarpBuckets;

    // Shared table of the CTA tier: big enough for the longest row it takes.
    const int64_t maxdeg = ik_->max_degree > 0 ? ik_->max_degree : ik.nnz;
    int64_t cta_buckets = 128;
    while (cta_buckets < maxdeg && cta_buckets < kCtaMaxBuckets) cta_buckets <<= 1;
    const int64_t cta_max = cta_buckets;
    // Shared memory of a CTA-tier block (trust_cta_smem bytes; 0 = the
    // table of the longest row, at least 16 KiB): 16 KiB below kLargeEdges
    // ik edges, 32 KiB from there. It is sized for occupancy and for the
    // bitmap spans of the long rows, not for the longest row's table:
    // 32 KiB keeps 6 blocks of 256 threads per SM and holds the bitmap of
    // any span up to 2^18 values, which covers most long rows of a
    // degree-ordered graph. Rows that fit neither bitmap nor table in it use
    // a per-CTA region of global scratch of fwords words.
    const size_t hash_bytes = (size_t)cta_buckets * (kSlots + 1) * sizeof(uint32_t);
    const long smem_env = set.trust_cta_smem != TG_SETTING_AUTO ? set.trust_cta_smem
                          : ik.nnz >= kLargeEdges                ? 32768
                                                                 : 16384;
    size_t cta_shared = smem_env > 0 ? (size_t)smem_env : std::max<size_t>(hash_bytes, 16384);
    if (cta_shared < 1024) cta_shared = 1024;
    if (cta_shared > 65536) cta_shared = 65536;
    cta_shared &= ~(size_t)3;
    const uint64_t fwords = hash_bytes > cta_shared ? (uint64_t)cta_buckets * (kSlots + 1) : 0;
    // Resident CTAs of the smallest size (128 threads) bound the grid.
    const uint64_t fall_ctas = fwords ? (uint64_t)env->sm_count * (2048 / 128) : 0;
    const bool need_glob = maxdeg > cta_max;

    // Rows in each list are bounded by the edges they hold.
    const uint64_t cta_cap = (uint64_t)std::min<int64_t>(nrows, ik.nnz / (warp_max + 1) + 1);
    const uint64_t glob_cap = need_glob ? (uint64_t)std::min<int64_t>(nrows, ik.nnz / (cta_max + 1) + 1) : 0;
    const size_t head = 256;
    const size_t list_bytes = align256(cta_cap * 4) + align256(glob_cap * 4);
    uint64_t gwords = 0;
    unsigned glob_grid = 0;
    if (need_glob) {
        int lb = 0;
        while ((1ll << lb) < maxdeg) lb++;
        gwords = (1ull << lb) * (kSlots + 1);
        // Bound the global tables to a few GiB; fewer CTAs take huge rows
        // when each table is large.
        const uint64_t budget = 4ull << 30;
        uint64_t g = budget / (gwords * 4);
        if (g < 1) g = 1;
        const uint64_t want = (uint64_t)env->sm_count * 2;
        if (g > want) g = want;
        if (g > glob_cap) g = glob_cap;
        glob_grid = (unsigned)g;
    }
    void *scr = nullptr;
    cudaError_t err = env->begin(env);
    if (err != cudaSuccess) return err;
    for (;;) {
        const size_t bytes = head + list_bytes + (size_t)glob_grid * gwords * 4 + (size_t)fall_ctas * fwords * 4;
        err = env->scratch(env, 0, bytes, &scr);
        if (err != cudaErrorMemoryAllocation || glob_grid <= 1) break;
        cudaGetLastError();
        glob_grid /= 2;
    }
    if (err != cudaSuccess) return err;
    char *p = (char *)scr;
    Lists lists;
    lists.cta_n = (unsigned long long *)p;
    lists.glob_n = lists.cta_n + 1;
    lists.cta_next = lists.cta_n + 2;
    lists.glob_next = lists.cta_n + 3;
    lists.cta = (uint32_t *)(p + head);
    lists.glob = (uint32_t *)(p + head + align256(cta_cap * 4));
    lists.cta_cap = cta_cap;
    lists.glob_cap = glob_cap;
    uint32_t *gtab = (uint32_t *)(p + head + list_bytes);
    uint32_t *gfall = gtab + (size_t)glob_grid * gwords;
    if ((err = cudaMemsetAsync(p, 0, 4 * sizeof(unsigned long long), env->stream)) != cudaSuccess) return err;

    const uint64_t wblocks = ((uint64_t)nrows + kWarps - 1) / kWarps;
    if (wblocks > 0x7fffffffull) return cudaErrorInvalidConfiguration;
    const bool use_bitmap = set.trust_bitmap != 0;
    warp_tier<<<(unsigned)wblocks, kWarps * 32, 0, env->stream>>>(ij, ik, jk, (int)warp_max, (int)cta_max,
                                                                  use_bitmap, lists, d_count);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;

    const long cta_threads = set.trust_cta_threads;
    if (cta_threads == 128)
        return launch_cta<128>(ij, ik, jk, lists, maxdeg > warp_max, cta_shared, cta_cap, need_glob, glob_grid, gtab,
                               gwords, gfall, fwords, fall_ctas, use_bitmap, env, d_count);
    if (cta_threads == 512)
        return launch_cta<512>(ij, ik, jk, lists, maxdeg > warp_max, cta_shared, cta_cap, need_glob, glob_grid, gtab,
                               gwords, gfall, fwords, fall_ctas, use_bitmap, env, d_count);
    return launch_cta<256>(ij, ik, jk, lists, maxdeg > warp_max, cta_shared, cta_cap, need_glob, glob_grid, gtab,
                           gwords, gfall, fwords, fall_ctas, use_bitmap, env, d_count);
}
