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
	Kernels []string // default: every GPU kernel
}

// BenchRow is one kernel on one graph.
type BenchRow struct {
	Graph     string  `json:"graph"`
	Edges     int64   `json:"edges"`
	Kernel    string  `json:"kernel"`
	Ran       string  `json:"ran"` // auto's choice, else Kernel
	Triangles uint64  `json:"triangles"`
	Want      uint64  `json:"want"`
	OK        bool    `json:"ok"`
	Runs      int     `json:"runs"`
	MedianMS  float64 `json:"median_ms"`
	MinMS     float64 `json:"min_ms"`
	MaxMS     float64 `json:"max_ms"`
	Err       string  `json:"error,omitempty"`
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
	ks := opts.Kernels
	if len(ks) == 0 {
		ks = Kernels()
	}
	var rows []BenchRow
	for _, k := range ks {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		row := BenchRow{Graph: name, Edges: g.NumEdges(), Kernel: k, Ran: k, Want: want, OK: true}
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
	var ms []float64
	for i := 0; i < opts.Warmup+opts.Runs; i++ {
		r, err := c.Count(ctx, t)
		if err != nil {
			return err
		}
		row.Triangles = r.Triangles
		if r.Triangles != row.Want {
			return fmt.Errorf("run %d counted %d, want %d", i, r.Triangles, row.Want)
		}
		if i >= opts.Warmup {
			ms = append(ms, float64(r.KernelTime)/float64(time.Millisecond))
		}
	}
	row.Ran = c.LastKernel()
	slices.Sort(ms)
	row.Runs = len(ms)
	row.MinMS, row.MaxMS, row.MedianMS = ms[0], ms[len(ms)-1], ms[len(ms)/2]
	return nil
}
