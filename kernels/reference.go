package kernels

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Reference counts a subtask the obvious way, one goroutine, no tricks: for
// every edge (u, v) of IJ, look each element of the shorter of IK.Row(u)
// and JK.Row(v) up in the other, skipping the elements the clip excludes
// (Subtask.Clip).
// It backs --verify and every kernel test, so it shares no code with the
// fast kernels beyond the CSR accessors, and it validates all three views
// (O(edges)) first, so malformed input is an error, never a count or a
// panic.
func Reference(t Subtask) (uint64, error) {
	if err := validateSubtask(t); err != nil {
		return 0, fmt.Errorf("kernels: reference: %w", err)
	}
	if isEmpty(t) {
		return 0, nil
	}
	var n uint64
	for u := range t.IJ.NumRows() {
		for _, v := range t.IJ.Row(u) {
			short, long := t.IK.Row(u), t.JK.Row(int64(v))
			if len(short) > len(long) {
				short, long = long, short
			}
			for _, w := range short {
				// The clip compares w - v, which cannot overflow, with
				// the offset as given: no clamping to share with the
				// kernels.
				if t.Clip && int64(w)-int64(v) < t.TailOffset {
					continue
				}
				if _, found := slices.BinarySearch(long, w); found {
					n++
				}
			}
		}
	}
	return n, nil
}

// validateSubtask is checkSubtask plus graph.CSR.Validate on each view.
func validateSubtask(t Subtask) error {
	if err := checkSubtask(t); err != nil {
		return err
	}
	for _, v := range []struct {
		name string
		c    interface{ Validate() error }
	}{{"IJ", t.IJ}, {"IK", t.IK}, {"JK", t.JK}} {
		if err := v.c.Validate(); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
	}
	return nil
}

// referenceCounter exposes Reference as a Counter ("reference"). It ignores
// Workers and Progress and checks ctx only before it starts.
type referenceCounter struct{}

func (referenceCounter) Name() string { return "reference" }

func (referenceCounter) Count(ctx context.Context, t Subtask) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("kernels: reference: %w", err)
	}
	start := time.Now()
	n, err := Reference(t)
	if err != nil {
		return Result{}, err
	}
	return Result{Triangles: n, KernelTime: time.Since(start)}, nil
}
