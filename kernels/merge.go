package kernels

import (
	"context"
	"fmt"
)

// The merge kernel: for every edge (u, v) of IJ, a sorted-merge
// intersection of IK.Row(u) and JK.Row(v) (Polak's edge-parallel merge,
// GAP tc.cc's inner loop). When one list is gallopRatio times longer than
// the other, each element of the short list is found in the long one by
// binary search instead, bounded below by the previous hit, so a hub's list
// costs O(short * log long) instead of O(long).
//
// Preconditions: rows are sorted and duplicate-free (graph.CSR's
// invariants); IK and JK columns share the K-local space, IJ columns index
// JK rows. No forward orientation is assumed: the kernel computes the
// Subtask definition literally, so it is exact for any valid views.

// gallopRatio is the length ratio from which binary search replaces the
// linear merge. It is a round figure near log2 of typical hub lists (a
// search costs about that many steps per element), not a tuned constant.
const gallopRatio = 32

type mergeCounter struct{ opts CPUOptions }

func (m *mergeCounter) Name() string { return "merge" }

func (m *mergeCounter) Count(ctx context.Context, t Subtask) (Result, error) {
	if err := checkSubtask(t); err != nil {
		return Result{}, fmt.Errorf("kernels: merge: %w", err)
	}
	if isEmpty(t) {
		return Result{}, ctx.Err()
	}
	off, clip := clipOffset(t)
	return runParallel(ctx, "merge", t.IJ.NumEdges(), m.opts.Workers, m.opts.Progress,
		func() rangeCounter { return mergeWorker{t: t, off: off, clip: clip} })
}

// mergeWorker intersects, with clip (Subtask.Clip), only the part of u's
// list from v's clip start on.
type mergeWorker struct {
	t    Subtask
	off  int64
	clip bool
}

func (w mergeWorker) countRange(lo, hi uint64) (n uint64) {
	ij, ik, jk := w.t.IJ, w.t.IK, w.t.JK
	rows := ij.NumRows()
	for u := firstRow(ij, lo); u < rows && ij.Offsets[u] < hi; u++ {
		a := ik.Row(u)
		if len(a) == 0 {
			continue
		}
		vs := ij.Cols[max(lo, ij.Offsets[u]):min(hi, ij.Offsets[u+1])]
		for i, v := range vs {
			prefetchRows(jk, vs, i)
			if w.clip {
				// vs rises, so the clip start only moves forward along
				// u's list: a gallop from the last one per edge.
				if a = skipBelow(a, int64(v)+w.off); len(a) == 0 {
					break
				}
			}
			n += intersectCount(a, jk.Row(int64(v)))
		}
	}
	return n
}

// intersectCount returns |a ∩ b| for sorted, duplicate-free lists.
func intersectCount(a, b []uint32) uint64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	// Trim each list to start at the other's first element: in a forward
	// graph v's list lies above v while u's list holds v, so this skips the
	// part of u's list up to v without assuming orientation.
	if a[0] < b[0] {
		a = a[lowerBound(a, b[0]):]
	} else if b[0] < a[0] {
		b = b[lowerBound(b, a[0]):]
	}
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b) > gallopRatio*len(a) {
		return searchCount(a, b)
	}
	return mergeCount(a, b)
}

// mergeCount is the linear merge. Both cursors advance by flag arithmetic
// (b2i compiles to SETcc) instead of a branch on which list is behind,
// which a merge of unrelated ids mispredicts about half the time.
func mergeCount(a, b []uint32) (n uint64) {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		n += uint64(b2i(x == y))
		i += b2i(x <= y)
		j += b2i(y <= x)
	}
	return n
}

func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// searchCount finds each element of the short list a in the long list b by
// binary search, each search starting where the previous one ended.
func searchCount(a, b []uint32) (n uint64) {
	for _, x := range a {
		k := lowerBound(b, x)
		if k == len(b) {
			break
		}
		if b[k] == x {
			n++
			k++
		}
		b = b[k:]
	}
	return n
}

// lowerBound returns the first index of s whose value is >= x.
func lowerBound(s []uint32, x uint32) int {
	lo, hi := 0, len(s)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s[mid] < x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
