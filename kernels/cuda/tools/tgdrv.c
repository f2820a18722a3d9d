/* tgdrv: checks and times a trigrid library without the Go side.
 *
 *   tgdrv [-lib PATH] [-runs N] [-p P] [-local] FILE...
 *
 * FILE is a text edge list (SNAP style: two ids a line, '#' or '%'
 * comments) or, when it ends in ".u32", raw little-endian uint32 pairs. For
 * each file it compacts ids, builds the forward graph on the CPU
 * (ref/cpu.c) and counts it there, then on the library: tg_preprocess
 * (compared entry by entry with the CPU forward graph), every kernel on the
 * whole graph (median of N runs after a warm-up), and every kernel on the
 * P x P hash partition (P^3 subtasks, blocks in distinct slots). Any
 * mismatch or error makes the exit status 1. With -local it also runs
 * tg_count_local with every kernel that has a per-vertex mode, per vertex
 * and per edge, on the whole graph (compared entry by entry with a CPU
 * count) and on the P x P hash partition (per-vertex counts mapped back to
 * global ids and compared; per-edge support summed to 3 x triangles). */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../ref/ref.h"

typedef int32_t (*abi_fn)(void);
typedef int32_t (*devcount_fn)(int32_t *, char *, uint64_t);
typedef int32_t (*devinfo_fn)(int32_t, char *, uint64_t, uint64_t *, uint64_t *, int32_t *, int32_t *, int32_t *,
                              char *, uint64_t);
typedef int32_t (*create_fn)(int32_t, uint64_t, tg_ctx **, char *, uint64_t);
typedef void (*destroy_fn)(tg_ctx *);
typedef int32_t (*load_fn)(tg_ctx *, int32_t, const uint64_t *, int64_t, const uint32_t *, int64_t, int64_t, int32_t,
                           char *, uint64_t);
typedef int32_t (*count_fn)(tg_ctx *, int32_t, int32_t, int32_t, int32_t, uint64_t *, double *, char *, uint64_t);
typedef int32_t (*local_fn)(tg_ctx *, int32_t, int32_t, int32_t, int32_t, const tg_local_out *, uint64_t *, double *,
                            char *, uint64_t);
typedef int32_t (*prep_fn)(tg_ctx *, int32_t, const uint32_t *, uint64_t, uint64_t, uint64_t *, uint32_t *,
                           uint32_t *, uint64_t *, double *, char *, uint64_t);

static struct {
    abi_fn abi;
    devcount_fn devcount;
    devinfo_fn devinfo;
    create_fn create;
    destroy_fn destroy;
    load_fn load;
    count_fn count;
    prep_fn prep;
    local_fn local;
} L;

static int with_local;

static const char *kernel_names[TG_KERNEL_COUNT] = {"", "polak", "trix", "grouptc", "trust", "wetric"};
static char err[1024];

