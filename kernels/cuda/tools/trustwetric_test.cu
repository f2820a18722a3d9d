// Standalone conformance and timing driver for the trust and wetric kernels.
//
// It builds the forward CSR itself (clean, rank by (degree, id), keep u -> v
// iff rank(u) < rank(v)), checks each kernel against an independent CPU
// count on the whole graph (P = 1) and on hash-partitioned P x P blocks
// (group x mod P, local x div P; the sum over all P^3 subtasks must be the
// whole count), checks arbitrary unordered blocks against a brute-force
// definition of the subtask, and times each kernel with CUDA events around
// the whole per-subtask call (one warm-up, median of the timed repetitions).
//
// Build and run (device machine): make -C kernels/cuda conformance, which
// builds tools/twt and runs "twt random" and "twt check" on CHECK_GRAPHS.
// (polak, trix and grouptc are checked and timed beside them.)
// Variants name tg_settings fields (trigrid.h): "wetric_spread=16".
// Use:
//   twt check FILE...            CPU-checked P = 1..4 on edge-list files
//   twt random                   arbitrary blocks against brute force
//   twt bench NAME SRC [reps]    SRC: a file or rmat:SCALE; times variants
#include "tg_internal.cuh"
#include "tg_settings.h"

#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/sort.h>
#include <thrust/unique.h>
#include <thrust/binary_search.h>
#include <thrust/sequence.h>
#include <thrust/scan.h>
#include <thrust/transform.h>
#include <thrust/copy.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                            \
        }                                                                                       \
    } while (0)

struct HostCSR {
    int64_t nrows = 0, ncols = 0;
    std::vector<uint64_t> rp;
    std::vector<uint32_t> c;
    int64_t max_degree() const {
        int64_t m = 0;
        for (int64_t i = 0; i < nrows; i++) m = std::max<int64_t>(m, (int64_t)(rp[i + 1] - rp[i]));
        return m;
    }
};

// ---------------------------------------------------------------- scratch

struct Scratch {
    void *p[8] = {};
    size_t sz[8] = {};
};

static cudaError_t scratch_cb(tg_kernel_env *env, int which, size_t bytes, void **out) {
    Scratch *s = (Scratch *)env->ctx;
    if (which < 0 || which >= 8) return cudaErrorInvalidValue;
    if (bytes > s->sz[which]) {
        if (s->p[which]) {
            cudaError_t e = cudaFree(s->p[which]);
            if (e != cudaSuccess) return e;
        }
        s->p[which] = nullptr;
        s->sz[which] = 0;
        cudaError_t e = cudaMalloc(&s->p[which], bytes);
        if (e != cudaSuccess) {
            s->p[which] = nullptr;
            return e;
        }
        s->sz[which] = bytes;
    }
    *out = s->p[which];
    return cudaSuccess;
}

// ---------------------------------------------------------------- device blocks

// TWT_PREBUILT=1: blocks carry the indexes a library slot builds at load
// (bitmap.cu: the compact bitmaps, which wetric then reads instead of
// building its own, the edge-row index, the row-summary index and the
// row-of-edge index).
static bool prebuilt_index() { return getenv("TWT_PREBUILT") && atoi(getenv("TWT_PREBUILT")) != 0; }

