/* Plain CPU forward-graph construction and merge counting (see ref.h). */
#include <stdlib.h>
#include <string.h>

#include "ref.h"

int tg_cpu_sort64(uint64_t *keys, uint64_t *tmp, uint64_t n, int bits) {
    uint64_t *src = keys, *dst = tmp;
    static const int digit = 16;
    uint64_t *cnt = calloc((size_t)1 << digit, sizeof(uint64_t));
    if (cnt == NULL) return -1;
    for (int shift = 0; shift < bits; shift += digit) {
        memset(cnt, 0, sizeof(uint64_t) << digit);
        for (uint64_t i = 0; i < n; i++) cnt[(src[i] >> shift) & 0xffff]++;
        uint64_t sum = 0;
        for (size_t d = 0; d < ((size_t)1 << digit); d++) {
            uint64_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++) dst[cnt[(src[i] >> shift) & 0xffff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys) memcpy(keys, src, n * sizeof(uint64_t));
    free(cnt);
    return 0;
}

static int bits_for(uint64_t x) {
    int b = 0;
    while (b < 64 && (x >> b) != 0) b++;
    return b;
}

void tg_cpu_csr_free(tg_cpu_csr *c) {
    free(c->rowptr);
    free(c->cols);
    memset(c, 0, sizeof *c);
}

int32_t tg_cpu_forward(const uint32_t *pairs, uint64_t npairs, uint64_t n, tg_cpu_csr *out, uint32_t *rank_out,
                       uint64_t stats[TG_PREP_NSTATS]) {
    memset(out, 0, sizeof *out);
    for (int i = 0; i < TG_PREP_NSTATS; i++) stats[i] = 0;
    const size_t kn = npairs > n ? npairs : n;
    uint64_t *keys = malloc((kn + 1) * sizeof(uint64_t));
    uint64_t *tmp = malloc((kn + 1) * sizeof(uint64_t));
    uint32_t *deg = calloc(n + 1, sizeof(uint32_t));
    uint32_t *rank = malloc((n + 1) * sizeof(uint32_t));
    uint64_t *nkeys = malloc((n + 1) * sizeof(uint64_t));
    out->rowptr = calloc(n + 1, sizeof(uint64_t));
    if (!keys || !tmp || !deg || !rank || !nkeys || !out->rowptr) {
        free(keys), free(tmp), free(deg), free(rank), free(nkeys);
        tg_cpu_csr_free(out);
        return TG_ERR_OOM;
    }
    int32_t rc = TG_OK;
    uint64_t m = 0, loops = 0;
    for (uint64_t i = 0; i < npairs; i++) {
        uint32_t a = pairs[2 * i], b = pairs[2 * i + 1];
        if (a >= n || b >= n) {
            rc = TG_ERR_INVALID;
            goto done;
        }
        if (a == b) {
            loops++;
            continue;
        }
        if (a > b) {
            uint32_t t = a;
            a = b;
            b = t;
        }
        keys[m++] = ((uint64_t)a << 32) | b;
    }
    const int end_bit = 32 + bits_for(n);
    if (tg_cpu_sort64(keys, tmp, m, end_bit) != 0) {
        rc = TG_ERR_OOM;
        goto done;
    }
    uint64_t u = 0;
    for (uint64_t i = 0; i < m; i++)
        if (i == 0 || keys[i] != keys[i - 1]) keys[u++] = keys[i];
    stats[TG_PREP_VERTICES] = n;
    stats[TG_PREP_INPUT_PAIRS] = npairs;
    stats[TG_PREP_SELF_LOOPS] = loops;
    stats[TG_PREP_EDGES] = u;
    stats[TG_PREP_DUPLICATES] = npairs - loops - u;
    for (uint64_t i = 0; i < u; i++) {
        deg[keys[i] >> 32]++;
        deg[(uint32_t)keys[i]]++;
    }
    for (uint64_t v = 0; v < n; v++) {
        uint64_t d = deg[v];
        stats[TG_PREP_WEDGES] += d * (d ? d - 1 : 0) / 2;
        if (d > stats[TG_PREP_MAX_DEGREE]) stats[TG_PREP_MAX_DEGREE] = d;
        nkeys[v] = (d << 32) | v;
    }
    if (tg_cpu_sort64(nkeys, tmp, n, end_bit) != 0) {
        rc = TG_ERR_OOM;
        goto done;
    }
    for (uint64_t i = 0; i < n; i++) rank[(uint32_t)nkeys[i]] = (uint32_t)i;
    for (uint64_t i = 0; i < u; i++) {
        uint32_t ra = rank[keys[i] >> 32], rb = rank[(uint32_t)keys[i]];
        keys[i] = ra < rb ? ((uint64_t)ra << 32) | rb : ((uint64_t)rb << 32) | ra;
    }
    if (tg_cpu_sort64(keys, tmp, u, end_bit) != 0) {
        rc = TG_ERR_OOM;
        goto done;
    }
    out->cols = malloc((u + 1) * sizeof(uint32_t));
    if (out->cols == NULL) {
        rc = TG_ERR_OOM;
        goto done;
    }
    for (uint64_t i = 0; i < u; i++) {
        out->cols[i] = (uint32_t)keys[i];
        out->rowptr[(keys[i] >> 32) + 1]++;
    }
    for (uint64_t r = 0; r < n; r++) {
        uint64_t d = out->rowptr[r + 1];
        if (d > stats[TG_PREP_MAX_FORWARD]) stats[TG_PREP_MAX_FORWARD] = d;
        out->rowptr[r + 1] += out->rowptr[r];
    }
    out->nrows = (int64_t)n;
    out->ncols = (int64_t)n;
    out->nnz = (int64_t)u;
    if (rank_out) memcpy(rank_out, rank, n * sizeof(uint32_t));
done:
    free(keys), free(tmp), free(deg), free(rank), free(nkeys);
    if (rc != TG_OK) tg_cpu_csr_free(out);
    return rc;
}

uint64_t tg_cpu_count(const tg_cpu_csr *ij, const tg_cpu_csr *ik, const tg_cpu_csr *jk) {
    uint64_t count = 0;
    for (int64_t u = 0; u < ij->nrows; u++) {
        const uint64_t ab = ik->rowptr[u], ae = ik->rowptr[u + 1];
        for (uint64_t e = ij->rowptr[u]; e < ij->rowptr[u + 1]; e++) {
            const uint32_t v = ij->cols[e];
            uint64_t i = ab, j = jk->rowptr[v];
            const uint64_t je = jk->rowptr[v + 1];
            while (i < ae && j < je) {
                const uint32_t x = ik->cols[i], y = jk->cols[j];
                if (x < y) i++;
                else if (x > y) j++;
                else count++, i++, j++;
            }
        }
    }
    return count;
}
