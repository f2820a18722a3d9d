/* CPU building blocks shared by the reference library (ref.c) and the
 * driver (tools/tgdrv.c): the forward-graph construction and an exact merge
 * count, written plainly so that they are easy to trust. */
#ifndef TG_REF_H
#define TG_REF_H

#include <stdint.h>

#include "trigrid.h"

typedef struct {
    uint64_t *rowptr; /* nrows + 1 */
    uint32_t *cols;   /* nnz */
    int64_t nrows, nnz, ncols;
} tg_cpu_csr;

/* Builds the forward CSR of compact-id pairs exactly as tg_preprocess
 * specifies: drop loops and duplicates, rank by (undirected degree, id),
 * orient low -> high rank. rank (n entries) may be NULL. Returns TG_OK,
 * TG_ERR_INVALID (an id >= n) or TG_ERR_OOM (host memory). */
int32_t tg_cpu_forward(const uint32_t *pairs, uint64_t npairs, uint64_t n, tg_cpu_csr *out, uint32_t *rank,
                       uint64_t stats[TG_PREP_NSTATS]);

/* For every edge (u, v) of ij, |ik.row(u) ∩ jk.row(v)| by merging. */
uint64_t tg_cpu_count(const tg_cpu_csr *ij, const tg_cpu_csr *ik, const tg_cpu_csr *jk);

/* Sorts keys in place on their low `bits` bits (LSD radix); tmp holds n.
 * Returns 0, or -1 when out of host memory. */
int tg_cpu_sort64(uint64_t *keys, uint64_t *tmp, uint64_t n, int bits);

void tg_cpu_csr_free(tg_cpu_csr *c);

#endif
