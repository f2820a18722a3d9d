// Package simulate is `trigrid bench simulate`: the real scheduler core
// (coordinator/scheduler) driven on a simulated clock by simulated
// workers whose subtasks cost what a cost model fitted to `bench scale`
// measurements says, on a partition known only by its block statistics
// (a manifest, or a fine block histogram that gives every P dividing
// it). It predicts makespan, parallel efficiency and the time imbalance
// ratio for worker counts no machine here has, and chooses P.
package simulate

import (
	"errors"
	"fmt"
	"slices"

	"github.com/trigrid/trigrid/partition"
)

// DefaultMaxIR is the imbalance Choose accepts: TRUST reports IR of
// about 1.1 across 1,024 GPUs.
const DefaultMaxIR = 1.1

// SimulationKind and SimulationFormat name and version Report's JSON.
const (
	SimulationKind   = "trigrid-simulation"
	SimulationFormat = 1
)

// Options is one `bench simulate`.
type Options struct {
	// Workers are the worker counts to simulate.
	Workers []int
	Model   Model
	// P is the partition to simulate; 0 chooses it (Choose) from the
	// block statistics' divisors.
	P int
	// MaxSubtasks bounds the candidates Choose simulates (0: 1<<20).
	MaxSubtasks int
	// MaxIR is the time imbalance ratio a chosen P must keep (0:
	// DefaultMaxIR).
	MaxIR float64
	// MemBudget, when positive, is the device memory per subtask a
	// candidate P must fit (partition.FitsBudget with MemModel).
	MemBudget int64
	MemModel  partition.MemModel
	// Speeds, when set, mix workers of different speeds (Config);
	// the one-worker baseline runs at Speeds[0].
	Speeds []float64
	// Progress, if set, is told what is simulated.
	Progress func(msg string)
}

// Candidate is one P Choose tried, simulated at the largest worker count.
type Candidate struct {
	P               int      `json:"p"`
	Subtasks        int      `json:"subtasks"`
	MakespanSeconds float64  `json:"makespan_s"`
	IR              *float64 `json:"ir"`
	Utilization     float64  `json:"utilization"`
}

// Report is a simulation's answer, the JSON of `bench simulate --json`.
type Report struct {
	Kind   string `json:"kind"`
	Format int    `json:"format"`
	Source string `json:"source"`
	P      int    `json:"p"`
	// Chosen says P was chosen among Candidates: the smallest makespan
	// at the largest worker count among those of IR at most MaxIR, or,
	// when none is, of all (Balanced false).
	Chosen     bool        `json:"chosen"`
	MaxIR      float64     `json:"max_ir,omitempty"`
	Balanced   bool        `json:"balanced,omitempty"`
	Candidates []Candidate `json:"candidates,omitempty"`
	Model      Model       `json:"model"`
	// Speeds are Options.Speeds: the workers' speeds, in turn.
	Speeds []float64 `json:"speeds,omitempty"`
	// OneWorkerSeconds is the simulated makespan of one worker, the
	// baseline of the rows' Efficiency.
	OneWorkerSeconds float64  `json:"one_worker_s"`
	Rows             []Result `json:"rows"`
}

// Stats is where a simulation's partition comes from: a fixed grid (a
// manifest's) or block statistics that aggregate to many P.
type Stats struct {
	Source string
	Grid   *Grid
	Blocks *BlockStats
}

func (s Stats) grid(p int) (*Grid, error) {
	if s.Blocks != nil {
		return s.Blocks.Aggregate(p)
	}
	if p != 0 && p != s.Grid.P {
		return nil, fmt.Errorf("simulate: %s is partitioned with P = %d; --partitions %d needs block statistics (trigrid bench stats)", s.Source, s.Grid.P, p)
	}
	return s.Grid, nil
}

