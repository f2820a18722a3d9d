/* How tg_count_rows cuts IJ and IK into row ranges: shared by the CUDA
 * library and the reference library (plain C, header only), so that both
 * account the same device memory for the same subtask and budget. */
#ifndef TG_ROWS_H
#define TG_ROWS_H

#include <stdint.h>

#include "trigrid.h"

/* Bytes tg_ctx_malloc accounts for an allocation of n bytes. */
static inline uint64_t tg_rows_gran(uint64_t n) {
    if (n == 0) n = 16;
    return (n + 255) & ~(uint64_t)255;
}

/* Entries of the edge-row index of nnz edges (tg_edge_rows_len). */
static inline uint64_t tg_rows_erow_len(uint64_t nnz) { return (nnz >> 8) + 2; }

/* The device bytes of one set of row-range buffers sized for rows rows,
 * a columns of ij and b of ik (two_blocks: ik is not ij): offsets and
 * columns of each, and ij's edge-row index. */
static inline uint64_t tg_rows_set_bytes(uint64_t rows, uint64_t a, uint64_t b, int two_blocks) {
    uint64_t x = tg_rows_gran((rows + 1) * 8) + tg_rows_gran((a ? a : 1) * 4) + tg_rows_gran(tg_rows_erow_len(a) * 4);
    if (two_blocks) x += tg_rows_gran((rows + 1) * 8) + tg_rows_gran((b ? b : 1) * 4);
    return x;
}

/* Buffer sets: while the kernel counts one range, the copies of the next
 * TG_ROWS_SETS - 1 ranges may run. */
#define TG_ROWS_SETS 3

/* The bytes of each buffer set (one allocation each) to hold when a call
 * needs need and budget bytes are available for all: an equal share of
 * the budget, so that later calls of a similar budget reuse them. */
static inline uint64_t tg_rows_set_cap(uint64_t need, uint64_t budget) {
    uint64_t share = (budget / TG_ROWS_SETS) & ~(uint64_t)255;
    return share > need ? share : need;
}

/* The weight of rows [0, r): what copying them costs, in bytes. */
static inline uint64_t tg_rows_weight(const uint64_t *ij, const uint64_t *ik, uint64_t r) {
    return ik ? 16 * r + 4 * (ij[r] + ik[r]) : 8 * r + 4 * ij[r];
}

/* Cuts rows [0, nrows) into n ranges of about equal weight: cuts[0] = 0,
 * cuts[n] = nrows, every range non-empty (n <= nrows). The offsets need
 * not be valid: the cuts stay increasing whatever they hold. */
static inline void tg_rows_cut(const uint64_t *ij, const uint64_t *ik, uint64_t nrows, uint64_t n, uint64_t *cuts) {
    const uint64_t total = tg_rows_weight(ij, ik, nrows);
    cuts[0] = 0;
    for (uint64_t c = 1; c < n; c++) {
        const uint64_t want = (uint64_t)((double)total * (double)c / (double)n);
        uint64_t lo = cuts[c - 1] + 1, hi = nrows - (n - c); /* the cut lies in [lo, hi] */
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (tg_rows_weight(ij, ik, mid) >= want) hi = mid;
            else lo = mid + 1;
        }
        cuts[c] = lo;
    }
    cuts[n] = nrows;
}

/* The largest set of buffers the ranges of cuts need, as rows, ij
 * columns and ik columns (each the largest over the ranges), or 0 when an
 * offset range runs backwards or past nnz (a malformed block). */
static inline int tg_rows_need(const uint64_t *ij, const uint64_t *ik, uint64_t n, const uint64_t *cuts,
                               uint64_t *rows, uint64_t *a, uint64_t *b) {
    *rows = *a = *b = 0;
    for (uint64_t c = 0; c < n; c++) {
        const uint64_t lo = cuts[c], hi = cuts[c + 1];
        if (ij[hi] < ij[lo]) return 0;
        if (hi - lo > *rows) *rows = hi - lo;
        if (ij[hi] - ij[lo] > *a) *a = ij[hi] - ij[lo];
        if (ik) {
            if (ik[hi] < ik[lo]) return 0;
            if (ik[hi] - ik[lo] > *b) *b = ik[hi] - ik[lo];
        }
    }
    return 1;
}

/* Device words tg_count_rows keeps: the checks of a range per set (8
 * each) and a count per subtask. */
#define TG_ROWS_CHECK_WORDS (8 * TG_ROWS_SETS + TG_ROWS_MAX_SUBTASKS)

/* Whether a subtask's arrays are malformed on their face (offsets not from
 * 0, columns missing where there are edges). */
static inline int tg_rows_malformed(const tg_rows_subtask *t) {
    if (t->nrows < 0) return 1;
    if (t->nrows == 0) return 0;
    if (t->ij_rowptr == 0 || t->ij_rowptr[0] != 0 || (t->ij_rowptr[t->nrows] > 0 && t->ij_cols == 0)) return 1;
    if (t->ik_rowptr && (t->ik_rowptr[0] != 0 || (t->ik_rowptr[t->nrows] > 0 && t->ik_cols == 0))) return 1;
    return 0;
}

/* Whether a subtask has nothing to count (no row, no edge in ij or ik). */
static inline int tg_rows_empty(const tg_rows_subtask *t) {
    return t->nrows == 0 || t->ij_rowptr[t->nrows] == 0 || (t->ik_rowptr && t->ik_rowptr[t->nrows] == 0);
}

/* The most ranges tg_count_rows cuts a subtask into. */
#define TG_ROWS_MAX_PARTS 4096

/* Chooses the ranges: the fewest (at least two when there are two rows,
 * so that a copy runs beside a kernel) whose TG_ROWS_SETS sets of buffers fit in
 * budget bytes, doubling from the estimate. cuts must hold
 * TG_ROWS_MAX_PARTS + 1 entries. Returns the number of ranges, 0 when
 * even the most do not fit, -1 for a malformed block. */
static inline int64_t tg_rows_plan(const uint64_t *ij, const uint64_t *ik, uint64_t nrows, uint64_t budget,
                                   uint64_t *cuts, uint64_t *rows, uint64_t *a, uint64_t *b) {
    if (nrows == 0) return 0;
    const uint64_t whole = tg_rows_set_bytes(nrows, ij[nrows], ik ? ik[nrows] : 0, ik != 0);
    uint64_t n = budget > 0 ? TG_ROWS_SETS * whole / budget + 1 : TG_ROWS_MAX_PARTS;
    if (n < 2) n = 2;
    for (;;) {
        if (n > nrows) n = nrows;
        if (n > TG_ROWS_MAX_PARTS) n = TG_ROWS_MAX_PARTS;
        tg_rows_cut(ij, ik, nrows, n, cuts);
        if (!tg_rows_need(ij, ik, n, cuts, rows, a, b)) return -1;
        if (TG_ROWS_SETS * tg_rows_set_bytes(*rows, *a, *b, ik != 0) <= budget) return (int64_t)n;
        if (n == nrows || n == TG_ROWS_MAX_PARTS) return 0;
        n *= 2;
    }
}

#endif
