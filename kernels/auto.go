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
// Measured on rmat scales 16 and 18 cut into P x P blocks (P = 2, 4, 8,
// hash and range schemes, one worker, best of two per subtask): hashcol is
// fastest on the whole graph, on (I, J, J) subtasks (its tail path) and on
// blocks with long rows, which range blocks of high-degree vertices have;
// hash on the short rows of hash-partitioned blocks (mean 2 to 4 at
// P = 4, 8); merge only on tiny subtasks over a large K space, where a
// bitset costs more than the count. Any threshold from 4 to 6 came within
// 1% of choosing the best kernel for every subtask; 3 lost up to 20%.
//
// A clipped subtask (SubtaskStats.Clip, which partition's subtasks carry)
// gives hashcol its tail path on any blocks, and then hashcol wins on
// short rows too: rmat scale 20 through all subtasks of P = 4 blocks,
// 2 cores, wall seconds hash / hashcol: hash scheme 2.40 / 1.60, range
// 2.10 / 0.87 (the whole graph: 1.02 with hashcol).
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
