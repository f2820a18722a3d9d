package kernels

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/trigrid/trigrid/graph"
)

// The hash kernels: marker intersection (TRUST's vertex-centric hashing,
// GroupTC's bitmap variant). Each worker owns a bitset over the K-local
// column space. One list is marked once and many lists are probed against
// it with one load per element and no branch to mispredict.
//
//   - "hash" is driven by IJ's rows: for a row u it marks IK.Row(u), probes
//     JK.Row(v) for every v in IJ.Row(u), and unmarks.
//   - "hashcol" is driven by IJ's columns, through IJ's transpose: for a
//     J-local v it marks JK.Row(v) and probes IK.Row(u) for every u with
//     (u, v) in IJ. Only the part of IK.Row(u) between the first and last
//     marked element can match; in a forward graph (whole, or cut by hash
//     or range blocks, whose local ids keep the global order) that is the
//     part of u's list above v, so the probes number about one per wedge
//     (sum over u of C(d+(u), 2)) instead of sum over edges of d+(v),
//     several times fewer on skewed graphs. The transpose costs one counting sort
//     and 4 bytes per IJ edge (8 on the tail path, 12 with a clip, see tail.go); its time
//     is part of Result.KernelTime.
//
// In both, probes are trimmed to the marked span, rows whose marked list is
// empty are skipped, and lopsided rows switch loops: when one probe list is
// lopsidedRatio times longer than the marked list, the marked list's
// elements are binary-searched in it; when the marked list is lopsidedRatio
// times longer than all the row's probe lists together, nothing is marked
// and the probes are binary-searched in it.
//
// Preconditions as for merge; the bitset holds max(IK.NCols, JK.NCols)
// bits per worker (128 KiB for a million columns, 512 MiB at the 2^32
// limit, which is why auto turns to merge for huge K spaces).

// lopsidedRatio is the length ratio from which binary search replaces
// marking or scanning; like gallopRatio, a round figure, not a tuned one.
const lopsidedRatio = 32

type hashCounter struct {
	opts   CPUOptions
	byCols bool
	// scratch keeps the bitsets between calls: a Counter serves one
	// goroutine at a time, and the bitsets are all zero between rows.
	scratch [][]uint64
	// order is the last IJ's column order and spans the tail spans'
	// buffer, kept for the next subtask with the same IJ (tail.go).
	order colOrder
	spans []uint64
}

func (h *hashCounter) Name() string {
	if h.byCols {
		return "hashcol"
	}
	return "hash"
}

func (h *hashCounter) Count(ctx context.Context, t Subtask) (res Result, err error) {
	name := h.Name()
	if err := checkSubtask(t); err != nil {
		return Result{}, fmt.Errorf("kernels: %s: %w", name, err)
	}
	if isEmpty(t) {
		return Result{}, ctx.Err()
	}
	workers := resolveWorkers(h.opts.Workers)
	start := time.Now()
	if h.byCols {
		// The transpose runs here, outside runParallel's recover.
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("kernels: %s: malformed subtask: %v", name, r)
			}
		}()
	}
	total := t.IJ.NumEdges()
	off, clip := clipOffset(t)
	var newWorker func(bits []uint64) rangeCounter
	if !h.byCols {
		newWorker = func(bits []uint64) rangeCounter {
			return &markWorker{drive: t.IJ, mark: t.IK, probe: t.JK, bits: bits, clip: clip, off: off}
		}
	} else if off, ok := tailOffset(t); ok {
		var w tailWorker
		if t.IJ == t.IK && off == 1 && !h.order.holds(t.IJ) {
			w.offsets, w.spans = tailSpans(t, off, workers)
		} else {
			// Subtasks (I, J, K) come with K rising for one (I, J): the
			// order of IJ's edges by column is built once and reused,
			// and only the spans, which depend on IK, are redone, in
			// IJ's row order (tail.go).
			if !h.order.holds(t.IJ) || t.IJ.NumEdges() >= 1<<32 {
				h.order = newColOrder(t.IJ, workers)
			}
			if cap(h.spans) < int(total) {
				h.spans = make([]uint64, total)
			}
			w.offsets, w.spans = h.order.offsets, h.spans[:total]
			rowSpans(t, off, workers, h.order.at, w.spans)
		}
		newWorker = func(bits []uint64) rangeCounter {
			w := w
			w.jk, w.ikCols, w.bits = t.JK, t.IK.Cols, bits
			return &w
		}
	} else {
		tr := transpose(t.IJ, workers)
		newWorker = func(bits []uint64) rangeCounter {
			return &markWorker{drive: tr, mark: t.JK, probe: t.IK, bits: bits, clip: clip, off: off, byCols: true}
		}
	}

	words := int((kColumns(t) + 63) / 64)
	for len(h.scratch) < workers {
		h.scratch = append(h.scratch, nil)
	}
	var next atomic.Int32
	res, err = runParallel(ctx, name, total, workers, h.opts.Progress, func() rangeCounter {
		// Each worker goroutine takes its own slot, so the bitset is
		// allocated (and first touched) by the goroutine that uses it.
		i := next.Add(1) - 1
		if cap(h.scratch[i]) < words {
			h.scratch[i] = make([]uint64, words)
		}
		return newWorker(h.scratch[i][:words])
	})
	if err != nil {
		// Cancellation stops between rows with the marks clear, but a
		// fault inside a row leaves them set: drop the scratch.
		h.scratch, h.order, h.spans = nil, colOrder{}, nil
		return Result{}, err
	}
	res.KernelTime = time.Since(start) // the transpose is part of the count
	return res, nil
}

