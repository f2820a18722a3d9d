package kernels

import (
	"unsafe"

	"github.com/trigrid/trigrid/graph"
)

// The tail path of hashcol. An edge (u, v) can only close triangles with
// the elements of u's list in IK from v's clip on (Subtask.Clip): in a
// forward graph the rest lie at or below v, under all of JK.Row(v). The
// transpose then stores, per edge, the span (clip start, end of u's row)
// of IK.Cols to probe, and a probe needs neither u's offsets nor a binary
// search: one random access per edge instead of three or four dependent
// ones, which is what the count waits on.
//
// The clip start is found in u's row order: IJ.Row(u) is sorted by v, so
// the start only moves forward along IK.Row(u) (a gallop from the previous
// one, no search over the whole row per edge). When IK is IJ itself with
// offset 1 (the whole graph, or (I, J, J) of a forward graph) the start is
// simply the edge's own position plus one. A subtask without Clip whose IK
// is IJ and whose JK rows lie above their own ids gets that clip
// implicitly: it drops nothing there.

// tailSpan packs the probe span [start, end) of IK.Cols into one word; it
// needs IK to have fewer than 2^32 edges.
func tailSpan(start, end uint64) uint64 { return end<<32 | start }

// maxClipOffset bounds |TailOffset|: beyond it every K-local id (below
// 2^32) qualifies, or none, and the bound keeps v + offset from overflowing.
const maxClipOffset = 1 << 33

// clipOffset returns t's effective clip offset, if it has one.
func clipOffset(t Subtask) (int64, bool) {
	if !t.Clip {
		return 0, false
	}
	return min(max(t.TailOffset, -maxClipOffset), maxClipOffset), true
}

// tailOffset is clipOffset plus the implicit clip of a subtask whose IK is
// IJ and whose JK is upper (every column above its row id). ok is false
// when hashcol cannot take its tail path.
func tailOffset(t Subtask) (off int64, ok bool) {
	if t.IK.NumEdges() >= 1<<32 {
		return 0, false
	}
	if off, ok := clipOffset(t); ok {
		return off, true
	}
	if t.IJ == t.IK && isUpper(t.JK) {
		return 1, true
	}
	return 0, false
}

// isUpper reports whether every column of c exceeds its row id, reading
// only each row's first column (rows are sorted).
func isUpper(c *graph.CSR) bool {
	for r := range c.NumRows() {
		if lo := c.Offsets[r]; lo < c.Offsets[r+1] && int64(c.Cols[lo]) <= r {
			return false
		}
	}
	return true
}

// skipBelow returns the suffix of the sorted list s whose elements are at
// least thr. It gallops from the front, so a caller whose thresholds rise
// along one list pays for the distance moved, not for the list's length.
func skipBelow(s []uint32, thr int64) []uint32 {
	if len(s) == 0 || int64(s[0]) >= thr {
		return s
	}
	if int64(s[len(s)-1]) < thr {
		return s[len(s):]
	}
	x := uint32(thr) // s[0] < thr <= s[len-1] < 2^32
	lo, hi := 0, 1   // s[lo] < x; the answer is in (lo, hi]
	for hi < len(s) && s[hi] < x {
		lo, hi = hi, 2*hi+1
	}
	hi = min(hi, len(s)-1)
	return s[lo+1+lowerBound(s[lo+1:hi+1], x):]
}

// tailSpans is the transpose of IJ holding, per edge (u, v), the span of
// IK.Row(u) from v's clip start (see tailOffset) to the row's end.
func tailSpans(t Subtask, off int64, workers int) (offsets, spans []uint64) {
	ij, ik := t.IJ, t.IK
	if ij == ik && off == 1 {
		return transposeWith(ij, workers, func() func(u int64, p uint64) uint64 {
			return func(u int64, p uint64) uint64 { return tailSpan(p+1, ij.Offsets[u+1]) }
		})
	}
	return transposeWith(ij, workers, func() func(u int64, p uint64) uint64 {
		// Each transpose worker walks its rows in order, so the clip start
		// of one edge is where the search for the next begins.
		cur, rest, end := int64(-1), []uint32(nil), uint64(0)
		return func(u int64, p uint64) uint64 {
			if u != cur {
				cur, rest, end = u, ik.Row(u), ik.Offsets[u+1]
			}
			rest = skipBelow(rest, int64(ij.Cols[p])+off)
			return tailSpan(end-uint64(len(rest)), end)
		}
	})
}

// colOrder is IJ's transpose by edge position: offsets gives, for each
// J-local v, the range of v's edges (u, v) in column order, u ascending,
// and at the column-order index of each edge at its position in IJ.Cols.
// It depends on IJ only, so the subtasks (I, J, K) of all K share it.
type colOrder struct {
	ij      *graph.CSR
	cols    *uint32 // IJ.Cols' array when built: a CSR is never changed in place, but a stale order would count wrong
	offsets []uint64
	at      []uint32
}