struct DevBlock {
    uint64_t *rp = nullptr;
    uint32_t *c = nullptr;
    uint32_t *off = nullptr, *bits = nullptr, *erow = nullptr, *rowof = nullptr;
    uint4 *rsum = nullptr;
    tg_dblock d{};
    void upload(const HostCSR &h) {
        CK(cudaMalloc(&rp, (h.nrows + 1) * sizeof(uint64_t)));
        CK(cudaMemcpy(rp, h.rp.data(), (h.nrows + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice));
        size_t nnz = h.c.size();
        CK(cudaMalloc(&c, std::max<size_t>(nnz, 1) * sizeof(uint32_t)));
        if (nnz) CK(cudaMemcpy(c, h.c.data(), nnz * sizeof(uint32_t), cudaMemcpyHostToDevice));
        d.rowptr = rp;
        d.cols = c;
        d.nrows = h.nrows;
        d.nnz = (int64_t)nnz;
        d.ncols = h.ncols;
        d.max_degree = h.max_degree();
        d.upper = 1;
        for (int64_t u = 0; u < h.nrows && d.upper; u++)
            if (h.rp[u + 1] > h.rp[u] && (int64_t)h.c[h.rp[u]] <= u) d.upper = 0;
        if (prebuilt_index() && nnz > 0) {
            CK(cudaMalloc(&off, (h.nrows + 1) * sizeof(uint32_t)));
            size_t tb = tg_bitmap_layout_tmp(h.nrows);
            void *tmp = nullptr;
            CK(cudaMalloc(&tmp, std::max<size_t>(tb, 16)));
            CK(tg_bitmap_layout(&d, TG_BM_RATIO, TG_BM_MINLEN, off, tmp, tb, 0));
            uint32_t chunks = 0;
            CK(cudaMemcpy(&chunks, off + h.nrows, sizeof chunks, cudaMemcpyDeviceToHost));
            CK(cudaFree(tmp));
            const size_t words = (size_t)chunks * 4 + 2 * TG_BM_PAD;
            CK(cudaMalloc(&bits, words * sizeof(uint32_t)));
            CK(cudaMemset(bits, 0, words * sizeof(uint32_t)));
            CK(tg_bitmap_fill(&d, TG_BM_RATIO, TG_BM_MINLEN, 0, off, bits + TG_BM_PAD, false, 4, 0));
            CK(cudaDeviceSynchronize());
            d.bm = tg_bitmap{bits + TG_BM_PAD, off, TG_BM_RATIO, TG_BM_MINLEN};
            CK(cudaMalloc(&erow, tg_edge_rows_len((int64_t)nnz) * sizeof(uint32_t)));
            CK(tg_edge_rows(&d, erow, 0));
            CK(cudaDeviceSynchronize());
            d.erow = erow;
            if (h.nrows > 0 && h.nrows < TG_RSUM_MAX && (int64_t)nnz < TG_RSUM_MAX) {
                CK(cudaMalloc(&rsum, h.nrows * sizeof(uint4)));
                CK(tg_row_summaries(&d, rsum, 0));
                CK(cudaDeviceSynchronize());
                d.rsum = rsum;
            }
            if (h.nrows < TG_ROWOF_MAX && (int64_t)nnz < TG_ROWOF_MAX) {
                CK(cudaMalloc(&rowof, nnz * sizeof(uint32_t)));
                CK(tg_rows_of_edges(&d, rowof, 0));
                CK(cudaDeviceSynchronize());
                d.rowof = rowof;
            }
        }
    }
    void release() {
        if (off) CK(cudaFree(off));
        if (bits) CK(cudaFree(bits));
        if (erow) CK(cudaFree(erow));
        if (rsum) CK(cudaFree(rsum));
        if (rowof) CK(cudaFree(rowof));
        off = bits = erow = rowof = nullptr;
        d.rowof = nullptr;
        rsum = nullptr;
        d.rsum = nullptr;
        d.bm = tg_bitmap{};
        d.erow = nullptr;
        if (rp) CK(cudaFree(rp));
        if (c) CK(cudaFree(c));
        rp = nullptr;
        c = nullptr;
    }
};

// The timed region starts where the kernel says (tg_kernel_env.begin), as
// in the library.
static cudaEvent_t g_ev0;
static bool g_started = false;
static cudaError_t begin_cb(tg_kernel_env *env) {
    if (g_started) return cudaSuccess;
    g_started = true;
    return cudaEventRecord(g_ev0, env->stream);
}

// The settings every run uses: the defaults, with those of one variant.
static tg_settings g_set;

struct Runner {
    tg_kernel_env env{};
    Scratch scr;
    unsigned long long *d_count = nullptr;
    cudaEvent_t ev0, ev1;
    Runner() {
        int dev = 0;
        CK(cudaGetDevice(&dev));
        cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, dev));
        CK(cudaStreamCreate(&env.stream));
        env.device = dev;
        env.sm_count = prop.multiProcessorCount;
        env.shared_mem_per_block_optin = prop.sharedMemPerBlockOptin;
        env.scratch = scratch_cb;
        env.begin = begin_cb;
        env.ctx = &scr;
        tg_settings_fill_default(&g_set);
        env.set = &g_set;
        CK(cudaMalloc(&d_count, sizeof(unsigned long long)));
        CK(cudaEventCreate(&ev0));
        CK(cudaEventCreate(&ev1));
    }
    // One subtask; returns the count, and the elapsed ms in *ms if asked.
    uint64_t run(tg_kernel_fn fn, const tg_dblock *ij, const tg_dblock *ik, const tg_dblock *jk,
                 float *ms = nullptr) {
        CK(cudaMemsetAsync(d_count, 0, sizeof(unsigned long long), env.stream));
        g_ev0 = ev0;
        g_started = false;
        CK(fn(ij, ik, jk, &env, d_count));
        if (!g_started) CK(cudaEventRecord(ev0, env.stream));
        CK(cudaEventRecord(ev1, env.stream));
        CK(cudaEventSynchronize(ev1));
        CK(cudaGetLastError());
        unsigned long long h = 0;
        CK(cudaMemcpy(&h, d_count, sizeof(h), cudaMemcpyDeviceToHost));
        if (ms) CK(cudaEventElapsedTime(ms, ev0, ev1));
        return h;
    }
};

// ---------------------------------------------------------------- graph building

// Edge list (raw ids) -> forward CSR: drop self-loops and duplicates, compact
// ids, rank by (degree, id), orient from lower to higher rank, sort rows.
__global__ void k_norm(uint64_t *e, size_t m) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    uint32_t a = (uint32_t)(e[i] >> 32), b = (uint32_t)e[i];
    if (a == b) e[i] = ~0ull;
    else e[i] = a < b ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
}
__global__ void k_ends(const uint64_t *e, size_t m, uint32_t *ends) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    ends[2 * i] = (uint32_t)(e[i] >> 32);
    ends[2 * i + 1] = (uint32_t)e[i];
}
__global__ void k_relabel_deg(uint64_t *e, size_t m, const uint32_t *ids, size_t n, uint32_t *deg) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    uint32_t a = (uint32_t)(e[i] >> 32), b = (uint32_t)e[i];
    // binary search in ids
    size_t lo = 0, hi = n;
    while (lo < hi) { size_t mid = (lo + hi) / 2; if (ids[mid] < a) lo = mid + 1; else hi = mid; }
    uint32_t ca = (uint32_t)lo;
    lo = 0; hi = n;
    while (lo < hi) { size_t mid = (lo + hi) / 2; if (ids[mid] < b) lo = mid + 1; else hi = mid; }
    uint32_t cb = (uint32_t)lo;
    e[i] = (uint64_t)ca << 32 | cb;
    atomicAdd(deg + ca, 1u);
    atomicAdd(deg + cb, 1u);
}
__global__ void k_keys(const uint32_t *deg, size_t n, uint64_t *key) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) key[i] = (uint64_t)deg[i] << 32 | (uint32_t)i;
}
__global__ void k_rank(const uint64_t *key, size_t n, uint32_t *rank) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) rank[(uint32_t)key[i]] = (uint32_t)i;
}
__global__ void k_orient(uint64_t *e, size_t m, const uint32_t *rank, uint32_t *rowcnt) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    uint32_t a = rank[(uint32_t)(e[i] >> 32)], b = rank[(uint32_t)e[i]];
    if (a > b) { uint32_t t = a; a = b; b = t; }
    e[i] = (uint64_t)a << 32 | b;
    atomicAdd(rowcnt + a, 1u);
}

