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
	last     string
}

// LastKernel names the kernel the last Count ran, for reports.
func (a *autoCounter) LastKernel() string { return a.last }

func (a *autoCounter) Name() string { return "auto" }

func (a *autoCounter) Count(ctx context.Context, t Subtask) (Result, error) {
	if a.counters == nil {
		a.counters = map[string]Counter{
			"hash":    &hashCounter{opts: a.opts},
			"hashcol": &hashCounter{opts: a.opts, byCols: true},
			"merge":   &mergeCounter{opts: a.opts},
		}
	}
	a.last = chooseCPUKernel(Stats(t))
	res, err := a.counters[a.last].Count(ctx, t)
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

// minHashcolMean is the mean JK row length from which hashcol beats hash
// on blocks without the tail path: below it the lists are so short that
// hash's probes cost less than hashcol's transpose and binary searches.
const minHashcolMean = 5

// chooseCPUKernel is the auto policy: a kernel name for a subtask's
// statistics. It is pure so that it can be tested and tuned on its own.
//
// hashcol is fastest on the whole graph, on (I, J, J) subtasks (its tail
// path) and on blocks with long rows, which range blocks of high-degree
// vertices have; hash on the short rows of hash-partitioned blocks; merge
// only on tiny subtasks over a large K space, where a bitset costs more
// than the count. A clipped subtask (SubtaskStats.Clip, which partition's
// subtasks carry) gives hashcol its tail path on any blocks, and then
// hashcol wins on short rows too. The measurements behind these rules and
// minHashcolMean: docs/decisions/2026-11-21-cpu-kernel-choice.md.
func chooseCPUKernel(s SubtaskStats) string {
	switch {
	case s.KCols > maxHashBits, float64(s.KCols) > hashBitsPerWedge*s.Wedges:
		return "merge"
	case s.SameIJIK, s.Clip, s.MeanJK >= minHashcolMean:
		return "hashcol"
	default:
		return "hash"
	}
}