// markWorker counts, for each edge (r, c) of drive, |mark.Row(r) ∩
// probe.Row(c)|. For "hash" drive, mark, probe = IJ, IK, JK; for "hashcol"
// they are IJ's transpose, JK, IK.
//
// With clip, only w >= v + off counts for an edge (u, v) (Subtask.Clip).
// "hashcol" drives by v, so it drops the marked list's elements below v's
// clip once per row. "hash" drives by u and probes v's list, so it drops
// the probe's elements below v's clip (in a forward graph there are none:
// one comparison per probe), and the marked list's below the clip of the
// chunk's first v, the smallest: those can match no probe.
type markWorker struct {
	drive, mark, probe *graph.CSR
	bits               []uint64
	clip, byCols       bool
	off                int64
}

func (w *markWorker) countRange(lo, hi uint64) (n uint64) {
	d := w.drive
	rows := d.NumRows()
	for r := firstRow(d, lo); r < rows && d.Offsets[r] < hi; r++ {
		a := w.mark.Row(r)
		if len(a) == 0 {
			continue
		}
		cs := d.Cols[max(lo, d.Offsets[r]):min(hi, d.Offsets[r+1])]
		if len(cs) == 0 {
			continue
		}
		if w.clip {
			v := cs[0]
			if w.byCols {
				v = uint32(r)
			}
			if a = skipBelow(a, int64(v)+w.off); len(a) == 0 {
				continue
			}
		}
		if len(a) > lopsidedRatio*w.probeLen(cs) {
			for _, c := range cs {
				n += searchCount(w.probeRow(c), a)
			}
			continue
		}
		n += w.countMarked(a, cs)
	}
	return n
}

// probeRow is probe's row c, clipped when the clip applies to it ("hash").
func (w *markWorker) probeRow(c uint32) []uint32 {
	b := w.probe.Row(int64(c))
	if w.clip && !w.byCols {
		b = skipBelow(b, int64(c)+w.off)
	}
	return b
}

// countMarked marks a, probes the rows cs of probe, and clears the marks.
func (w *markWorker) countMarked(a []uint32, cs []uint32) (n uint64) {
	bits := w.bits
	for _, x := range a {
		bits[x>>6] |= 1 << (x & 63)
	}
	first, last := a[0], a[len(a)-1]
	for i, c := range cs {
		prefetchRows(w.probe, cs, i)
		b := w.probeRow(c)
		if len(b) == 0 {
			continue
		}
		if b[0] < first {
			b = b[lowerBound(b, first):]
		}
		if len(b) > lopsidedRatio*len(a) {
			n += searchCount(a, b)
			continue
		}
		for _, x := range b {
			if x > last {
				break // nothing above a's last element is marked
			}
			n += bits[x>>6] >> (x & 63) & 1
		}
	}
	for _, x := range a {
		bits[x>>6] = 0
	}
	return n
}

// probeLen is the total length of the probe rows cs.
func (w *markWorker) probeLen(cs []uint32) int {
	var s int64
	for _, c := range cs {
		s += w.probe.Degree(int64(c))
	}
	return int(s)
}