static unsigned nb(size_t m) { return (unsigned)((m + 255) / 256); }

static HostCSR build_forward(thrust::device_vector<uint64_t> &e) {
    size_t m = e.size();
    k_norm<<<nb(m), 256>>>(thrust::raw_pointer_cast(e.data()), m);
    CK(cudaGetLastError());
    thrust::sort(e.begin(), e.end());
    m = thrust::unique(e.begin(), e.end()) - e.begin();
    if (m && e[m - 1] == ~0ull) m--;
    e.resize(m);
    thrust::device_vector<uint32_t> ends(2 * m);
    k_ends<<<nb(m), 256>>>(thrust::raw_pointer_cast(e.data()), m, thrust::raw_pointer_cast(ends.data()));
    CK(cudaGetLastError());
    thrust::sort(ends.begin(), ends.end());
    size_t n = thrust::unique(ends.begin(), ends.end()) - ends.begin();
    ends.resize(n);
    thrust::device_vector<uint32_t> deg(n, 0);
    k_relabel_deg<<<nb(m), 256>>>(thrust::raw_pointer_cast(e.data()), m, thrust::raw_pointer_cast(ends.data()), n,
                                  thrust::raw_pointer_cast(deg.data()));
    CK(cudaGetLastError());
    thrust::device_vector<uint64_t> key(n);
    k_keys<<<nb(n), 256>>>(thrust::raw_pointer_cast(deg.data()), n, thrust::raw_pointer_cast(key.data()));
    thrust::sort(key.begin(), key.end());
    thrust::device_vector<uint32_t> rank(n);
    k_rank<<<nb(n), 256>>>(thrust::raw_pointer_cast(key.data()), n, thrust::raw_pointer_cast(rank.data()));
    thrust::device_vector<uint32_t> rowcnt(n + 1, 0);
    k_orient<<<nb(m), 256>>>(thrust::raw_pointer_cast(e.data()), m, thrust::raw_pointer_cast(rank.data()),
                             thrust::raw_pointer_cast(rowcnt.data()));
    CK(cudaGetLastError());
    thrust::sort(e.begin(), e.end());
    HostCSR h;
    h.nrows = h.ncols = (int64_t)n;
    h.rp.assign(n + 1, 0);
    thrust::host_vector<uint32_t> rc = rowcnt;
    for (size_t i = 0; i < n; i++) h.rp[i + 1] = h.rp[i] + rc[i];
    thrust::host_vector<uint64_t> he = e;
    h.c.resize(m);
    for (size_t i = 0; i < m; i++) h.c[i] = (uint32_t)he[i];
    return h;
}

static HostCSR read_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    std::vector<uint64_t> ev;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '%') continue;
        char *p = line, *end;
        unsigned long long a = strtoull(p, &end, 10);
        if (end == p) continue;
        p = end;
        unsigned long long b = strtoull(p, &end, 10);
        if (end == p) continue;
        ev.push_back((uint64_t)a << 32 | (uint32_t)b);
    }
    fclose(f);
    thrust::device_vector<uint64_t> e(ev.begin(), ev.end());
    return build_forward(e);
}

// Graph500 Kronecker generator: a=.57 b=.19 c=.19 d=.05, 2^scale vertices,
// edge_factor * 2^scale edges, labels permuted by a random permutation.
__device__ __forceinline__ uint64_t mix64(uint64_t x) {
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}
__global__ void k_rmat(uint64_t *e, size_t m, int scale, uint64_t seed) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    uint32_t a = 0, b = 0;
    uint64_t s = mix64(seed ^ (i * 0x9e3779b97f4a7c15ull));
    for (int l = 0; l < scale; l++) {
        s = mix64(s + 0x9e3779b97f4a7c15ull);
        double r = (double)(s >> 11) * (1.0 / 9007199254740992.0);
        int q = r < 0.57 ? 0 : r < 0.76 ? 1 : r < 0.95 ? 2 : 3;
        a = a << 1 | (q >> 1);
        b = b << 1 | (q & 1);
    }
    e[i] = (uint64_t)a << 32 | b;
}
__global__ void k_perm_apply(uint64_t *e, size_t m, const uint32_t *perm) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    e[i] = (uint64_t)perm[(uint32_t)(e[i] >> 32)] << 32 | perm[(uint32_t)e[i]];
}
__global__ void k_randkeys(uint64_t *k, uint32_t *v, size_t n, uint64_t seed) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    k[i] = mix64(seed + i);
    v[i] = (uint32_t)i;
}

