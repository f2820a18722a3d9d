// WETRIC: wedge-parallel triangle counting.
//
// Paper: J. Spaan, K.-H. Chen, D. A. Bader, A.-L. Varbanescu, "Wedge-Parallel
// Triangle Counting for GPUs" (2025). Wedges are found from prefix sums
// instead of being stored (section 3), every thread evaluates a fixed number
// of wedges (the spread, section 5.2), threads of a block cooperate so that
// neighbouring threads evaluate neighbouring wedges (section 5.3), and dense
// rows are looked up in a bitmap (the adjacency matrix, section 5.4).
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
//   (section 4.1's "mixed" style). For the whole forward graph this is at
//   most the original's C(d, 2) wedges per vertex and usually fewer; for
//   blocks of a 2D partition, where J-local and K-local ids are not
//   comparable, it is what makes an ordering-free kernel affordable.
// - A block takes a fixed run of edges, scans their wedge counts in shared
//   memory and walks its own wedges round by round. There is no global
//   prefix array, no binary search over it and no host synchronisation;
//   blocks of uneven wedge counts are balanced by the hardware, which hands
//   blocks to multiprocessors as they free up.
// - The dense-tail bitmap is chosen per row of jk by density (the span of the
//   row's values against its length), which covers the tail of a
//   degree-ordered graph without knowing that the graph is one. Its words sit
//   at rowptr * ceil(ratio / 32) + 8 v, so it is built by one launch,
//   without a scan.
// - When ik and jk are one block (the whole graph, subtasks with i = j), an
//   edge whose two rows both have bitmaps may intersect them 32 or 128
//   values at a time (AND and popcount of the words over the overlap of the
//   two value ranges) instead of one lookup per element: in the dense tail
//   of a degree-ordered graph a word holds several elements of both rows.
//   Bitmaps are aligned to values (bit 0 a multiple of 128), so the two
//   rows' words at the same values are one load each, with no shift.
//   The "wedges" of such an edge are words or four-word chunks, so they are
//   spread over threads like any others; the cost rule picks, per edge, the
//   cheapest of the three ways.
#include "tg_internal.cuh"

#include <algorithm>
#include <type_traits>

#include <cub/block/block_scan.cuh>

