package kernels

import (
	"unsafe"

	"github.com/trigrid/trigrid/graph"
)

// The tail path of hashcol. When IK is IJ itself (the whole graph, or a
// subtask (I, J, J)) and every row of JK lies above its own id, an edge
// (u, v) at position p of IJ.Cols can only close triangles with the
// elements of u's list after p: those up to p are at most v, below all of
// JK.Row(v). The transpose then stores, per edge, the span (p, end of u's
// row) of IK.Cols to probe, and a probe needs neither u's offsets nor a
// binary search: one random access per edge instead of three or four
// dependent ones, which is what the count waits on.

// tailSpan packs the probe span [start, end) of IK.Cols into one word; it
// needs IJ to have fewer than 2^32 edges.
func tailSpan(start, end uint64) uint64 { return end<<32 | start }

// useTails reports whether t qualifies for the tail path.
func useTails(t Subtask) bool {
	return t.IJ == t.IK && t.IJ.NumEdges() < 1<<32 && isUpper(t.JK)
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

// tailWorker is hashcol's worker on the tail path: for each J-local v it
// marks JK.Row(v) and probes the tail spans of v's column of IJ.
type tailWorker struct {
	offsets []uint64 // per v, into spans
	spans   []uint64 // tailSpan of each IJ edge, grouped by column
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