static HostCSR make_rmat(int scale) {
    size_t n = (size_t)1 << scale, m = n * 16;
    thrust::device_vector<uint64_t> e(m);
    k_rmat<<<nb(m), 256>>>(thrust::raw_pointer_cast(e.data()), m, scale, 0x5eed0000ull + scale);
    CK(cudaGetLastError());
    thrust::device_vector<uint64_t> k(n);
    thrust::device_vector<uint32_t> perm(n);
    k_randkeys<<<nb(n), 256>>>(thrust::raw_pointer_cast(k.data()), thrust::raw_pointer_cast(perm.data()), n, 77);
    thrust::sort_by_key(k.begin(), k.end(), perm.begin());
    k_perm_apply<<<nb(m), 256>>>(thrust::raw_pointer_cast(e.data()), m, thrust::raw_pointer_cast(perm.data()));
    CK(cudaGetLastError());
    return build_forward(e);
}

// ---------------------------------------------------------------- references

// Definition of a subtask: for every edge (u, v) of ij, |ik.row(u) ∩ jk.row(v)|.
static uint64_t cpu_subtask(const HostCSR &ij, const HostCSR &ik, const HostCSR &jk) {
    uint64_t total = 0;
    int64_t n = std::min(ij.nrows, ik.nrows);
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : total)
    for (int64_t u = 0; u < n; u++) {
        for (uint64_t p = ij.rp[u]; p < ij.rp[u + 1]; p++) {
            uint32_t v = ij.c[p];
            if ((int64_t)v >= jk.nrows) continue;
            uint64_t a = ik.rp[u], ae = ik.rp[u + 1], b = jk.rp[v], be = jk.rp[v + 1];
            while (a < ae && b < be) {
                if (ik.c[a] < jk.c[b]) a++;
                else if (ik.c[a] > jk.c[b]) b++;
                else { total++; a++; b++; }
            }
        }
    }
    return total;
}

// Hash scheme: group x mod P, local x div P.
static std::vector<HostCSR> partition(const HostCSR &g, int P) {
    int64_t n = g.nrows;
    std::vector<HostCSR> blk(P * P);
    auto gsize = [&](int I) { return (n - I + P - 1) / P; };
    std::vector<std::vector<uint64_t>> cnt(P * P);
    for (int I = 0; I < P; I++)
        for (int J = 0; J < P; J++) {
            HostCSR &b = blk[I * P + J];
            b.nrows = gsize(I);
            b.ncols = gsize(J);
            b.rp.assign(b.nrows + 1, 0);
        }
    for (int64_t u = 0; u < n; u++)
        for (uint64_t p = g.rp[u]; p < g.rp[u + 1]; p++) {
            uint32_t v = g.c[p];
            blk[(u % P) * P + v % P].rp[u / P + 1]++;
        }
    for (auto &b : blk) {
        for (int64_t i = 0; i < b.nrows; i++) b.rp[i + 1] += b.rp[i];
        b.c.resize(b.rp[b.nrows]);
    }
    std::vector<std::vector<uint64_t>> pos(P * P);
    for (int i = 0; i < P * P; i++) pos[i].assign(blk[i].rp.begin(), blk[i].rp.end() - 1);
    for (int64_t u = 0; u < n; u++)
        for (uint64_t p = g.rp[u]; p < g.rp[u + 1]; p++) {
            uint32_t v = g.c[p];
            int bi = (int)((u % P) * P + v % P);
            blk[bi].c[pos[bi][u / P]++] = (uint32_t)(v / P);
        }
    return blk;
}

struct KernelDef {
    const char *name;
    tg_kernel_fn fn;
};
static const KernelDef kKernels[] = {{"trust", tg_kernel_trust}, {"wetric", tg_kernel_wetric}};
static const KernelDef kAll[] = {{"polak", tg_kernel_polak},     {"trix", tg_kernel_trix},
                                 {"grouptc", tg_kernel_grouptc}, {"trust", tg_kernel_trust},
                                 {"wetric", tg_kernel_wetric}};
static const int kNumAll = (int)(sizeof kAll / sizeof kAll[0]);

// Sets the settings of "name=value name=value ..." over the defaults; an
// unknown name or an invalid value stops the program (a variant that silently
// ran the defaults would test nothing).
static void apply_settings(const char *spec) {
    tg_settings_fill_default(&g_set);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(nullptr, " ")) {
        char *eq = strchr(tok, '=');
        if (!eq || tg_setting_set(&g_set, tok, (size_t)(eq - tok), (int32_t)atoi(eq + 1)) != 0) {
            fprintf(stderr, "twt: bad setting %s\n", tok);
            exit(2);
        }
    }
}

static int failures = 0, passes = 0;

static void expect(const char *what, const char *kern, uint64_t got, uint64_t want) {
    bool ok = got == want;
    if (!ok) failures++; else passes++;
    printf("%-6s %-8s %-44s got %llu want %llu\n", ok ? "ok" : "FAIL", kern, what, (unsigned long long)got,
           (unsigned long long)want);
    fflush(stdout);
}