namespace {

constexpr int kThreads = 256; // threads per block
constexpr uint64_t kBmPad = TG_BM_PAD; // readable words before the first row's bitmap and after the last

struct Blk {
    const uint64_t *rp;
    const uint32_t *c;
    int64_t nrows;
    int64_t nnz;
    const uint32_t *erow; // the edge-row index, or null
    const uint4 *rsum;    // the row-summary index, or null
    const uint32_t *rowof; // the row-of-edge index, or null
};

Blk view(const tg_dblock *b) { return Blk{b->rowptr, b->cols, b->nrows, b->nnz, b->erow, b->rsum, b->rowof}; }

// First index in [lo, hi) whose value is >= x.
template <typename I>
__device__ __forceinline__ I lower_bound(const uint32_t *a, I lo, I hi, uint32_t x) {
    while (lo < hi) {
        I mid = lo + ((hi - lo) >> 1);
        if (__ldg(a + mid) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// First index in [lo, hi) whose value is > x.
template <typename I>
__device__ __forceinline__ I upper_bound(const uint32_t *a, I lo, I hi, uint32_t x) {
    while (lo < hi) {
        I mid = lo + ((hi - lo) >> 1);
        if (__ldg(a + mid) <= x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Membership in a sorted run. The loop runs ceil(log2(len)) times whatever x
// is, so threads of a warp searching runs of similar length stay converged.
template <typename I>
__device__ __forceinline__ bool contains(const uint32_t *a, I base, uint32_t len, uint32_t x) {
    if (len == 0) return false;
    while (len > 1) {
        uint32_t half = len >> 1;
        if (__ldg(a + (I)(base + half)) <= x) base += half;
        len -= half;
    }
    return __ldg(a + base) == x;
}

// contains() that also gives the position: the index in [base, base + len)
// where x is, when it is there.
template <typename I>
__device__ __forceinline__ bool find_pos(const uint32_t *a, I base, uint32_t len, uint32_t x, I &pos) {
    pos = base;
    if (len == 0) return false;
    while (len > 1) {
        uint32_t half = len >> 1;
        if (__ldg(a + (I)(base + half)) <= x) base += half;
        len -= half;
    }
    pos = base;
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

// Bits needed to write x: the steps of a binary search over x elements.
template <typename I>
__device__ __forceinline__ I bit_width(I x) {
    if constexpr (sizeof(I) == 4) return (I)(32 - __clz(x));
    else return (I)(64 - __clzll(x));
}

enum : uint8_t { kIterIK = 0, kIterJK = 1, kIterIKBitmap = 2, kAnd = 3, kAnd4 = 4 };

// wedge_kernel options (tg_kernel_wetric).
enum : unsigned { kOptSkipB = 1, kOptRowCache = 2, kOptSkipA = 4 };

// Dense-row bitmaps (tg_internal.cuh's layouts). Row v of jk gets one when
// it has at least minlen elements and its value span is at most ratio
// times its length; bit 0 is value tg_bm_first of its first value. By row
// offsets its words start at rowptr[v] * rw + TG_BM_ROWPAD * v (rw =
// ceil(ratio / 32) words per element), so no per-row offsets or scan are
// needed and the wedge kernels decide "has a bitmap" from values they load
// anyway.
struct Bm {
    const uint32_t *bits; // null: no bitmaps
    const uint32_t *off;  // compact layout (the slot's index); null: by row offsets
    uint64_t ratio;
    uint32_t minlen;
    uint32_t rw;
    // and_cost > 0: ik and jk are one block, so row u of ik has jk's bitmap
    // too, and an edge whose rows both have bitmaps may intersect them a
    // word at a time (kAnd), at this cost per word against 3 per wedge
    // looked up in a bitmap. and_min: shortest clipped u list considered.
    uint32_t and_cost;
    uint32_t and_min;
    uint32_t and4_cost; // the same per four-word chunk (kAnd4); 0: off
};

__device__ __forceinline__ bool has_bitmap(const Bm &b, uint64_t len, uint32_t lo, uint32_t hi) {
    return b.bits && tg_bm_has(b.ratio, b.minlen, len, lo, hi);
}

// First word of the bitmap of row v, which starts at element rp[v] = b0.
template <typename Ix>
__device__ __forceinline__ Ix bitmap_base(const Bm &b, int64_t v, Ix b0) {
    return b.off ? (Ix)4 * __ldg(b.off + v) : b0 * (Ix)b.rw + (Ix)TG_BM_ROWPAD * (Ix)v;
}

// Programmatic dependent launch (sm_90): the bitmap build lets the wedge
// kernel start before it ends, and the wedge kernel waits for the build's
// completion (and its writes) only where it first reads a bitmap, so its
// blocks' setup overlaps the build and the launch gap disappears. Without
// the launch attribute the wait returns at once; before sm_90 both are
// no-ops and the launches stay ordered by the stream.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <int S, typename Ix>
struct Shared {
    // Warp scans (one barrier) rather than the default raking (two, and a
    // serial pass by one warp): the scan sits on every block's critical path.
    typedef cub::BlockScan<Ix, kThreads, cub::BLOCK_SCAN_WARP_SCANS> Scan;
    typename Scan::TempStorage scan;
    Ix pre[kThreads + 1]; // exclusive prefix of wedges per edge
    Ix iter[kThreads];    // first element to enumerate
    Ix sbase[kThreads];   // run to search in, or bitmap word base
    uint32_t slen[kThreads];    // its length, or the bitmap's first value
    uint8_t mode[kThreads];
    // Edge of each wedge slot in a round. 16-byte aligned: a thread's S
    // slots (spread) are then one or more 16-byte accesses, which a warp
    // makes without bank conflicts.
    alignas(16) uint16_t k[kThreads * S];
    Ix rpc[kThreads + 1]; // rowptr of the block's rows, when they are few
    int64_t rows[2];            // the rows of the block's first and last edges
};

// Word off of edge k's overlap (kAnd): the AND of u's and v's words at
// the same values, which start at sm.iter[k] and sm.sbase[k]. The bitmaps
// are aligned to values and hold zeros wherever their rows have no
// element, so no word needs a shift or a mask.
template <int S, typename Ix>
__device__ __forceinline__ uint32_t and_word(const Shared<S, Ix> &sm, int k, Ix off,
                                             const uint32_t *__restrict__ bm) {
    return __ldg(bm + (Ix)(sm.sbase[k] + off)) & __ldg(bm + (Ix)(sm.iter[k] + off));
}

// and_word four words at a time (kAnd4): one aligned 16-byte load of each
// row. Bit b of word i is value 128 (c0 + off) + 32 i + b, c0 the overlap's
// first chunk.
template <int S, typename Ix>
__device__ __forceinline__ uint4 and_chunk(const Shared<S, Ix> &sm, int k, Ix off,
                                           const uint32_t *__restrict__ bm) {
    const uint4 vv = __ldg(reinterpret_cast<const uint4 *>(bm + (Ix)(sm.sbase[k] + 4 * off)));
    const uint4 uu = __ldg(reinterpret_cast<const uint4 *>(bm + (Ix)(sm.iter[k] + 4 * off)));
    return make_uint4(uu.x & vv.x, uu.y & vv.y, uu.z & vv.z, uu.w & vv.w);
}

// Evaluates wedge w, the off-th of edge k of the block: 1 when it closes a
// triangle (the bitmap intersections: the triangles of its word or chunk).
template <int S, typename Ix>
__device__ __forceinline__ uint32_t eval_wedge(const Shared<S, Ix> &sm, int k, Ix w,
                                               const uint32_t *__restrict__ ikc,
                                               const uint32_t *__restrict__ jkc,
                                               const uint32_t *__restrict__ bm) {
    const Ix off = w - sm.pre[k];
    const uint8_t m = sm.mode[k];
    if (m == kAnd4) {
        const uint4 b = and_chunk(sm, k, off, bm);
        return __popc(b.x) + __popc(b.y) + __popc(b.z) + __popc(b.w);
    }
    if (m == kAnd) return __popc(and_word(sm, k, off, bm));
    if (m == kIterJK) return contains(ikc, sm.sbase[k], sm.slen[k], __ldg(jkc + (Ix)(sm.iter[k] + off)));
    const uint32_t x = __ldg(ikc + (Ix)(sm.iter[k] + off));
    if (m == kIterIKBitmap) {
        const uint32_t d = x - sm.slen[k];
        return (__ldg(bm + (Ix)(sm.sbase[k] + (d >> 5))) >> (d & 31)) & 1u;
    }
    return contains(jkc, sm.sbase[k], sm.slen[k], x);
}

// Spread, the first half of a round of walk and walk_local: records in
// sm.k which edge each slot of the round [r0, r0 + kThreads * S) belongs
// to. Each edge with wedges in the round marks its first slot there (edge
// + 1), then a block max-scan over the slots, S consecutive ones a thread,
// carries each mark to the slots that follow it; slot 0 is always marked
// (by the edge that holds wedge r0, r0 < we). Slots past we are left with
// the last edge and never evaluated. Every thread of the block must call
// it; it ends with the block synchronized.
//
// The slots are not cleared between rounds: what a slot holds from the
// round before is an edge no later than that slot's edge there, so no
// later than any edge of this round from that slot on, and the max-scan
// reads it as a mark one lower than that edge's. The first round's marks
// (r0 = 0) are set by the wedge kernel's setup, on slots it cleared.
template <typename T>
struct MaxOp {
    __device__ __forceinline__ T operator()(const T &a, const T &b) const { return a > b ? a : b; }
};

template <int S, int E, typename Ix>
__device__ __forceinline__ void spread(Shared<S, Ix> &sm, Ix r0) {
    typedef typename Shared<S, Ix>::Scan Scan;
    constexpr Ix R = (Ix)kThreads * S;
    const int t = threadIdx.x;
    if (r0 > 0) {
        if (t < E) {
            const Ix p0 = sm.pre[t], p1 = sm.pre[t + 1];
            if (p1 > p0 && p1 > r0 && p0 < r0 + R) sm.k[(p0 > r0 ? p0 : r0) - r0] = (uint16_t)(t + 1);
        }
        __syncthreads();
    }
    Ix run = 0;
    uint16_t v[S];
#pragma unroll
    for (int j = 0; j < S; j++) {
        const Ix x = sm.k[t * S + j];
        run = x > run ? x : run;
        v[j] = (uint16_t)run;
    }
    Ix before;
    Scan(sm.scan).ExclusiveScan(run, before, (Ix)0, MaxOp<Ix>());
#pragma unroll
    for (int j = 0; j < S; j++) sm.k[t * S + j] = (uint16_t)(((Ix)v[j] > before ? (Ix)v[j] : before) - 1);
    __syncthreads();
}

// Evaluates the block's wedges [0, we) (the prefix in sm.pre over E edges,
// sm.pre[E] = we being the block's total). Every thread of the block must
// call it with the same we.
template <int S, int E, typename Ix>
__device__ __forceinline__ unsigned long long walk(Shared<S, Ix> &sm, Ix we,
                                                   const uint32_t *__restrict__ ikc,
                                                   const uint32_t *__restrict__ jkc,
                                                   const uint32_t *__restrict__ bm) {
    const int t = threadIdx.x;
    unsigned long long found = 0;
    for (Ix r0 = 0; r0 < we; r0 += (Ix)kThreads * S) {
        spread<S, E, Ix>(sm, r0);
        // Cooperation: evaluate slot j*kThreads + t, so that neighbouring
        // threads take neighbouring wedges, which share an edge and so read
        // neighbouring elements and search the same run.
#pragma unroll
        for (int j = 0; j < S; j++) {
            const int q = j * kThreads + t;
            const Ix w = r0 + q;
            if (w < we) found += eval_wedge<S, Ix>(sm, sm.k[q], w, ikc, jkc, bm);
        }
        // sm.k is written again only by a next round (uniform condition).
        if (r0 + (Ix)kThreads * S < we) __syncthreads();
    }
    return found;
}

// Per-vertex mode (tg_kernel_wetric_local). Loc is tg_local plus the hot
// range: K-local ids from hot_lo up are the last kHot of the K space, the
// highest ranked of a degree-ordered graph and so the hubs that close most
// triangles; their counts are summed per block in shared memory and added
// once per block, the others by one global atomic per triangle.
constexpr int kHot = 2048;

struct Loc {
    unsigned long long *vi, *vj, *vk;
    uint32_t *eij, *eik, *ejk;
    uint64_t hot_lo;
};

struct LShared {
    uint32_t hits[kThreads]; // triangles of the block's edge t (at most its row's length)
    uint32_t hot[kHot];      // triangles through hot_lo + i (at most one per edge of the block)
    uint32_t xbase[kThreads]; // kAnd, kAnd4: the value of bit 0 of edge t's first word or chunk
};

// Adds one triangle through K-local x to the block's hot counts or to vk.
__device__ __forceinline__ void add_x(LShared &ls, const Loc &loc, uint32_t x) {
    if (x >= loc.hot_lo) atomicAdd(&ls.hot[x - loc.hot_lo], 1u);
    else atomicAdd(loc.vk + x, 1ull);
}

// Adds every set bit of bits, bit b being value x0 + b, and returns how many.
__device__ __forceinline__ uint32_t add_bits(LShared &ls, const Loc &loc, uint32_t bits, uint32_t x0) {
    const uint32_t c = __popc(bits);
    while (bits) {
        add_x(ls, loc, x0 + (uint32_t)(__ffs(bits) - 1));
        bits &= bits - 1;
    }
    return c;
}

// eval_wedge for the per-vertex mode (L = 1) and the per-edge mode
// (L = 2, whose subtasks have no bitmaps, so every wedge is a search that
// gives both positions; nor bitmap intersections, which the per-vertex
// mode walks bit by bit). Returns the triangles the wedge closes.
template <int S, int L, typename Ix>
__device__ __forceinline__ uint32_t eval_local(const Shared<S, Ix> &sm, LShared &ls, int k, Ix w,
                                               const uint32_t *__restrict__ ikc, const uint32_t *__restrict__ jkc,
                                               const uint32_t *__restrict__ bm, const Loc &loc) {
    const Ix off = w - sm.pre[k];
    const uint8_t m = sm.mode[k];
    if constexpr (L == 1) {
        if (m == kAnd) return add_bits(ls, loc, and_word(sm, k, off, bm), ls.xbase[k] + 32u * (uint32_t)off);
        if (m == kAnd4) {
            const uint4 b = and_chunk(sm, k, off, bm);
            const uint32_t x0 = ls.xbase[k] + 128u * (uint32_t)off;
            return add_bits(ls, loc, b.x, x0) + add_bits(ls, loc, b.y, x0 + 32) + add_bits(ls, loc, b.z, x0 + 64) +
                   add_bits(ls, loc, b.w, x0 + 96);
        }
    }
    Ix pi, pj = 0;
    uint32_t x;
    bool hit;
    if (m == kIterJK) {
        pj = sm.iter[k] + off;
        x = __ldg(jkc + pj);
        hit = find_pos(ikc, sm.sbase[k], sm.slen[k], x, pi);
    } else {
        pi = sm.iter[k] + off;
        x = __ldg(ikc + pi);
        if (L == 1 && m == kIterIKBitmap) {
            const uint32_t d = x - sm.slen[k];
            hit = (__ldg(bm + sm.sbase[k] + (d >> 5)) >> (d & 31)) & 1u;
        } else {
            hit = find_pos(jkc, sm.sbase[k], sm.slen[k], x, pj);
        }
    }
    if (hit) {
        add_x(ls, loc, x);
        if constexpr (L == 2) {
            atomicAdd(loc.eik + pi, 1u);
            atomicAdd(loc.ejk + pj, 1u);
        }
    }
    return hit;
}

// walk() for the per-vertex mode: also counts each edge's triangles into
// ls.hits. The lanes of a warp evaluate neighbouring wedges, so their edges
// k do not decrease along the lanes; each run of one edge adds its
// triangles by one shared atomic from its first lane: a popcount of the
// lanes that found one, or, when a bitmap intersection found several, the
// difference of an inclusive scan of the counts across the warp.
template <int S, int E, int L, typename Ix>
__device__ __forceinline__ unsigned long long walk_local(Shared<S, Ix> &sm, LShared &ls, Ix we,
                                                         const uint32_t *__restrict__ ikc,
                                                         const uint32_t *__restrict__ jkc,
                                                         const uint32_t *__restrict__ bm, const Loc &loc) {
    const int t = threadIdx.x;
    const int lane = t & 31;
    unsigned long long found = 0;
    for (Ix r0 = 0; r0 < we; r0 += (Ix)kThreads * S) {
        spread<S, E, Ix>(sm, r0);
#pragma unroll
        for (int j = 0; j < S; j++) {
            const int q = j * kThreads + t;
            const Ix w = r0 + q;
            const bool live = w < we;
            const int k = live ? (int)sm.k[q] : -1;
            uint32_t c = 0;
            if (live) c = eval_local<S, L, Ix>(sm, ls, k, w, ikc, jkc, bm, loc);
            found += c;
            const unsigned hits = __ballot_sync(0xffffffffu, c != 0);
            const int kprev = __shfl_up_sync(0xffffffffu, k, 1);
            const unsigned heads = __ballot_sync(0xffffffffu, lane == 0 || k != kprev);
            // This lane's run: lanes [lane, next head).
            const unsigned later = lane == 31 ? 0u : heads & (~0u << (lane + 1));
            const int next = later ? __ffs(later) - 1 : 32;
            if (L == 1 && __any_sync(0xffffffffu, c > 1)) {
                uint32_t inc = c; // inclusive scan of c
#pragma unroll
                for (int o = 1; o < 32; o <<= 1) {
                    const uint32_t y = __shfl_up_sync(0xffffffffu, inc, o);
                    if (lane >= o) inc += y;
                }
                const uint32_t at_end = __shfl_sync(0xffffffffu, inc, next - 1);
                if (live && ((heads >> lane) & 1u)) {
                    const uint32_t sum = at_end - (inc - c);
                    if (sum) atomicAdd(&ls.hits[k], sum);
                }
            } else if (hits && live && ((heads >> lane) & 1u)) {
                const unsigned end = next == 32 ? ~0u : (1u << next) - 1u;
                const unsigned n = __popc(hits & end & (~0u << lane));
                if (n) atomicAdd(&ls.hits[k], n);
            }
        }
        if (r0 + (Ix)kThreads * S < we) __syncthreads();
    }
    return found;
}

// For an edge whose rows both have bitmaps (ik and jk one block; vb and ub
// their first words, ulo u's first value): picks the word (kAnd) or
// four-word (kAnd4) intersection over the overlap [lo, hi] of the value
// ranges when it costs less than best, and sets the edge's walk state.
// The whole of both rows' words is intersected over the overlap: in the
// upper block u's elements up to the edge's own are below every element of
// v's row, so they match nothing.
template <typename Ix>
__device__ __forceinline__ bool pick_and(const Bm &bmp, Ix best, uint32_t ilo, uint32_t ihi, uint32_t jlo,
                                         uint32_t jhi, Ix vb, Ix ub, uint32_t ulo, Ix &cnt,
                                         uint8_t &mode, Ix &iter, Ix &sbase, uint32_t &slen) {
    const uint32_t lo = max(ilo, jlo), hi = min(ihi, jhi);
    // Four-word chunks of both rows are aligned 16-byte loads (both
    // layouts; the host turns kAnd4 off where they are not).
    const uint32_t c0 = lo >> 7, nc = (hi >> 7) - c0 + 1;
    const uint32_t w0 = lo >> 5, nw = (hi >> 5) - w0 + 1;
    if (bmp.and4_cost && (Ix)nc * bmp.and4_cost < min(best, (Ix)nw * bmp.and_cost)) {
        cnt = (Ix)nc;
        mode = kAnd4;
        sbase = vb + (Ix)4 * (Ix)(c0 - (jlo >> 7));
        iter = ub + (Ix)4 * (Ix)(c0 - (ulo >> 7));
        slen = c0 << 7; // the value of bit 0 of the first chunk
        return true;
    }
    if ((Ix)nw * bmp.and_cost < best) {
        cnt = (Ix)nw;
        mode = kAnd;
        sbase = vb + (Ix)(w0 - ((jlo >> 7) << 2));
        iter = ub + (Ix)(w0 - ((ulo >> 7) << 2));
        slen = w0 << 5; // the value of bit 0 of the first word
        return true;
    }
    return false;
}

// Counts the wedges of edges [E * blockIdx.x, E * (blockIdx.x + 1)) of ij
// into *out (one atomic per warp), and in the per-vertex modes into loc.
// S: wedges per thread and round (the spread); E: edges per block (at most
// kThreads; fewer shorten the longest block, more amortise its setup); MB:
// blocks per multiprocessor the registers must allow (1: no cap); L: 0
// counts only, 1 per vertex, 2 per vertex and edge (Loc, walk_local).
// bmp.bits may still be being written by the bitmap build this launch
// overlaps: it is read only after grid_dependency_wait.
template <int S, int E, int MB, int L, typename Ix>
__global__ void __launch_bounds__(kThreads, MB)
wedge_kernel(Blk ij, Blk ik, Blk jk, Bm bmp, bool self, unsigned opts, Loc loc, unsigned long long *out) {
    typedef typename Shared<S, Ix>::Scan Scan;
    __shared__ Shared<S, Ix> sm;
    // Rows and costs in 32 bits with 32-bit positions (the host then
    // checks that every block's rows fit too).
    using Rx = std::conditional_t<sizeof(Ix) == 4, int32_t, int64_t>;

    const int t = threadIdx.x;
    // The first round's slots, cleared for the marks the setup sets (spread).
#pragma unroll
    for (int j = 0; j < S; j++) sm.k[t * S + j] = 0;
    const Ix e0 = (Ix)blockIdx.x * E;
    const Ix e1 = min(e0 + (Ix)E, (Ix)ij.nnz);
    const Rx nrows = (Rx)min(ij.nrows, ik.nrows);
    // Rows of ij past ik's rows have no list to intersect; their edges count 0.
    // With the row-of-edge index (32-bit positions) each edge loads its
    // row; otherwise the block's edges lie in rows r0 .. rlast: two loads
    // from the edge-row index when the slot has one, else thread 0
    // searches the first edge's row and thread 1 the last one's.
    const bool ro = sizeof(Ix) == 4 && ij.rowof;
    Rx r0 = 0, rlast = 0;
    if (!ro && E == (1 << TG_EROW_SHIFT) && ij.erow) {
        r0 = (Rx)__ldg(ij.erow + blockIdx.x);
        rlast = (Rx)__ldg(ij.erow + blockIdx.x + 1);
    } else if (!ro) {
        if (t == 0) sm.rows[0] = row_of(ij.rp, 0, ij.nrows, e0);
        if (t == 1) sm.rows[1] = row_of(ij.rp, 0, ij.nrows, e1 - 1);
        __syncthreads();
        r0 = (Rx)sm.rows[0];
        rlast = (Rx)sm.rows[1];
    }
    // Few rows (the usual case): their rowptr entries are loaded once, side
    // by side, and each edge finds its row in shared memory. The edge-row
    // index's rlast is the row of the next block's first edge, so a block
    // of 256 rows of one edge spans 257.
    const Rx span = rlast - r0 + 1;
    const bool cached = !ro && (opts & kOptRowCache) && span <= kThreads + 1;
    if (cached) {
        if (t < span) sm.rpc[t] = (Ix)__ldg(ij.rp + r0 + t);
        if (t == 0 && span > kThreads) sm.rpc[kThreads] = (Ix)__ldg(ij.rp + r0 + kThreads);
    }
    __syncthreads(); // sm.rpc, and sm.k's zeros before the marks below

    Ix cnt = 0;
    uint8_t mode = kIterIK;
    Ix iter = 0, sbase = 0;
    uint32_t slen = 0;
    Rx eu = -1; // the edge's row and column (per-vertex mode)
    uint32_t ev = 0;
    uint32_t xbase = 0; // per-vertex mode, kAnd and kAnd4: the value of bit 0 of word or chunk 0
    const Ix e = e0 + (Ix)t;
    if (t < E && e < e1) {
        Rx u;
        uint32_t v, c1 = 0;
        // Self mode with the row-of-edge index: the edge after e, loaded
        // beside e's own; when it starts another row (or there is none) e
        // is the last of its row and has no wedges.
        bool live = true;
        if (ro) {
            u = (Rx)__ldg(ij.rowof + e);
            v = __ldg(ij.c + e);
            if (self) {
                const bool more = e + 1 < (Ix)ij.nnz;
                const Rx u1 = more ? (Rx)__ldg(ij.rowof + e + 1) : -1;
                c1 = more ? __ldg(ij.c + e + 1) : 0;
                live = u1 == u;
            }
        } else if (cached) {
            int lo = 0, hi = (int)span; // last row with rpc <= e
            while (hi - lo > 1) {
                const int mid = (lo + hi) >> 1;
                if (sm.rpc[mid] <= e) lo = mid; else hi = mid;
            }
            u = r0 + lo;
        } else {
            u = (Rx)row_of(ij.rp, r0, rlast + 1, e);
        }
        if (!ro) v = __ldg(ij.c + e);
        if (live && u < nrows && (uint64_t)v < (uint64_t)jk.nrows) {
            eu = u;
            ev = v;
            // One upper block as all three: every value of jk.row(v) is > v,
            // so only the part of row u after the edge can match. The rows'
            // bounds and end values: one load each from the row-summary
            // indexes (32-bit positions only), else from rowptr and the
            // rows' ends; us and ulo, row u's start and first value (for
            // its bitmap), are then loaded only where they are needed.
            const bool rs = sizeof(Ix) == 4 && ik.rsum && jk.rsum;
            Ix a0, a1, b0, b1, us = 0;
            uint32_t ilo = 0, ihi = 0, jlo = 0, jhi = 0, ulo = 0;
            if (rs) {
                const uint4 ru = __ldg(ik.rsum + u), rv = __ldg(jk.rsum + v);
                us = (Ix)ru.x, a1 = (Ix)ru.y, ulo = ru.z, ihi = ru.w;
                b0 = (Ix)rv.x, b1 = (Ix)rv.y, jlo = rv.z, jhi = rv.w;
                a0 = self ? e + 1 : us;
            } else {
                a0 = self ? e + 1 : (Ix)__ldg(ik.rp + u);
                a1 = (Ix)__ldg(ik.rp + u + 1);
                b0 = (Ix)__ldg(jk.rp + v);
                b1 = (Ix)__ldg(jk.rp + v + 1);
            }
            const auto u_start = [&]() {
                if (rs) return;
                us = !self ? a0 : cached ? sm.rpc[u - r0] : (Ix)__ldg(ik.rp + u);
                ulo = __ldg(ik.c + us);
            };
            if (a0 < a1 && b0 < b1) {
                if (!rs) {
                    ilo = __ldg(ik.c + a0), ihi = __ldg(ik.c + a1 - 1);
                    jlo = __ldg(jk.c + b0), jhi = __ldg(jk.c + b1 - 1);
                } else {
                    ilo = !self ? ulo : ro ? c1 : __ldg(ik.c + a0);
                }
                if (ilo <= jhi && jlo <= ihi) {
                    // Only the overlap of the two value ranges can hold common
                    // elements (section 4.1's mixed style: enumerate the
                    // shorter clipped list, look it up in the other).
                    const bool hb = has_bitmap(bmp, b1 - b0, jlo, jhi);
                    // With v's bitmap an element of u costs one lookup, so
                    // v's list is rarely the one to enumerate: its clip
                    // bounds (two searches) are skipped and it is not.
                    const bool skipb = hb && (opts & kOptSkipB);
                    // Both rows with bitmaps and u's list long enough: an
                    // intersection of words that beats looking up all of
                    // u's list (an upper bound of its clipped part) needs
                    // no clip bounds at all.
                    bool picked = false;
                    if (skipb && (opts & kOptSkipA) && bmp.and_cost && a1 - a0 >= bmp.and_min) {
                        u_start();
                        if (has_bitmap(bmp, a1 - us, ulo, ihi))
                            picked = pick_and(bmp, (Ix)3 * (a1 - a0), ilo, ihi, jlo, jhi, bitmap_base(bmp, v, b0),
                                              bitmap_base(bmp, u, us), ulo, cnt, mode, iter, sbase, slen);
                    }
                    if (!picked) {
                        // The clip bounds: a bound the other range does not
                        // cut is the row's end, without a search; the upper
                        // bound is searched from the lower one.
                        const Ix pa0 = ilo >= jlo ? a0 : lower_bound(ik.c, a0, a1, jlo);
                        const Ix pa1 = ihi <= jhi ? a1 : upper_bound(ik.c, pa0, a1, jhi);
                        Ix pb0 = b0, pb1 = b1;
                        if (!skipb) {
                            pb0 = jlo >= ilo ? b0 : lower_bound(jk.c, b0, b1, ilo);
                            pb1 = jhi <= ihi ? b1 : upper_bound(jk.c, pb0, b1, ihi);
                        }
                        const Ix ca = pa1 - pa0, cb = pb1 - pb0;
                        // Cost per wedge: a fixed part (find, load) plus one load
                        // for a bitmap or one per binary-search step.
                        const Ix cost_a = ca * (2 + (hb ? 1 : bit_width(cb)));
                        const Ix cost_b = skipb ? ~(Ix)0 : cb * (2 + bit_width(ca));
                        if (cost_a <= cost_b) {
                            cnt = ca;
                            iter = pa0;
                            if (hb) {
                                mode = kIterIKBitmap;
                                sbase = bitmap_base(bmp, v, b0);
                                slen = tg_bm_first(jlo);
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
                        // Both rows dense: a word of the overlap covers 32 values
                        // for about the price of two lookups. Row u's bitmap is
                        // the one of its whole row (start us, first value ulo).
                        if (bmp.and_cost && hb && ca >= bmp.and_min) {
                            u_start();
                            if (has_bitmap(bmp, a1 - us, ulo, ihi))
                                pick_and(bmp, min(cost_a, cost_b), ilo, ihi, jlo, jhi, bitmap_base(bmp, v, b0),
                                         bitmap_base(bmp, u, us), ulo, cnt, mode, iter, sbase, slen);
                        }
                    }
                    // The value of the first bit of the first word or chunk
                    // (pick_and's slen), for the per-vertex walk.
                    if constexpr (L == 1) {
                        if (mode == kAnd || mode == kAnd4) xbase = slen;
                    }
                }
            }
        }
    }
    sm.iter[t] = iter;
    sm.sbase[t] = sbase;
    sm.slen[t] = slen;
    sm.mode[t] = mode;
    Ix excl, total;
    Scan(sm.scan).ExclusiveSum(cnt, excl, total);
    sm.pre[t] = excl;
    if (t == 0) sm.pre[kThreads] = total;
    // The first round's marks (spread).
    if (cnt > 0 && excl < (Ix)kThreads * S) sm.k[excl] = (uint16_t)(t + 1);

    __syncthreads();

    // Everything above reads the blocks only; from here the bitmaps are
    // read, so wait for the build this launch may overlap (see launch_wedges).
    if (bmp.bits) grid_dependency_wait();
    if constexpr (L == 0) {
        unsigned long long found = walk<S, E, Ix>(sm, total, ik.c, jk.c, bmp.bits);
        // One atomic per warp: a block-wide reduction would end the block with
        // one more barrier.
        for (int o = 16; o > 0; o >>= 1) found += __shfl_xor_sync(0xffffffffu, found, o);
        if ((t & 31) == 0 && found) atomicAdd(out, found);
    } else {
        __shared__ LShared ls;
        ls.hits[t] = 0;
        ls.xbase[t] = xbase;
        for (int i = t; i < kHot; i += kThreads) ls.hot[i] = 0;
        __syncthreads();
        unsigned long long found = walk_local<S, E, L, Ix>(sm, ls, total, ik.c, jk.c, bmp.bits, loc);
        __syncthreads();
        // The block's sums: each edge's count to its u and v (and to the
        // edge), the hot counts to their vertices.
        const uint32_t c = ls.hits[t];
        if (c && eu >= 0) {
            atomicAdd(loc.vi + eu, (unsigned long long)c);
            atomicAdd(loc.vj + ev, (unsigned long long)c);
            if constexpr (L == 2) atomicAdd(loc.eij + e, c);
        }
        for (int i = t; i < kHot; i += kThreads) {
            const uint32_t h = ls.hot[i];
            if (h) atomicAdd(loc.vk + loc.hot_lo + i, (unsigned long long)h);
        }
        for (int o = 16; o > 0; o >>= 1) found += __shfl_xor_sync(0xffffffffu, found, o);
        if ((t & 31) == 0 && found) atomicAdd(out, found);
    }
}

// Launches wedge_kernel over ij's edges on env's stream. overlap: the
// launch follows the bitmap build on the stream and may start before the
// build ends (programmatic dependent launch, sm_90 and later). narrow: the
// blocks' positions fit 32 bits (wetric_run), which the default shapes of
// the plain count then use.
template <int S, int E, int MB = 1, int L = 0>
cudaError_t launch_wedges(Blk ij, Blk ik, Blk jk, Bm bmp, bool self, tg_kernel_env *env, unsigned opts,
                          unsigned long long *d_count, bool overlap, bool narrow, const Loc &loc = Loc{}) {
    const uint64_t blocks = ((uint64_t)ij.nnz + E - 1) / E;
    if (blocks > 0x7fffffffull) return cudaErrorInvalidConfiguration;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)blocks);
    cfg.blockDim = dim3(kThreads);
    cfg.stream = env->stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = overlap ? 1 : 0;
    const auto launch = [&](auto kernel) {
        return cudaLaunchKernelEx(&cfg, kernel, ij, ik, jk, bmp, self, opts, loc, d_count);
    };
    cudaError_t err;
    if constexpr (L == 0 && E == 256 && MB > 1)
        err = narrow ? launch(wedge_kernel<S, E, MB, L, uint32_t>) : launch(wedge_kernel<S, E, MB, L, uint64_t>);
    else
        err = launch(wedge_kernel<S, E, MB, L, uint64_t>);
    if (err == cudaSuccess) err = cudaGetLastError();
    return err;
}

} // namespace

// The host side of one subtask. Every choice comes from the blocks' sizes,
// which the host already knows, so none costs a device round trip; the
// settings wetric_* (tg_settings, trigrid.h; docs/kernels.md's table)
// override each. The defaults:
// - bitmaps (section 5.4) of density ratio 256 for rows of at least 4
//   elements when jk has rows of 32 or more: the slot's index when it was
//   built by the same rule, else built here in scratch, 4 rows per warp,
//   overlapping the wedge kernel's setup;
// - spread (section 5.2) 8, 4 below 2^22 ij edges with 64-bit positions;
//   256 edges per block; registers capped for 8 blocks per SM, 6 below
//   2^21 ij edges with 64-bit positions;
// - v's clip skipped when v has a bitmap, and when ik is jk the bitmap
//   intersections at a cost of 4 per word and 4 per four-word chunk against
//   3 per element looked up, for u lists of 8 or more (taken without any
//   clip search when they beat all of u's list);
// - 32-bit positions in the default shapes (spread 4, 8 or 16, 256 edges
//   a block, registers capped) when the blocks' sizes allow them (the
//   fewer instructions of a search step and of the walk's arithmetic).
// The per-vertex mode (loc set) runs the same kernel with the per-vertex
// walk, which names the triangles of a bitmap intersection bit by bit;
// per-edge counts go without bitmaps and their intersections, so that every
// hit is a search that gives both positions. Spread as above, registers for
// 6 blocks per SM (the per-block counts take 10 KiB of shared memory).
static cudaError_t wetric_run(const tg_dblock *ij_, const tg_dblock *ik_, const tg_dblock *jk_,
                              tg_kernel_env *env, unsigned long long *d_count, const tg_local *loc) {
    if (!ij_ || !ik_ || !jk_ || !env || !d_count) return cudaErrorInvalidValue;
    Blk ij = view(ij_);
    const Blk ik = view(ik_), jk = view(jk_);
    const tg_settings &set = *env->set;
    if (set.wetric_erow == 0) ij.erow = nullptr; // search the rows instead
    const bool self = ij_ == ik_ && ik_ == jk_ && ij_->upper;
    if (ij.nnz <= 0 || ik.nnz <= 0 || jk.nnz <= 0 || ij.nrows <= 0 || ik.nrows <= 0 || jk.nrows <= 0)
        return cudaSuccess;

    // Bitmaps pay for their build when jk has rows long enough for a binary
    // search to take several steps.
    long ratio = jk_->max_degree >= 32 ? 256 : 0;
    if (set.wetric_bitmap != TG_SETTING_AUTO) ratio = set.wetric_bitmap;
    if (ratio < 0 || (loc && loc->eij)) ratio = 0;
    const long epb = set.wetric_edges == 64 ? 64 : 256;
    long rpw = set.wetric_fillrpw;
    if (rpw < 1 || rpw > 32) rpw = 1;
    Bm bmp{nullptr, nullptr, (uint64_t)ratio, (uint32_t)set.wetric_bmmin,
           (uint32_t)((ratio + 31) / 32), 0, 0, 0};
    // The index the slot built at load serves when it was built by the same
    // rule; otherwise (other settings, or a slot without room for it)
    // the bitmaps are built here, in scratch, by row offsets.
    const tg_bitmap &own = jk_->bm;
    const bool prebuilt = ratio > 0 && own.bits && (uint64_t)own.ratio == (uint64_t)ratio && own.minlen == bmp.minlen;
    // Word-at-a-time intersection of two bitmaps needs row u of ik to be a
    // row of jk, i.e. one block as both (the whole graph, subtasks i = j).
    if (ik_ == jk_ && !(loc && loc->eij)) {
        const long ac = set.wetric_andcost;
        bmp.and_cost = ac > 0 ? (uint32_t)ac : 0;
        const long am = set.wetric_andmin;
        bmp.and_min = am > 0 ? (uint32_t)am : 1;
        const long a4 = set.wetric_and4cost;
        bmp.and4_cost = a4 > 0 && (prebuilt || (bmp.rw & 3) == 0) ? (uint32_t)a4 : 0;
    }
    // Every row with a bitmap has span <= ratio * len, so its chunks fit in
    // the rw * len + TG_BM_ROWPAD words from rowptr * rw + TG_BM_ROWPAD * v
    // (tg_internal.cuh), with kBmPad words before the first row and after
    // the last.
    const uint64_t bm_bytes =
        ratio > 0 && !prebuilt
            ? ((uint64_t)jk.nnz * bmp.rw + (uint64_t)TG_BM_ROWPAD * ((uint64_t)jk.nrows + 1) + 2 * kBmPad) *
                  sizeof(uint32_t)
            : 0;
    // 32-bit positions (wedge_kernel's Ix) when each one fits: rows,
    // elements and bitmap words below 2^31 (either layout has at most rw
    // words per element and TG_BM_ROWPAD per row, plus the pads); and a
    // block's wedges, at most E times the longest list or its bitmap words,
    // below 2^32 with a round to spare (an edge's cost, at most 34 times
    // its list, then fits too). The per-vertex modes keep 64-bit positions.
    bool narrow = false;
    if (set.wetric_narrow != 0 && !loc && ik_->max_degree > 0 && jk_->max_degree > 0) {
        const uint64_t most = (uint64_t)std::max({ij.nnz, ik.nnz, jk.nnz, ij.nrows, ik.nrows, jk.nrows});
        const uint64_t words = (uint64_t)jk.nnz * bmp.rw + TG_BM_ROWPAD * ((uint64_t)jk.nrows + 1) + 2 * kBmPad;
        const uint64_t list =
            (uint64_t)std::max(ik_->max_degree, jk_->max_degree) * std::max(bmp.rw, 1u) + TG_BM_ROWPAD;
        narrow = most < (1ull << 31) && words < (1ull << 31) && list < (1ull << 22) &&
                 (uint64_t)epb * list + 32ull * kThreads < (1ull << 32);
    }

    // Host-side setup ends here (the compute capability below is cached).
    cudaError_t err = env->begin(env);
    if (err != cudaSuccess) return err;
    if (prebuilt) {
        bmp.bits = own.bits;
        bmp.off = own.off;
    } else if (bm_bytes > 0) {
        void *p = nullptr;
        err = env->scratch(env, 0, bm_bytes, &p);
        if (err == cudaErrorMemoryAllocation) {
            // Without the bitmaps the count is the same, only slower.
            cudaGetLastError();
            ratio = 0;
            bmp.ratio = 0;
        } else if (err != cudaSuccess) {
            return err;
        } else {
            uint32_t *bits = (uint32_t *)p + kBmPad;
            bmp.bits = bits;
            err = tg_bitmap_fill(jk_, (uint32_t)ratio, bmp.minlen, bmp.rw, nullptr, bits, true, (int)rpw, env->stream);
            if (err != cudaSuccess) return err;
        }
    }
    long spread = set.wetric_spread != TG_SETTING_AUTO ? set.wetric_spread : ij.nnz < (1 << 22) && !narrow ? 4 : 8;
    if (spread != 4 && spread != 8 && spread != 16 && spread != 32) spread = 8;
    const bool small = ij.nnz < (1 << 21);
    const long lb = set.wetric_lb != TG_SETTING_AUTO ? set.wetric_lb : small && !narrow ? 6 : 8;
    unsigned opts = 0;
    if (set.wetric_skipb != 0) opts |= kOptSkipB;
    if (set.wetric_rowcache != 0) opts |= kOptRowCache;
    if (set.wetric_skipa != 0) opts |= kOptSkipA;
    // The device's compute capability, asked once per device (host time
    // inside the timed call otherwise).
    static int majors[64];
    int major = 0;
    if (env->device >= 0 && env->device < 64 && majors[env->device] > 0) {
        major = majors[env->device];
    } else if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, env->device) != cudaSuccess) {
        cudaGetLastError();
        major = 0;
    } else if (env->device >= 0 && env->device < 64) {
        majors[env->device] = major;
    }
    // The wedge kernel overlaps the bitmap build it follows (sm_90 and later).
    const bool overlap = bmp.bits && !prebuilt && major >= 9 && set.wetric_overlap != 0;
    if (loc) {
        const uint64_t kcols = (uint64_t)ik_->ncols;
        const Loc lc{loc->vi, loc->vj, loc->vk, loc->eij, loc->eik, loc->ejk, kcols > kHot ? kcols - kHot : 0};
#define WETRIC_LOCAL(S_, L_) launch_wedges<S_, 256, 6, L_>(ij, ik, jk, bmp, self, env, opts, d_count, overlap, false, lc)
        if (loc->eij)
            return spread == 4 ? WETRIC_LOCAL(4, 2) : WETRIC_LOCAL(8, 2);
        return spread == 4 ? WETRIC_LOCAL(4, 1) : WETRIC_LOCAL(8, 1);
#undef WETRIC_LOCAL
    }
#define WETRIC(S_, E_, MB_) launch_wedges<S_, E_, MB_>(ij, ik, jk, bmp, self, env, opts, d_count, overlap, narrow)
    if ((lb == 8 || lb == 6) && epb == 256 && spread != 32) {
        if (spread == 4) return lb == 8 ? WETRIC(4, 256, 8) : WETRIC(4, 256, 6);
        if (spread == 16) return lb == 8 ? WETRIC(16, 256, 8) : WETRIC(16, 256, 6);
        return lb == 8 ? WETRIC(8, 256, 8) : WETRIC(8, 256, 6);
    }
    // No register cap (wetric_lb = 1), or the settings' other shapes.
    if (epb == 64) {
        if (spread == 4) return WETRIC(4, 64, 1);
        if (spread == 16) return WETRIC(16, 64, 1);
        return WETRIC(8, 64, 1);
    }
    if (spread == 4) return WETRIC(4, 256, 1);
    if (spread == 16) return WETRIC(16, 256, 1);
    if (spread == 32) return WETRIC(32, 256, 1);
    return WETRIC(8, 256, 1);
#undef WETRIC
}

cudaError_t tg_kernel_wetric(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                             unsigned long long *d_count) {
    return wetric_run(ij, ik, jk, env, d_count, nullptr);
}

cudaError_t tg_kernel_wetric_local(const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk, tg_kernel_env *env,
                                   unsigned long long *d_count, const tg_local *loc) {
    if (!loc || !loc->vi || !loc->vj || !loc->vk) return cudaErrorInvalidValue;
    return wetric_run(ij, ik, jk, env, d_count, loc);
}