// Run simulates opts.Workers on the partition of stats (choosing P first
// when opts.P is 0 and stats has block statistics).
func Run(stats Stats, opts Options) (*Report, error) {
	if len(opts.Workers) == 0 {
		return nil, errors.New("simulate: no worker counts")
	}
	for _, n := range opts.Workers {
		if n < 1 || n > MaxWorkers {
			return nil, fmt.Errorf("simulate: %d workers: want 1 to %d", n, MaxWorkers)
		}
	}
	if err := opts.Model.Check("the cost model"); err != nil {
		return nil, err
	}
	rep := &Report{Kind: SimulationKind, Format: SimulationFormat, Source: stats.Source, Model: opts.Model, P: opts.P, Speeds: opts.Speeds}
	if opts.P == 0 && stats.Blocks != nil {
		p, cands, err := Choose(stats.Blocks, opts)
		if err != nil {
			return nil, err
		}
		rep.P, rep.Chosen, rep.Candidates, rep.MaxIR = p, true, cands, opts.maxIR()
		for _, c := range cands {
			rep.Balanced = rep.Balanced || (c.P == p && balanced(c, rep.MaxIR))
		}
	}
	g, err := stats.grid(rep.P)
	if err != nil {
		return nil, err
	}
	rep.P = g.P
	opts.progress(fmt.Sprintf("P = %d: 1 worker (the baseline)", g.P))
	one, err := Simulate(g, opts.config(1))
	if err != nil {
		return nil, err
	}
	rep.OneWorkerSeconds = one.MakespanSeconds
	for _, n := range opts.Workers {
		opts.progress(fmt.Sprintf("P = %d: %d workers", g.P, n))
		r := one
		if n != 1 {
			if r, err = Simulate(g, opts.config(n)); err != nil {
				return nil, err
			}
		}
		r.Efficiency = one.MakespanSeconds / (opts.capacity(n) * r.MakespanSeconds)
		rep.Rows = append(rep.Rows, r)
	}
	return rep, nil
}

// config is the simulation of n workers.
func (o *Options) config(n int) Config {
	c := DefaultConfig(n, o.Model)
	c.Speeds = o.Speeds
	return c
}

// capacity is what n workers count in the time the first counts one
// subtask's worth: n, or with Speeds their speeds over the first's.
func (o *Options) capacity(n int) float64 {
	if len(o.Speeds) == 0 {
		return float64(n)
	}
	var sum float64
	for w := range n {
		sum += o.Speeds[w%len(o.Speeds)]
	}
	return sum / o.Speeds[0]
}

func (o *Options) maxIR() float64 {
	if o.MaxIR > 0 {
		return o.MaxIR
	}
	return DefaultMaxIR
}

func balanced(c Candidate, maxIR float64) bool { return c.IR != nil && *c.IR <= maxIR }

func (o *Options) progress(msg string) {
	if o.Progress != nil {
		o.Progress(msg)
	}
}

// Choose simulates the largest worker count at every P that divides the
// statistics' fine P, has at least as many subtasks as workers and at
// most MaxSubtasks, and fits MemBudget; it returns the P of the smallest
// makespan among those whose IR is at most MaxIR (among all when none
// is; the smaller P on a tie) and every candidate.
func Choose(b *BlockStats, opts Options) (int, []Candidate, error) {
	workers := slices.Max(opts.Workers)
	limit := opts.MaxSubtasks
	if limit <= 0 {
		limit = 1 << 20
	}
	var cands []Candidate
	best := -1
	for _, p := range b.Divisors() {
		if int64(p)*int64(p)*int64(p) > 8*int64(limit) || int64(p) > b.Vertices {
			break
		}
		g, err := b.Aggregate(p)
		if err != nil {
			return 0, nil, err
		}
		n := len(g.Subtasks())
		if n < workers || n > limit || (opts.MemBudget > 0 && !partition.FitsBudget(p, g.Stat, opts.MemBudget, opts.MemModel)) {
			continue
		}
		opts.progress(fmt.Sprintf("choosing P: P = %d (%d subtasks) at %d workers", p, n, workers))
		r, err := Simulate(g, opts.config(workers))
		if err != nil {
			return 0, nil, err
		}
		cands = append(cands, Candidate{P: p, Subtasks: n, MakespanSeconds: r.MakespanSeconds, IR: r.IR, Utilization: r.Utilization})
	}
	maxIR := opts.maxIR()
	for x, c := range cands {
		better := best < 0 || c.MakespanSeconds < cands[best].MakespanSeconds
		if bb := best >= 0 && balanced(cands[best], maxIR); balanced(c, maxIR) != bb {
			better = balanced(c, maxIR)
		}
		if better {
			best = x
		}
	}
	if best < 0 {
		return 0, nil, fmt.Errorf("simulate: no P dividing %d gives %d workers at least one subtask each within %d subtasks%s",
			b.FineP, workers, limit, budgetNote(opts.MemBudget))
	}
	return cands[best].P, cands, nil
}

func budgetNote(b int64) string {
	if b <= 0 {
		return ""
	}
	return fmt.Sprintf(" and a memory budget of %d bytes", b)
}