func newColOrder(ij *graph.CSR, workers int) colOrder {
	offsets, pos := transposeWith(ij, workers, func() func(u int64, p uint64) uint32 {
		return func(_ int64, p uint64) uint32 { return uint32(p) }
	})
	at := make([]uint32, len(pos))
	n := len(pos)
	workers = max(1, min(workers, n/(1<<16)))
	parallel(workers, func(w int) {
		for q := n * w / workers; q < n*(w+1)/workers; q++ {
			at[pos[q]] = uint32(q)
		}
	})
	return colOrder{ij: ij, cols: unsafe.SliceData(ij.Cols), offsets: offsets, at: at}
}

// holds reports whether o is ij's order.
func (o *colOrder) holds(ij *graph.CSR) bool {
	return o.ij == ij && o.cols == unsafe.SliceData(ij.Cols) && len(o.at) == len(ij.Cols)
}

// rowSpans writes the tail span of every IJ edge (u, v), the part of
// IK.Row(u) from v's clip start on, into spans at the edge's column-order
// index at[p]. The clip starts are found in row order, where they only
// move forward along u's list; the spans are stored in column order, the
// order the count reads them in, because a scattered store holds up the
// loop less than a scattered load in the count
// (docs/decisions/2026-11-21-cpu-kernel-choice.md). Workers take contiguous,
// edge-balanced ranges of rows.
func rowSpans(t Subtask, off int64, workers int, at []uint32, spans []uint64) {
	ij, ik := t.IJ, t.IK
	workers = max(1, min(workers, int(ij.NumEdges()/(1<<16))))
	parallel(workers, func(w int) {
		lo := firstRow(ij, uint64(ij.NumEdges())*uint64(w)/uint64(workers))
		hi := firstRow(ij, uint64(ij.NumEdges())*uint64(w+1)/uint64(workers))
		if w == workers-1 {
			hi = ij.NumRows()
		}
		var starts []uint32
		for u := lo; u < hi; u++ {
			p, end := ij.Offsets[u], ij.Offsets[u+1]
			if p == end {
				continue
			}
			rest, ikEnd := ik.Row(u), ik.Offsets[u+1]
			ikStart := ikEnd - uint64(len(rest))
			vs := ij.Cols[p:end]
			if len(rest) > lopsidedRatio*len(vs) {
				// A long list and few edges: gallop to each clip start.
				for q, v := range vs {
					tail := skipBelow(rest, int64(v)+off)
					spans[at[p+uint64(q)]] = tailSpan(ikEnd-uint64(len(tail)), ikEnd)
				}
				continue
			}
			if cap(starts) < len(vs) {
				starts = make([]uint32, len(vs))
			}
			starts = starts[:len(vs)]
			mergeStarts(vs, rest, off, starts)
			for q, s := range starts {
				spans[at[p+uint64(q)]] = tailSpan(ikStart+uint64(s), ikEnd)
			}
		}
	})
}

// mergeStarts sets starts[q] to the number of elements of the sorted list
// rest below vs[q] + off, for ascending vs. It merges without a branch on
// the data (which list moves on is arithmetic): the runs between clip
// starts have random lengths, and a loop branching on them mispredicts
// about once per edge.
func mergeStarts(vs, rest []uint32, off int64, starts []uint32) {
	i, q := 0, 0
	for i < len(rest) && q < len(vs) {
		// lt is 1 when rest[i] lies below the clip of vs[q]; both sides
		// are below 2^34 in magnitude, so the difference cannot overflow.
		lt := int(uint64(int64(rest[i])-(int64(vs[q])+off)) >> 63)
		starts[q] = uint32(i) // final once q moves on
		i += lt
		q += 1 - lt
	}
	for ; q < len(vs); q++ {
		starts[q] = uint32(i)
	}
}

// tailWorker is hashcol's worker on the tail path: for each J-local v it
// marks JK.Row(v) and probes the tail spans of v's column of IJ, which
// are stored in column order.
type tailWorker struct {
	offsets []uint64 // per v, into spans
	spans   []uint64 // tailSpan of each IJ edge
	jk      *graph.CSR
	ikCols  []uint32
	bits    []uint64
}

func (w *tailWorker) countRange(lo, hi uint64) (n uint64) {
	bits, rows := w.bits, int64(len(w.offsets)-1)
	base := unsafe.SliceData(w.ikCols)
	v := int64(firstRowOf(w.offsets, lo))
	for ; v < rows && w.offsets[v] < hi; v++ {
		a := w.jk.Row(v)
		if len(a) == 0 {
			continue
		}
		for _, x := range a {
			bits[x>>6] |= 1 << (x & 63)
		}
		last := a[len(a)-1]
		for q := max(lo, w.offsets[v]); q < min(hi, w.offsets[v+1]); q++ {
			if q+prefetchAhead < hi {
				prefetch(uintptr(unsafe.Pointer(base)) + 4*uintptr(uint32(w.spans[q+prefetchAhead])))
			}
			s := w.spans[q]
			b := w.ikCols[uint32(s) : s>>32]
			if len(b) > lopsidedRatio*len(a) {
				n += searchCount(a, b)
				continue
			}
			for _, x := range b {
				if x > last {
					break
				}
				n += bits[x>>6] >> (x & 63) & 1
			}
		}
		for _, x := range a {
			bits[x>>6] = 0
		}
	}
	return n
}