static void *sym(void *h, const char *name) {
    void *p = dlsym(h, name);
    if (p == NULL) {
        fprintf(stderr, "tgdrv: symbol %s: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Reads pairs of raw ids; returns the count, *ids gets 2*count values. */
static uint64_t read_pairs(const char *path, uint64_t **ids) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    uint64_t cap = 1 << 20, n = 0;
    uint64_t *a = malloc(cap * sizeof(uint64_t));
    size_t len = strlen(path);
    if (len > 4 && strcmp(path + len - 4, ".u32") == 0) {
        uint32_t buf[2];
        while (fread(buf, sizeof(uint32_t), 2, f) == 2) {
            if (n + 2 > cap) a = realloc(a, (cap *= 2) * sizeof(uint64_t));
            a[n++] = buf[0];
            a[n++] = buf[1];
        }
    } else {
        char line[4096];
        while (fgets(line, sizeof line, f)) {
            if (line[0] == '#' || line[0] == '%') continue;
            char *p = line, *q;
            unsigned long long x = strtoull(p, &q, 10);
            if (q == p) continue;
            p = q;
            unsigned long long y = strtoull(p, &q, 10);
            if (q == p) continue;
            if (n + 2 > cap) a = realloc(a, (cap *= 2) * sizeof(uint64_t));
            a[n++] = x;
            a[n++] = y;
        }
    }
    fclose(f);
    *ids = a;
    return n / 2;
}

/* Compact ids to 0..n-1 in ascending order of the original ids. */
static uint32_t *compact(const uint64_t *ids, uint64_t npairs, uint64_t *n_out) {
    uint64_t m = 2 * npairs;
    uint64_t *s = malloc((m + 1) * sizeof(uint64_t)), *t = malloc((m + 1) * sizeof(uint64_t));
    memcpy(s, ids, m * sizeof(uint64_t));
    tg_cpu_sort64(s, t, m, 64);
    uint64_t n = 0;
    for (uint64_t i = 0; i < m; i++)
        if (i == 0 || s[i] != s[i - 1]) s[n++] = s[i];
    uint32_t *out = malloc((m + 1) * sizeof(uint32_t));
    for (uint64_t i = 0; i < m; i++) {
        uint64_t lo = 0, hi = n;
        while (lo < hi) {
            uint64_t mid = (lo + hi) / 2;
            if (s[mid] < ids[i]) lo = mid + 1;
            else hi = mid;
        }
        out[i] = (uint32_t)lo;
    }
    free(s);
    free(t);
    *n_out = n;
    return out;
}

/* The CPU count split over threads by rows (each thread counts a strided
 * set of row ranges through tg_cpu_count on a row-window view). */
typedef struct {
    const tg_cpu_csr *g;
    int64_t lo, hi;
    uint64_t count;
} cpu_job;

static void *cpu_worker(void *arg) {
    cpu_job *j = arg;
    tg_cpu_csr v = *j->g;
    v.rowptr = j->g->rowptr + j->lo;
    v.nrows = j->hi - j->lo;
    /* ij = rows lo..hi of g; ik must share ij's row space: the same view. */
    tg_cpu_csr ij = v, ik = v;
    j->count = tg_cpu_count(&ij, &ik, j->g);
    return NULL;
}

static uint64_t cpu_count_parallel(const tg_cpu_csr *g, int threads) {
    enum { PIECES = 256 };
    cpu_job jobs[PIECES];
    pthread_t tid[PIECES];
    uint64_t total = 0;
    for (int base = 0; base < PIECES; base += threads) {
        int k = 0;
        for (; k < threads && base + k < PIECES; k++) {
            cpu_job *j = &jobs[base + k];
            j->g = g;
            j->lo = g->nrows * (base + k) / PIECES;
            j->hi = g->nrows * (base + k + 1) / PIECES;
            pthread_create(&tid[base + k], NULL, cpu_worker, j);
        }
        for (int i = 0; i < k; i++) {
            pthread_join(tid[base + i], NULL);
            total += jobs[base + i].count;
        }
    }
    return total;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Hash block B[I][J] of the forward graph g: rows u % P == I (local u / P),
 * columns v % P == J (local v / P). */
static tg_cpu_csr hash_block(const tg_cpu_csr *g, int P, int I, int J) {
    tg_cpu_csr b = {0};
    b.nrows = (g->nrows - I + P - 1) / P;
    b.ncols = (g->ncols - J + P - 1) / P;
    if (b.nrows < 0) b.nrows = 0;
    if (b.ncols < 0) b.ncols = 0;
    b.rowptr = calloc((size_t)b.nrows + 1, sizeof(uint64_t));
    b.cols = malloc(((size_t)g->nnz + 1) * sizeof(uint32_t));
    for (int64_t lr = 0; lr < b.nrows; lr++) {
        int64_t u = lr * P + I;
        for (uint64_t k = g->rowptr[u]; k < g->rowptr[u + 1]; k++)
            if ((int)(g->cols[k] % P) == J) b.cols[b.nnz++] = g->cols[k] / P;
        b.rowptr[lr + 1] = (uint64_t)b.nnz;
    }
    return b;
}

/* Per-vertex and per-edge counts of forward graph g on the CPU (the merge
 * of ref/cpu.c, counting each common element where it is found). */
static void cpu_local(const tg_cpu_csr *g, uint64_t *vert, uint64_t *edge) {
    for (int64_t u = 0; u < g->nrows; u++) {
        for (uint64_t e = g->rowptr[u]; e < g->rowptr[u + 1]; e++) {
            const uint32_t v = g->cols[e];
            uint64_t i = g->rowptr[u], j = g->rowptr[v];
            const uint64_t ie = g->rowptr[u + 1], je = g->rowptr[v + 1];
            while (i < ie && j < je) {
                if (g->cols[i] < g->cols[j]) {
                    i++;
                } else if (g->cols[i] > g->cols[j]) {
                    j++;
                } else {
                    vert[u]++, vert[v]++, vert[g->cols[i]]++;
                    edge[e]++, edge[i]++, edge[j]++;
                    i++, j++;
                }
            }
        }
    }
}

/* tg_count_local on slot 1 (the whole graph) and on the hash blocks in
 * slots 2.. (pslots), per vertex and per edge, with each kernel that has a
 * per-vertex mode. Returns 1 on any error or difference. */
static int check_local(tg_ctx *ctx, const tg_cpu_csr *g, uint64_t want, int P, int pslots, const tg_cpu_csr *blk) {
    const uint64_t n = (uint64_t)g->nrows, m = (uint64_t)g->nnz;
    uint64_t *wv = calloc(n + 1, 8), *we = calloc(m + 1, 8), *v = calloc(n + 1, 8), *e = calloc(m + 1, 8);
    uint64_t *bv[3], *be[3];
    for (int r = 0; r < 3; r++) bv[r] = calloc(n + 1, 8), be[r] = calloc(m + 1, 8);
    cpu_local(g, wv, we);
    int bad = 0;
    const int ks[2] = {TG_KERNEL_POLAK, TG_KERNEL_WETRIC};
    for (int ki = 0; ki < 2; ki++) {
        const int k = ks[ki];
        for (int pe = 0; pe < 2; pe++) {
            memset(v, 0, (n + 1) * 8), memset(e, 0, (m + 1) * 8);
            tg_local_out o = {v, v, v, pe ? e : NULL, pe ? e : NULL, pe ? e : NULL};
            uint64_t got = 0;
            double ms = 0;
            int rc = L.local(ctx, k, 1, 1, 1, &o, &got, &ms, err, sizeof err);
            int same = rc == TG_OK && got == want && memcmp(v, wv, n * 8) == 0 && (!pe || memcmp(e, we, m * 8) == 0);
            /* P x P hash subtasks: vertex counts back in global ids. */
            uint64_t psum = 0, esum = 0;
            int pok = 1;
            memset(v, 0, (n + 1) * 8);
            for (int I = 0; pslots && I < P; I++)
                for (int J = 0; J < P; J++)
                    for (int K = 0; K < P; K++) {
                        const tg_cpu_csr *ij = &blk[I * P + J], *ik = &blk[I * P + K], *jk = &blk[J * P + K];
                        for (int r = 0; r < 3; r++) memset(bv[r], 0, (n + 1) * 8), memset(be[r], 0, (m + 1) * 8);
                        tg_local_out b = {bv[0], bv[1], bv[2], pe ? be[0] : NULL, pe ? be[1] : NULL, pe ? be[2] : NULL};
                        uint64_t c = 0;
                        double x = 0;
                        if (L.local(ctx, k, 2 + I * P + J, 2 + I * P + K, 2 + J * P + K, &b, &c, &x, err, sizeof err) !=
                            TG_OK) {
                            printf("  %-8s local subtask (%d,%d,%d): %s\n", kernel_names[k], I, J, K, err);
                            pok = 0;
                        }
                        psum += c;
                        for (int64_t x2 = 0; x2 < ij->nrows; x2++) v[(uint64_t)x2 * P + I] += bv[0][x2];
                        for (int64_t x2 = 0; x2 < jk->nrows; x2++) v[(uint64_t)x2 * P + J] += bv[1][x2];
                        for (int64_t x2 = 0; x2 < ik->ncols; x2++) v[(uint64_t)x2 * P + K] += bv[2][x2];
                        for (int64_t x2 = 0; pe && x2 < ij->nnz; x2++) esum += be[0][x2];
                        for (int64_t x2 = 0; pe && x2 < ik->nnz; x2++) esum += be[1][x2];
                        for (int64_t x2 = 0; pe && x2 < jk->nnz; x2++) esum += be[2][x2];
                    }
            if (pslots) pok = pok && psum == want && memcmp(v, wv, n * 8) == 0 && (!pe || esum == 3 * want);
            printf("  %-8s per %-6s whole %s (%.3f ms)", kernel_names[k], pe ? "edge" : "vertex",
                   same ? "ok" : "WRONG", ms);
            if (rc != TG_OK) printf(" [%d: %s]", rc, err);
            if (pslots) printf("  | P=%d hash: %s", P, pok ? "ok" : "WRONG");
            printf("\n");
            if (!same || !pok) bad = 1;
        }
    }
    free(wv), free(we), free(v), free(e);
    for (int r = 0; r < 3; r++) free(bv[r]), free(be[r]);
    return bad;
}

static int run_file(const char *path, int runs, int P) {
    uint64_t *ids;
    double t0 = now_ms();
    uint64_t np = read_pairs(path, &ids);
    uint64_t n;
    uint32_t *pairs = compact(ids, np, &n);
    free(ids);
    tg_cpu_csr g;
    uint64_t st[TG_PREP_NSTATS];
    if (tg_cpu_forward(pairs, np, n, &g, NULL, st) != TG_OK) {
        fprintf(stderr, "tgdrv: %s: cpu forward failed\n", path);
        return 1;
    }
    double t1 = now_ms();
    uint64_t want = cpu_count_parallel(&g, 16);
    double t2 = now_ms();
    printf("%s: n=%llu pairs=%llu edges=%llu loops=%llu maxdeg=%llu maxfwd=%llu triangles=%llu (read+cpu build %.0f "
           "ms, cpu count %.1f ms)\n",
           path, (unsigned long long)n, (unsigned long long)np, (unsigned long long)st[TG_PREP_EDGES],
           (unsigned long long)st[TG_PREP_SELF_LOOPS], (unsigned long long)st[TG_PREP_MAX_DEGREE],
           (unsigned long long)st[TG_PREP_MAX_FORWARD], (unsigned long long)want, t1 - t0, t2 - t1);
    int bad = 0;
    tg_ctx *ctx;
    if (L.create(0, 0, &ctx, err, sizeof err) != TG_OK) {
        fprintf(stderr, "tgdrv: ctx: %s\n", err);
        return 1;
    }
    /* GPU preprocessing into slot 0, compared with the CPU forward graph. */
    uint64_t *rp = malloc((n + 1) * sizeof(uint64_t));
    uint32_t *cl = malloc((np + 1) * sizeof(uint32_t));
    uint64_t gst[TG_PREP_NSTATS];
    double pms = 0;
    for (int r = 0; r < 2; r++) {
        if (L.prep(ctx, 0, pairs, np, n, rp, cl, NULL, gst, &pms, err, sizeof err) != TG_OK) {
            fprintf(stderr, "tgdrv: preprocess: %s\n", err);
            bad = 1;
            break;
        }
    }
    if (!bad) {
        int same = memcmp(rp, g.rowptr, (n + 1) * 8) == 0 && memcmp(cl, g.cols, (size_t)g.nnz * 4) == 0 &&
                   memcmp(gst, st, sizeof st) == 0;
        printf("  preprocess: %.3f ms, forward graph %s\n", pms, same ? "identical to CPU" : "DIFFERS from CPU");
        if (!same) bad = 1;
    }
    free(rp);
    free(cl);
    if (L.load(ctx, 1, g.rowptr, g.nrows, g.cols, g.nnz, g.ncols, 0, err, sizeof err) != TG_OK) {
        fprintf(stderr, "tgdrv: load: %s\n", err);
        L.destroy(ctx);
        return 1;
    }
    /* P x P hash blocks in slots 2.. */
    tg_cpu_csr *blk = calloc((size_t)P * P, sizeof(tg_cpu_csr));
    int pslots = P > 1 && 2 + P * P <= TG_MAX_SLOTS;
    for (int I = 0; pslots && I < P; I++)
        for (int J = 0; J < P; J++) {
            blk[I * P + J] = hash_block(&g, P, I, J);
            tg_cpu_csr *b = &blk[I * P + J];
            if (L.load(ctx, 2 + I * P + J, b->rowptr, b->nrows, b->cols, b->nnz, b->ncols, 0, err, sizeof err) !=
                TG_OK) {
                fprintf(stderr, "tgdrv: load block (%d,%d): %s\n", I, J, err);
                bad = 1;
            }
        }
    double *ms = malloc(sizeof(double) * (runs > 0 ? runs : 1));
    for (int k = TG_KERNEL_POLAK; k < TG_KERNEL_COUNT; k++) {
        uint64_t got = 0;
        int rc = TG_OK;
        for (int slot = 0; slot < 2 && rc == TG_OK; slot++) {
            double x;
            rc = L.count(ctx, k, slot, slot, slot, &got, &x, err, sizeof err); /* warm-up */
            if (rc == TG_OK && got != want) {
                printf("  %-8s slot %d: WRONG %llu, want %llu\n", kernel_names[k], slot, (unsigned long long)got,
                       (unsigned long long)want);
                bad = 1;
            }
        }
        if (rc == TG_ERR_NOT_BUILT) {
            printf("  %-8s not built\n", kernel_names[k]);
            continue;
        }
        if (rc != TG_OK) {
            printf("  %-8s ERROR %d: %s\n", kernel_names[k], rc, err);
            bad = 1;
            continue;
        }
        for (int r = 0; r < runs; r++) {
            if (L.count(ctx, k, 0, 0, 0, &got, &ms[r], err, sizeof err) != TG_OK || got != want) {
                printf("  %-8s run %d: ERROR or wrong (%llu): %s\n", kernel_names[k], r, (unsigned long long)got, err);
                bad = 1;
                ms[r] = 0;
            }
        }
        qsort(ms, (size_t)runs, sizeof(double), cmp_double);
        uint64_t psum = 0;
        double pms_sum = 0;
        int perr = 0;
        for (int I = 0; pslots && I < P; I++)
            for (int J = 0; J < P; J++)
                for (int K = 0; K < P; K++) {
                    uint64_t c = 0;
                    double x = 0;
                    if (L.count(ctx, k, 2 + I * P + J, 2 + I * P + K, 2 + J * P + K, &c, &x, err, sizeof err) !=
                        TG_OK) {
                        printf("  %-8s subtask (%d,%d,%d): %s\n", kernel_names[k], I, J, K, err);
                        perr = 1;
                    }
                    psum += c;
                    pms_sum += x;
                }
        if (pslots && (perr || psum != want)) bad = 1;
        printf("  %-8s median %9.3f ms  min %9.3f  max %9.3f  (%d runs)  count %llu ok", kernel_names[k],
               runs ? ms[runs / 2] : 0, runs ? ms[0] : 0,
               runs ? ms[runs - 1] : 0, runs, (unsigned long long)want);
        if (pslots)
            printf("  | P=%d hash: %s (%.3f ms)", P, psum == want && !perr ? "ok" : "WRONG", pms_sum);
        printf("\n");
    }
    free(ms);
    if (with_local) bad |= check_local(ctx, &g, want, P, pslots, blk);
    for (int i = 0; pslots && i < P * P; i++) tg_cpu_csr_free(&blk[i]);
    free(blk);
    L.destroy(ctx);
    tg_cpu_csr_free(&g);
    free(pairs);
    return bad;
}

int main(int argc, char **argv) {
    const char *lib = "./libtrigrid_cuda.so";
    int runs = 5, P = 2, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-lib") && i + 1 < argc) lib = argv[++i];
        else if (!strcmp(argv[i], "-runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) P = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-local")) with_local = 1;
        else {
            fprintf(stderr, "usage: tgdrv [-lib PATH] [-runs N] [-p P] [-local] FILE...\n");
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    if (P < 1) P = 1;
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "tgdrv: %s\n", dlerror());
        return 2;
    }
    L.abi = (abi_fn)sym(h, "tg_abi_version");
    L.devcount = (devcount_fn)sym(h, "tg_device_count");
    L.devinfo = (devinfo_fn)sym(h, "tg_device_info");
    L.create = (create_fn)sym(h, "tg_ctx_create");
    L.destroy = (destroy_fn)sym(h, "tg_ctx_destroy");
    L.load = (load_fn)sym(h, "tg_load_block");
    L.count = (count_fn)sym(h, "tg_count");
    L.prep = (prep_fn)sym(h, "tg_preprocess");
    L.local = (local_fn)sym(h, "tg_count_local");
    if (L.abi() != TG_ABI_VERSION) {
        fprintf(stderr, "tgdrv: %s has ABI %d, want %d\n", lib, L.abi(), TG_ABI_VERSION);
        return 2;
    }
    int32_t nd = 0;
    if (L.devcount(&nd, err, sizeof err) != TG_OK || nd < 1) {
        fprintf(stderr, "tgdrv: no device (%s)\n", err);
        return 2;
    }
    char name[256];
    uint64_t total = 0, freeb = 0;
    int32_t sms = 0, ma = 0, mi = 0;
    L.devinfo(0, name, sizeof name, &total, &freeb, &sms, &ma, &mi, err, sizeof err);
    printf("device 0: %s, %.1f GiB, %d SMs, cc %d.%d\n", name, total / 1073741824.0, sms, ma, mi);
    int bad = 0;
    for (; i < argc; i++) bad |= run_file(argv[i], runs, P);
    printf(bad ? "FAIL\n" : "PASS\n");
    return bad;
}