// Sum over all P^3 subtasks for each kernel; with timed, also the summed
// kernel times of the diagonal (one block thrice) and the other subtasks,
// each subtask run once after a warm-up pass.
static void check_partitions(Runner &r, const char *name, const HostCSR &g, uint64_t want, int maxP,
                             bool timed = false, int minP = 1) {
    for (int P = minP; P <= maxP; P++) {
        std::vector<HostCSR> hb = P == 1 ? std::vector<HostCSR>{g} : partition(g, P);
        std::vector<DevBlock> db(hb.size());
        for (size_t i = 0; i < hb.size(); i++) db[i].upload(hb[i]);
        const KernelDef *ks = kAll;
        int nk = kNumAll;
        for (int ki = 0; ki < nk; ki++) {
            const KernelDef &k = ks[ki];
            uint64_t sum = 0;
            double ms_diag = 0, ms_off = 0;
            for (int pass = 0; pass < (timed ? 2 : 1); pass++) {
                sum = 0;
                ms_diag = ms_off = 0;
                for (int I = 0; I < P; I++)
                    for (int J = 0; J < P; J++)
                        for (int K = 0; K < P; K++) {
                            float ms = 0;
                            sum += r.run(k.fn, &db[I * P + J].d, &db[I * P + K].d, &db[J * P + K].d, &ms);
                            (I == J && J == K ? ms_diag : ms_off) += ms;
                        }
            }
            char what[128];
            snprintf(what, sizeof what, "%s P=%d", name, P);
            expect(what, k.name, sum, want);
            if (timed)
                printf("ptime %s P=%d %-8s diag_ms %.3f offdiag_ms %.3f total_ms %.3f\n", name, P, k.name, ms_diag,
                       ms_off, ms_diag + ms_off);
        }
        for (auto &d : db) d.release();
    }
}

// ---------------------------------------------------------------- random blocks

static HostCSR random_block(std::mt19937_64 &rng, int64_t nrows, int64_t ncols, double density,
                            int64_t hub_row, int64_t hub_len, int64_t dense_row) {
    HostCSR b;
    b.nrows = nrows;
    b.ncols = ncols;
    b.rp.assign(nrows + 1, 0);
    std::vector<uint32_t> row;
    for (int64_t u = 0; u < nrows; u++) {
        row.clear();
        if (u == hub_row) {
            std::uniform_int_distribution<int64_t> d(0, ncols - 1);
            for (int64_t i = 0; i < hub_len; i++) row.push_back((uint32_t)d(rng));
        } else if (u == dense_row) {
            // a long, dense run in the middle of the column space
            int64_t lo = ncols / 3, len = std::min<int64_t>(ncols - lo, 3000);
            for (int64_t i = 0; i < len; i++)
                if (rng() % 4 != 0) row.push_back((uint32_t)(lo + i));
        } else if (ncols > 0) {
            std::geometric_distribution<int> gd(1.0 / (1.0 + density * 20));
            int k = std::min<int>(gd(rng), (int)ncols);
            std::uniform_int_distribution<int64_t> d(0, ncols - 1);
            for (int i = 0; i < k; i++) row.push_back((uint32_t)d(rng));
        }
        std::sort(row.begin(), row.end());
        row.erase(std::unique(row.begin(), row.end()), row.end());
        b.c.insert(b.c.end(), row.begin(), row.end());
        b.rp[u + 1] = b.c.size();
    }
    return b;
}

