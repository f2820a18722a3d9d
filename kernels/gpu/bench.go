package gpu

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// BenchOptions configure Bench.
type BenchOptions struct {
	Runs    int      // timed runs per kernel (default 5)
	Warmup  int      // untimed runs first (default 1)
	Kernels []string // default: every GPU kernel (with Mode, every one with a per-vertex mode)
	// Mode "vertex" times per-vertex counts and "edge" per-vertex and
	// per-edge counts (CountLocal, the whole graph's arrays aliased as
	// counts.CountWhole passes them); "" times totals (Count).
	Mode string
}

// BenchRow is one kernel on one graph.
type BenchRow struct {
	Graph     string  `json:"graph"`
	Edges     int64   `json:"edges"`
	Kernel    string  `json:"kernel"`
	Mode      string  `json:"mode,omitempty"` // BenchOptions.Mode
	Ran       string  `json:"ran"`            // auto's choice, else Kernel
	Triangles uint64  `json:"triangles"`
	Want      uint64  `json:"want"`
	OK        bool    `json:"ok"`
	Runs      int     `json:"runs"`
	MedianMS  float64 `json:"median_ms"`
	MinMS     float64 `json:"min_ms"`
	MaxMS     float64 `json:"max_ms"`
	// WallMS is the median wall time of the whole call: uploads (none
	// after the first run), the kernel and, per vertex, zeroing and
	// copying back the counts.
	WallMS float64 `json:"wall_ms"`
	Err    string  `json:"error,omitempty"`
}

// Bench times each kernel on the forward graph g (CUDA-event kernel time,
// median of the runs after the warm-ups) and checks every run's count
// against want, the independent CPU count. A kernel that fails or
// miscounts gets a row with OK false; Bench itself fails only when ctx is
// done.
func (l *Library) Bench(ctx context.Context, name string, g *graph.CSR, want uint64, opts BenchOptions) ([]BenchRow, error) {
	if opts.Runs <= 0 {
		opts.Runs = 5
	}
	if opts.Warmup <= 0 {
		opts.Warmup = 1
	}
	if opts.Mode != "" && opts.Mode != "vertex" && opts.Mode != "edge" {
		return nil, fmt.Errorf("gpu: bench: mode %q: want vertex, edge or none", opts.Mode)
	}
	ks := opts.Kernels
	if len(ks) == 0 {
		ks = Kernels()
		if opts.Mode != "" {
			ks = LocalKernels()
		}
	}
	var rows []BenchRow
	for _, k := range ks {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		row := BenchRow{Graph: name, Edges: g.NumEdges(), Kernel: k, Mode: opts.Mode, Ran: k, Want: want, OK: true}
		if err := l.benchOne(ctx, g, &row, opts); err != nil {
			row.OK = false
			row.Err = err.Error()
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (l *Library) benchOne(ctx context.Context, g *graph.CSR, row *BenchRow, opts BenchOptions) error {
	c, err := l.NewCounter(row.Kernel)
	if err != nil {
		return err
	}
	defer c.Close()
	t := kernels.Whole(g)
	var acc *kernels.Local
	if opts.Mode != "" {
		v := make([]uint64, g.NumRows())
		acc = &kernels.Local{VI: v, VJ: v, VK: v}
		if opts.Mode == "edge" {
			e := make([]uint64, g.NumEdges())
			acc.EIJ, acc.EIK, acc.EJK = e, e, e
		}
	}
	var ms, wall []float64
	for i := 0; i < opts.Warmup+opts.Runs; i++ {
		var r kernels.Result
		var err error
		if acc != nil {
			clear(acc.VI)
			clear(acc.EIJ)
		}
		start := time.Now()
		if acc == nil {
			r, err = c.Count(ctx, t)
		} else {
			r, err = c.CountLocal(ctx, t, acc)
		}
		took := time.Since(start)
		if err != nil {
			return err
		}
		row.Triangles = r.Triangles
		if r.Triangles != row.Want {
			return fmt.Errorf("run %d counted %d, want %d", i, r.Triangles, row.Want)
		}
		if acc != nil {
			if err := checkSums(acc, row.Want); err != nil {
				return fmt.Errorf("run %d: %w", i, err)
			}
		}
		if i >= opts.Warmup {
			ms = append(ms, float64(r.KernelTime)/float64(time.Millisecond))
			wall = append(wall, float64(took)/float64(time.Millisecond))
		}
	}
	row.Ran = c.LastKernel()
	slices.Sort(ms)
	slices.Sort(wall)
	row.Runs = len(ms)
	row.MinMS, row.MaxMS, row.MedianMS = ms[0], ms[len(ms)-1], ms[len(ms)/2]
	row.WallMS = wall[len(wall)/2]
	return nil
}

// checkSums checks that the whole graph's per-vertex counts (and per-edge
// support, when taken) each sum to 3 x the triangles.
func checkSums(acc *kernels.Local, want uint64) error {
	var v, e uint64
	for _, x := range acc.VI {
		v += x
	}
	for _, x := range acc.EIJ {
		e += x
	}
	if v != 3*want || (acc.PerEdge() && e != 3*want) {
		return fmt.Errorf("per-vertex counts sum to %d and per-edge support to %d, want 3 x %d", v, e, want)
	}
	return nil
}
