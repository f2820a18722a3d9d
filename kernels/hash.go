package kernels

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/trigrid/trigrid/graph"
)

// The hash kernel: marker intersection, vertex-centric (TRUST's hashing,
// GroupTC's bitmap variant). Each worker owns a bitset over the K-local
// column space. For a row u of IJ it marks IK.Row(u) once, then for every
// v in IJ.Row(u) probes each element of JK.Row(v) against the marks, then
// unmarks. The marks are paid once per row and each probe is one load with
// no branch to mispredict, which is what makes it faster than a merge on
// skewed graphs. Rows whose IK list is empty are skipped.
//
// Lopsided rows take another loop: when the probe list of one edge is
// lopsidedRatio times longer than u's marked list, u's few elements are
// binary-searched in it instead; when u's list is lopsidedRatio times
// longer than all its probe lists together, marking is skipped and the
// probes are binary-searched in u's list.
//
// Preconditions as for merge; the bitset holds max(IK.NCols, JK.NCols)
// bits per worker (128 KiB for a million columns).

// lopsidedRatio is where binary search beats marking or scanning.
const lopsidedRatio = 32

type hashCounter struct {
	opts CPUOptions
	// scratch keeps the bitsets between calls: a Counter serves one
	// goroutine at a time, and the bitsets are all zero between rows.
	scratch [][]uint64
}

func (h *hashCounter) Name() string { return "hash" }

func (h *hashCounter) Count(ctx context.Context, t Subtask) (Result, error) {
	if err := checkSubtask(t); err != nil {
		return Result{}, fmt.Errorf("kernels: hash: %w", err)
	}
	if isEmpty(t) {
		return Result{}, ctx.Err()
	}
	words := int((kColumns(t) + 63) / 64)
	workers := resolveWorkers(h.opts.Workers)
	for len(h.scratch) < workers {
		h.scratch = append(h.scratch, nil)
	}
	var next atomic.Int32
	res, err := runParallel(ctx, "hash", t, workers, h.opts.Progress, func() rangeCounter {
		// Each worker goroutine takes its own slot, so the bitset is
		// allocated (and first touched) by the goroutine that uses it.
		i := next.Add(1) - 1
		if cap(h.scratch[i]) < words {
			h.scratch[i] = make([]uint64, words)
		}
		return &hashWorker{t: t, marks: h.scratch[i][:words]}
	})
	if err != nil {
		// A fault or a cancellation between rows leaves the marks clear,
		// but a fault inside a row does not: drop the scratch.
		h.scratch = nil
	}
	return res, err
}

type hashWorker struct {
	t     Subtask
	marks []uint64
}

func (w *hashWorker) countRange(lo, hi uint64) (n uint64) {
	ij, ik, jk := w.t.IJ, w.t.IK, w.t.JK
	rows := ij.NumRows()
	for u := firstRow(ij, lo); u < rows && ij.Offsets[u] < hi; u++ {
		a := ik.Row(u)
		if len(a) == 0 {
			continue
		}
		vs := ij.Cols[max(lo, ij.Offsets[u]):min(hi, ij.Offsets[u+1])]
		if probes := probeLen(jk, vs); len(a) > lopsidedRatio*probes {
			for _, v := range vs {
				n += searchCount(jk.Row(int64(v)), a)
			}
			continue
		}
		n += w.countMarked(a, vs)
	}
	return n
}

// countMarked marks a, probes the JK rows of vs, and clears the marks.
func (w *hashWorker) countMarked(a []uint32, vs []uint32) (n uint64) {
	jk, marks := w.t.JK, w.marks
	for _, x := range a {
		marks[x>>6] |= 1 << (x & 63)
	}
	last := a[len(a)-1]
	for _, v := range vs {
		b := jk.Row(int64(v))
		if len(b) > lopsidedRatio*len(a) {
			n += searchCount(a, b)
			continue
		}
		for _, x := range b {
			if x > last {
				break // nothing above u's last element is marked
			}
			n += marks[x>>6] >> (x & 63) & 1
		}
	}
	for _, x := range a {
		marks[x>>6] = 0
	}
	return n
}

// probeLen is the total length of the JK rows of vs.
func probeLen(jk *graph.CSR, vs []uint32) int {
	var s int64
	for _, v := range vs {
		s += jk.Degree(int64(v))
	}
	return int(s)
}