static void check_random(Runner &r) {
    std::mt19937_64 rng(12345);
    struct Case { int64_t ni, nj, nk; double dij, dik, djk; int64_t hub, hublen, dense; const char *name; };
    const Case cases[] = {
        {50, 60, 70, 0.5, 0.5, 0.5, -1, 0, -1, "small unordered"},
        {2000, 1500, 3000, 1.0, 2.0, 2.0, -1, 0, -1, "medium unordered"},
        {3000, 3000, 20000, 1.0, 1.0, 1.0, 7, 9000, -1, "ik hub 9000 (global tables)"},
        {3000, 3000, 8000, 1.0, 1.0, 1.0, 11, 1500, -1, "ik row 1500 (CTA tier)"},
        {3000, 2000, 9000, 3.0, 1.0, 1.0, -1, 0, -1, "long ij rows"},
        {0, 10, 10, 1.0, 1.0, 1.0, -1, 0, -1, "no rows"},
        {100, 100, 100, 0.0, 1.0, 1.0, -1, 0, -1, "sparse ij"},
    };
    for (const Case &c : cases) {
        HostCSR ij = random_block(rng, c.ni, c.nj, c.dij, -1, 0, -1);
        HostCSR ik = random_block(rng, c.ni, c.nk, c.dik, c.hub, c.hublen, -1);
        HostCSR jk = random_block(rng, c.nj, c.nk, c.djk, -1, 0, 3);
        // Force some edges onto the hub and dense rows so they matter.
        if (c.hub >= 0 && c.ni > c.hub && c.nj > 3) {
            // rebuild ij row c.hub to point at many v's including 3
            HostCSR t = ij;
            std::vector<uint32_t> nr;
            for (int64_t v = 0; v < c.nj; v += 3) nr.push_back((uint32_t)v);
            HostCSR out;
            out.nrows = t.nrows; out.ncols = t.ncols; out.rp.assign(t.nrows + 1, 0);
            for (int64_t u = 0; u < t.nrows; u++) {
                if (u == c.hub) out.c.insert(out.c.end(), nr.begin(), nr.end());
                else out.c.insert(out.c.end(), t.c.begin() + t.rp[u], t.c.begin() + t.rp[u + 1]);
                out.rp[u + 1] = out.c.size();
            }
            ij = out;
        }
        uint64_t want = cpu_subtask(ij, ik, jk);
        DevBlock a, b, d;
        a.upload(ij); b.upload(ik); d.upload(jk);
        for (const KernelDef &k : kKernels) {
            // Each code path: bitmap forced on, both block shapes, every
            // spread and register cap, every CTA size, everything through
            // the CTA tier, hash tables instead of bitmaps.
            const char *cfgs[] = {"",
                                  "wetric_bitmap=64",
                                  "wetric_bitmap=64 wetric_edges=64",
                                  "wetric_spread=4",
                                  "wetric_spread=8",
                                  "wetric_spread=16",
                                  "wetric_spread=32 wetric_bitmap=64",
                                  "wetric_spread=4 wetric_edges=64",
                                  "wetric_spread=16 wetric_edges=64 wetric_bitmap=32",
                                  "wetric_spread=4 wetric_bitmap=64 wetric_bmmin=2",
                                  "wetric_lb=1 wetric_bitmap=64",
                                  "wetric_lb=1 wetric_spread=16",
                                  "wetric_lb=1 wetric_spread=4 wetric_erow=0",
                                  "wetric_bitmap=0",
                                  "wetric_erow=0",
                                  "wetric_erow=0 wetric_bitmap=64",
                                  "wetric_spread=4 wetric_lb=6", "wetric_spread=4 wetric_bitmap=64 wetric_lb=8",
                                  "wetric_skipb=0", "wetric_rowcache=0 wetric_spread=8", "wetric_rowcache=0 wetric_skipb=0 wetric_bitmap=64",
                                  "wetric_skipa=0", "wetric_skipa=0 wetric_rowcache=0 wetric_bitmap=64",
                                  "wetric_lb=6 wetric_bitmap=64",
                                  "wetric_lb=6 wetric_spread=16",
                                  "wetric_lb=6 wetric_bitmap=64 wetric_fillrpw=32",
                                  "wetric_fillrpw=1 wetric_bitmap=64",
                                  "wetric_fillrpw=32 wetric_bitmap=64 wetric_bmmin=2",
                                  "wetric_fillrpw=5 wetric_bitmap=32 wetric_bmmin=1 wetric_spread=16",
                                  "wetric_overlap=0 wetric_bitmap=64",
                                  "wetric_narrow=0", "wetric_narrow=0 wetric_bitmap=64 wetric_spread=8",
                                  "wetric_narrow=0 wetric_lb=6 wetric_bitmap=64 wetric_fillrpw=32",
                                  "trust_cta_threads=512",
                                  "trust_warpmax=1",
                                  "trust_bitmap=0",
                                  "trust_warpmax=1 trust_bitmap=0",
                                  "trust_warpmax=1 trust_cta_threads=512",
                                  "trust_warpmax=1 trust_cta_threads=128",
                                  "trust_warpmax=1 trust_cta_threads=128 trust_bitmap=0",
                                  "trust_warpmax=8",
                                  "trust_warpmax=1 trust_cta_smem=1024",
                                  "trust_warpmax=1 trust_cta_smem=1024 trust_bitmap=0",
                                  "trust_warpmax=1 trust_cta_smem=1024 trust_cta_threads=512",
                                  "trust_warpmax=1 trust_cta_smem=0",
                                  "trust_cta_smem=32768 trust_warpmax=4",
                                  "trust_warpmax=128 trust_cta_smem=1024",
                                  "trust_warpmax=128 trust_cta_smem=32768"};
            for (const char *cf : cfgs) {
                apply_settings(cf);
                uint64_t got = r.run(k.fn, &a.d, &b.d, &d.d);
                apply_settings("");
                char what[160];
                snprintf(what, sizeof what, "random %s %s", c.name, cf);
                expect(what, k.name, got, want);
            }
        }
        // polak, and the search kernels' settings one by one.
        expect((std::string("random ") + c.name).c_str(), "polak", r.run(tg_kernel_polak, &a.d, &b.d, &d.d), want);
        const char *isect[] = {"", "ratio=1", "ratio=0", "window=0", "window=64", "spread=4", "spread=16",
                               "minb=1", "minb=1 spread=4 window=0"};
        for (const KernelDef &k : {KernelDef{"trix", tg_kernel_trix}, KernelDef{"grouptc", tg_kernel_grouptc}}) {
            for (const char *cf : isect) {
                char spec[160] = "";
                char buf[160];
                snprintf(buf, sizeof buf, "%s", cf);
                for (char *tok = strtok(buf, " "); tok; tok = strtok(nullptr, " ")) {
                    size_t l = strlen(spec);
                    snprintf(spec + l, sizeof spec - l, "%s%s_%s", l ? " " : "", k.name, tok);
                }
                apply_settings(spec);
                uint64_t got = r.run(k.fn, &a.d, &b.d, &d.d);
                apply_settings("");
                char what[200];
                snprintf(what, sizeof what, "random %s %s", c.name, spec);
                expect(what, k.name, got, want);
            }
        }
        // The same block as all three (P = 1 shape) on an unordered block.
        if (c.ni == c.nj && c.nj == c.nk && c.ni > 0) {
            HostCSR sq = random_block(rng, c.ni, c.ni, c.dik, -1, 0, -1);
            uint64_t w2 = cpu_subtask(sq, sq, sq);
            DevBlock s;
            s.upload(sq);
            for (const KernelDef &k : kAll) expect("random square, one block thrice", k.name, r.run(k.fn, &s.d, &s.d, &s.d), w2);
            // ik and jk one block: the word-at-a-time bitmap intersection,
            // forced (cost 1, any length), at several spreads and register
            // caps and with a dense row, against a different ij too.
            HostCSR sd = random_block(rng, c.ni, c.ni, c.dik, -1, 0, c.ni > 2 ? 1 : -1);
            HostCSR ij2 = random_block(rng, c.ni, c.ni, c.dij, -1, 0, -1);
            DevBlock sdd, ijd;
            sdd.upload(sd);
            ijd.upload(ij2);
            const uint64_t w3 = cpu_subtask(sd, sd, sd), w4 = cpu_subtask(ij2, sd, sd), w5 = cpu_subtask(ij2, sq, sq);
            const char *andcfgs[] = {"wetric_bitmap=256 wetric_bmmin=2 wetric_andcost=1 wetric_andmin=1",
                                     "wetric_bitmap=32 wetric_bmmin=1 wetric_andcost=1 wetric_andmin=1",
                                     "wetric_bitmap=1024 wetric_bmmin=2 wetric_andcost=1 wetric_andmin=1 wetric_spread=4",
                                     "wetric_bitmap=256 wetric_andcost=2 wetric_spread=16",
                                     "wetric_bitmap=256 wetric_andcost=1 wetric_andmin=1 wetric_lb=6",
                                     "wetric_bitmap=256 wetric_bmmin=2 wetric_and4cost=1 wetric_andmin=1",
                                     "wetric_bitmap=256 wetric_bmmin=2 wetric_and4cost=1 wetric_andmin=1 wetric_overlap=0",
                                     "wetric_bitmap=256 wetric_bmmin=2 wetric_and4cost=1 wetric_andmin=1 wetric_narrow=0",
                                     "wetric_bitmap=32 wetric_bmmin=1 wetric_andcost=1 wetric_andmin=1 wetric_narrow=0",
                                     "wetric_bitmap=1024 wetric_bmmin=1 wetric_and4cost=1 wetric_andmin=1 wetric_spread=4",
                                     "wetric_bitmap=512 wetric_and4cost=1 wetric_andcost=1 wetric_andmin=2 wetric_spread=16",
                                     "wetric_bitmap=128 wetric_and4cost=2 wetric_andcost=0 wetric_andmin=1 wetric_lb=6",
                                     // the default rule's ratio and minimum length, so that a prebuilt index serves
                                     "wetric_bitmap=256 wetric_andcost=1 wetric_andmin=1",
                                     "wetric_bitmap=256 wetric_and4cost=1 wetric_andmin=1",
                                     "wetric_bitmap=256 wetric_and4cost=1 wetric_andmin=1 wetric_spread=4",
                                     "wetric_bitmap=256 wetric_and4cost=1 wetric_andcost=1 wetric_andmin=1 wetric_spread=4 wetric_lb=6",
                                     "wetric_bitmap=256 wetric_andcost=1 wetric_andmin=1 wetric_lb=8",
                                     "wetric_bitmap=256 wetric_andcost=1 wetric_and4cost=1 wetric_andmin=1 wetric_skipa=0",
                                     "wetric_bitmap=64 wetric_bmmin=1 wetric_andcost=1 wetric_andmin=1 wetric_skipb=0 wetric_rowcache=0"};
            for (const char *cf : andcfgs) {
                apply_settings(cf);
                char what[200];
                snprintf(what, sizeof what, "random and %s one block thrice %s", c.name, cf);
                expect(what, "wetric", r.run(tg_kernel_wetric, &s.d, &s.d, &s.d), w2);
                snprintf(what, sizeof what, "random and %s dense block thrice %s", c.name, cf);
                expect(what, "wetric", r.run(tg_kernel_wetric, &sdd.d, &sdd.d, &sdd.d), w3);
                snprintf(what, sizeof what, "random and %s ij + dense block twice %s", c.name, cf);
                expect(what, "wetric", r.run(tg_kernel_wetric, &ijd.d, &sdd.d, &sdd.d), w4);
                snprintf(what, sizeof what, "random and %s ij + block twice %s", c.name, cf);
                expect(what, "wetric", r.run(tg_kernel_wetric, &ijd.d, &s.d, &s.d), w5);
                apply_settings("");
            }
            sdd.release();
            ijd.release();
            s.release();
        }
        a.release(); b.release(); d.release();
    }
}

