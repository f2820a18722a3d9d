package kernels

import (
	"context"
	"fmt"
)

// autoCounter picks a CPU kernel per subtask with chooseCPUKernel and keeps
// one instance of each, so the hash kernel's scratch survives across
// subtasks.
type autoCounter struct {
	opts     CPUOptions
	counters map[string]Counter
}

func (a *autoCounter) Name() string { return "auto" }

func (a *autoCounter) Count(ctx context.Context, t Subtask) (Result, error) {
	if a.counters == nil {
		a.counters = map[string]Counter{
			"hash":    &hashCounter{opts: a.opts},
			"hashcol": &hashCounter{opts: a.opts, byCols: true},
			"merge":   &mergeCounter{opts: a.opts},
		}
	}
	res, err := a.counters[chooseCPUKernel(Stats(t))].Count(ctx, t)
	if err != nil {
		return Result{}, fmt.Errorf("kernels: auto: %w", err)
	}
	return res, nil
}

// Limits of the hash kernel's bitset, in bits per worker.
const (
	// maxHashBits caps the bitset at 64 MiB per worker: past that the
	// marks miss every cache level and the merge wins anyway.
	maxHashBits = 1 << 29
	// hashBitsPerWedge: a fresh bitset is zeroed once (KCols/8 bytes) and
	// its marks are spread over KCols bits; below about one wedge per 64
	// bits the merge finishes before the bitset pays for itself.
	hashBitsPerWedge = 64
)

// chooseCPUKernel is the auto policy: "hash" or "merge" for a subtask's
// statistics. It is pure so that it can be tested and tuned on its own.
//
// The hash kernel wins whenever its bitset is cheap next to the work: on
// rmat and SNAP graphs, whole or in 2D blocks, it is faster than the merge
// (see BenchmarkCount). The merge wins on tiny or very sparse subtasks over
// a huge K space, where allocating and touching the bitset dominates.
func chooseCPUKernel(s SubtaskStats) string {
	if s.KCols > maxHashBits {
		return "merge"
	}
	if float64(s.KCols) > hashBitsPerWedge*s.Wedges {
		return "merge"
	}
	return "hashcol"
}
