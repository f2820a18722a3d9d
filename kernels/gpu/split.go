package gpu

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// countRows counts rows [lo, hi) of a subtask that does not fit the
// context whole: rows of IJ and IK are the same I-local space, so the
// subtask restricted to a row range of both, against the whole JK, counts
// exactly the triangles whose first vertex lies in that range, and the
// ranges sum to the subtask's count. A range that does not fit is halved
// (by edges of IJ and IK) until a single row; a single row that does not
// fit is an error giving the bytes it needs. c.mu is held.
func (c *Counter) countRows(ctx context.Context, t kernels.Subtask, lo, hi int64) (kernels.Result, error) {
	return c.countRowsWith(ctx, t, lo, hi, func(part kernels.Subtask, _ int64) (kernels.Result, error) { return c.countWhole(part) })
}

// countRowsWith is countRows with count for the ranges that fit: it gets
// the subtask restricted to rows [first, ...) and first. c.mu is held.
func (c *Counter) countRowsWith(ctx context.Context, t kernels.Subtask, lo, hi int64, count func(part kernels.Subtask, first int64) (kernels.Result, error)) (kernels.Result, error) {
	if err := ctx.Err(); err != nil {
		return kernels.Result{}, err
	}
	if hi-lo <= 1 {
		return kernels.Result{}, c.tooLarge(t, lo)
	}
	// The parts' blocks are cut for this count only: none is uploaded
	// again, so none is remembered or pinned.
	was := c.slots.SetCut(true)
	defer c.slots.SetCut(was)
	mid := splitRows(t, lo, hi)
	var sum kernels.Result
	for _, r := range [2][2]int64{{lo, mid}, {mid, hi}} {
		part := rowRange(t, r[0], r[1])
		if part.IJ.NumEdges() == 0 || part.IK.NumEdges() == 0 {
			continue // no edge of IJ, or no list of IK: nothing to count
		}
		res, err := count(part, r[0])
		if errors.Is(err, ErrOutOfMemory) {
			res, err = c.countRowsWith(ctx, t, r[0], r[1], count)
		}
		if err != nil {
			return kernels.Result{}, err
		}
		sum.Triangles += res.Triangles
		sum.KernelTime += res.KernelTime
	}
	c.splits++
	return sum, nil
}

// splitRows is the row m in (lo, hi) that halves the edges of IJ and IK in
// [lo, hi).
func splitRows(t kernels.Subtask, lo, hi int64) int64 {
	w := func(r int64) uint64 { return t.IJ.Offsets[r] + t.IK.Offsets[r] }
	half := w(lo) + (w(hi)-w(lo))/2
	m := lo + int64(sort.Search(int(hi-lo), func(i int) bool { return w(lo+int64(i)) >= half }))
	return min(max(m, lo+1), hi-1)
}

// rowRange is the subtask restricted to rows [lo, hi) of IJ and IK (the
// same slice when IJ and IK are one block); JK stays whole.
func rowRange(t kernels.Subtask, lo, hi int64) kernels.Subtask {
	ij := sliceRows(t.IJ, lo, hi)
	ik := ij
	if t.IK != t.IJ {
		ik = sliceRows(t.IK, lo, hi)
	}
	return kernels.Subtask{IJ: ij, IK: ik, JK: t.JK}
}

// sliceRows is rows [lo, hi) of b as a block of its own: offsets rebased
// to 0 (a copy), columns shared.
func sliceRows(b *graph.CSR, lo, hi int64) *graph.CSR {
	base := b.Offsets[lo]
	off := make([]uint64, hi-lo+1)
	for i := range off {
		off[i] = b.Offsets[lo+int64(i)] - base
	}
	return &graph.CSR{Offsets: off, Cols: b.Cols[base:b.Offsets[hi]], NCols: b.NCols}
}

// tooLarge is the error for row r of a subtask that does not fit even
// alone with JK. It gives the least memory with which the subtask can be
// counted (LeastBytes).
func (c *Counter) tooLarge(t kernels.Subtask, r int64) error {
	_, limit, _ := c.ctx.MemUsage()
	return fmt.Errorf("gpu: count: %w: subtask (JK %d rows, %d edges; row %d of IJ and IK does not fit with it) needs at least %d bytes of device memory; the limit is %d",
		ErrOutOfMemory, t.JK.NumRows(), t.JK.NumEdges(), r, LeastBytes(t), limit)
}

// LeastBytes is the least context memory with which Count counts t: the
// subtask whole, or, when that is more, every row with edges in both IJ
// and IK alone with the whole JK (the row ranges Count falls back to).
func LeastBytes(t kernels.Subtask) int64 {
	whole := devmem.SubtaskMinBytes([3][2]int64{
		{t.IJ.NumRows(), t.IJ.NumEdges()}, {t.IK.NumRows(), t.IK.NumEdges()}, {t.JK.NumRows(), t.JK.NumEdges()},
	}, [3]bool{false, t.IK == t.IJ, t.JK == t.IJ || t.JK == t.IK})
	var rows int64
	for r := range t.IJ.NumRows() {
		dij, dik := int64(len(t.IJ.Row(r))), int64(len(t.IK.Row(r)))
		if dij == 0 || dik == 0 {
			continue
		}
		rows = max(rows, devmem.SubtaskMinBytes([3][2]int64{{1, dij}, {1, dik}, {t.JK.NumRows(), t.JK.NumEdges()}},
			[3]bool{false, t.IK == t.IJ, false}))
	}
	return min(whole, rows)
}