// ---------------------------------------------------------------- bench

struct Variant { const char *kernel; const char *env; };

// Whether env contains one of the '|'-separated parts of pats.
static bool match_any(const char *env, const char *pats) {
    std::string all(pats);
    size_t b = 0;
    while (b <= all.size()) {
        size_t e = all.find('|', b);
        if (e == std::string::npos) e = all.size();
        if (e > b && strstr(env, all.substr(b, e - b).c_str())) return true;
        b = e + 1;
    }
    return false;
}

static void bench(Runner &r, const char *name, const HostCSR &g, int reps, bool cpu_check, int maxP) {
    DevBlock d;
    d.upload(g);
    uint64_t want = 0;
    bool have = false;
    if (cpu_check) { want = cpu_subtask(g, g, g); have = true; }
    printf("graph %s: n=%lld m=%lld maxdeg=%lld%s%llu\n", name, (long long)g.nrows, (long long)g.c.size(),
           (long long)d.d.max_degree, have ? " triangles=" : " (no cpu count) ", (unsigned long long)want);
    const Variant vars[] = {
        {"polak", ""}, {"trix", ""}, {"grouptc", ""},
        {"trust", ""}, {"trust", "trust_warpmax=16"}, {"trust", "trust_warpmax=32"},
        {"trust", "trust_warpmax=64"}, {"trust", "trust_warpmax=128"},
        {"trust", "trust_cta_smem=0"}, {"trust", "trust_cta_smem=16384"}, {"trust", "trust_cta_smem=32768"},
        {"trust", "trust_cta_threads=128"}, {"trust", "trust_cta_threads=512"}, {"trust", "trust_bitmap=0"},
        {"wetric", ""}, {"wetric", "wetric_lb=6"}, {"wetric", "wetric_lb=8"}, {"wetric", "wetric_lb=1"},
        {"wetric", "wetric_spread=4"}, {"wetric", "wetric_spread=8"}, {"wetric", "wetric_spread=16"},
        {"wetric", "wetric_spread=4 wetric_lb=6"}, {"wetric", "wetric_spread=4 wetric_lb=8"},
        {"wetric", "wetric_spread=8 wetric_lb=6"}, {"wetric", "wetric_spread=8 wetric_lb=8"},
        {"wetric", "wetric_spread=16 wetric_lb=6"}, {"wetric", "wetric_spread=16 wetric_lb=8"},
        {"wetric", "wetric_edges=64"},
        {"wetric", "wetric_fillrpw=1"}, {"wetric", "wetric_fillrpw=2"}, {"wetric", "wetric_fillrpw=32"},
        {"wetric", "wetric_bitmap=0"}, {"wetric", "wetric_bitmap=128"}, {"wetric", "wetric_bitmap=512"},
        {"wetric", "wetric_bitmap=1024"}, {"wetric", "wetric_bmmin=2"},
        {"wetric", "wetric_overlap=0"}, {"wetric", "wetric_overlap=0 wetric_fillrpw=32"},
        {"wetric", "wetric_andcost=0 wetric_and4cost=0"}, {"wetric", "wetric_and4cost=0"},
        {"wetric", "wetric_and4cost=0 wetric_andcost=3"}, {"wetric", "wetric_andcost=3"},
        {"wetric", "wetric_and4cost=4"}, {"wetric", "wetric_and4cost=8"}, {"wetric", "wetric_and4cost=11"},
        {"wetric", "wetric_andcost=0 wetric_and4cost=5"}, {"wetric", "wetric_andmin=2"},
        {"wetric", "wetric_andmin=16"}, {"wetric", "wetric_andmin=32"},
        {"wetric", "wetric_erow=0"}, {"wetric", "wetric_skipb=0"}, {"wetric", "wetric_rowcache=0"},
        {"wetric", "wetric_skipa=0"}, {"wetric", "wetric_narrow=0"}, {"wetric", ""},
    };
    // TWT_ONLY=NAME times only that kernel's variants.
    const char *only = getenv("TWT_ONLY");
    uint64_t ref = have ? want : ~0ull;
    const bool quick = getenv("TWT_QUICK") != nullptr; // defaults only
    const char *match = getenv("TWT_MATCH");             // and variants whose settings contain one of "A|B|..."
    for (const Variant &v : vars) {
        if (quick && v.env[0]) continue;
        if (match && v.env[0] && !match_any(v.env, match)) continue;
        if (only && strcmp(only, v.kernel) != 0) continue;
        apply_settings(v.env);
        tg_kernel_fn fn = strcmp(v.kernel, "trust") == 0    ? tg_kernel_trust
                          : strcmp(v.kernel, "wetric") == 0 ? tg_kernel_wetric
                          : strcmp(v.kernel, "polak") == 0  ? tg_kernel_polak
                          : strcmp(v.kernel, "trix") == 0   ? tg_kernel_trix
                                                            : tg_kernel_grouptc;
        uint64_t c0 = r.run(fn, &d.d, &d.d, &d.d); // warm-up
        std::vector<float> t(reps);
        bool same = true;
        for (int i = 0; i < reps; i++) same &= r.run(fn, &d.d, &d.d, &d.d, &t[i]) == c0;
        std::sort(t.begin(), t.end());
        if (ref == ~0ull) ref = c0;
        bool ok = same && c0 == ref;
        if (!ok) failures++; else passes++;
        printf("time %-14s %-8s %-42s median_ms %9.4f min_ms %9.4f count %llu %s\n", name, v.kernel,
               v.env[0] ? v.env : "(auto)", t[reps / 2], t[0], (unsigned long long)c0, ok ? "ok" : "FAIL");
        fflush(stdout);
    }
    apply_settings("");
    d.release();
    if (maxP > 1) check_partitions(r, name, g, ref, maxP, true, maxP);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s check FILE... | random | bench NAME SRC [reps] [maxP]\n", argv[0]);
        return 2;
    }
    Runner r;
    std::string mode = argv[1];
    if (mode == "check") {
        for (int i = 2; i < argc; i++) {
            HostCSR g = read_file(argv[i]);
            uint64_t want = cpu_subtask(g, g, g);
            printf("graph %s: n=%lld m=%lld triangles=%llu\n", argv[i], (long long)g.nrows, (long long)g.c.size(),
                   (unsigned long long)want);
            check_partitions(r, argv[i], g, want, 4);
        }
    } else if (mode == "random") {
        check_random(r);
    } else if (mode == "bench" && argc >= 4) {
        int reps = argc >= 5 ? atoi(argv[4]) : 5;
        int maxP = argc >= 6 ? atoi(argv[5]) : 1;
        std::string src = argv[3];
        HostCSR g = src.rfind("rmat:", 0) == 0 ? make_rmat(atoi(src.c_str() + 5)) : read_file(src.c_str());
        bool cpu = g.c.size() <= 20000000;
        bench(r, argv[2], g, reps, cpu, maxP);
    } else {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
