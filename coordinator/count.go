package coordinator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/kernels"
)

// Progress receives the progress of long phases. Update may be called from
// any goroutine.
type Progress interface {
	Start(phase, unit string, total int64)
	Update(done, total int64)
	Done()
}

// CountConfig configures an in-process count of one graph file.
type CountConfig struct {
	Read  edgeio.ReadOptions
	Order graph.Order
	// Workers is the number of CPU goroutines for every parallel phase; 0
	// means all cores.
	Workers int
	// NewCounter makes the kernel that counts subtasks. Each local worker
	// gets its own, so a Counter need not be safe for concurrent use.
	NewCounter func() (kernels.Counter, error)
	// Device names where the counter runs, for the report ("cpu", the GPU's
	// name).
	Device string
	// Verify recounts with the reference kernel and fails on a mismatch.
	Verify   bool
	Progress Progress
	Logger   *slog.Logger
}

func (c *CountConfig) validate() error {
	if c.NewCounter == nil {
		return fmt.Errorf("coordinator: CountConfig.NewCounter is nil")
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	c.Read.Workers = c.Workers
	if c.Progress == nil {
		c.Progress = nopProgress{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

type nopProgress struct{}

func (nopProgress) Start(string, string, int64) {}
func (nopProgress) Update(int64, int64)         {}
func (nopProgress) Done()                       {}

// LoadForward reads, cleans, orders and orients a graph file into its
// forward CSR, filling the matching parts of rep. The raw edges and the
// undirected graph are dropped as soon as the next stage no longer needs
// them, so peak memory is the larger of two neighbouring stages.
func LoadForward(ctx context.Context, path string, cfg *CountConfig, rep *Report) (*graph.CSR, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	prog := cfg.Progress
	t := time.Now()
	prog.Start("read", "bytes", -1)
	ro := cfg.Read
	ro.Progress = prog.Update
	edges, rs, err := edgeio.ReadFile(ctx, path, ro)
	prog.Done()
	if err != nil {
		return nil, err
	}
	rep.Input = Input{Format: rs.Format.String(), Compression: rs.Compression, Bytes: rs.Bytes, Lines: rs.Lines, RawEdges: rs.Edges}
	rep.Removed.BadLines = rs.BadLines
	rep.Seconds.Read = since(t)

	t = time.Now()
	prog.Start("clean", "edges", int64(len(edges)))
	und, cs, err := graph.Clean(edges, graph.CleanOptions{Workers: cfg.Workers, Progress: prog.Update})
	prog.Done()
	edges = nil
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Vertices, rep.Edges = cs.Vertices, cs.Edges
	rep.Removed.SelfLoops, rep.Removed.Duplicates, rep.Removed.IsolatedIDs = cs.SelfLoops, cs.Duplicates, cs.IsolatedIDs
	rep.Seconds.Clean = since(t)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	t = time.Now()
	prog.Start("order", "", -1)
	fwd, _, os, err := graph.Orient(und, cfg.Order, cfg.Workers)
	prog.Done()
	und = nil
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Order = cfg.Order.String()
	rep.Wedges, rep.MaxDegree, rep.MaxOutDegree, rep.Degeneracy = os.Wedges, os.MaxDegree, os.MaxOutDegree, os.Degeneracy
	rep.Seconds.Order = since(t)
	return fwd, ctx.Err()
}

// CountFile counts the triangles of one graph file in this process: the
// whole forward graph as one subtask.
func CountFile(ctx context.Context, path string, cfg CountConfig) (*Report, error) {
	start := time.Now()
	rep := &Report{File: path, Device: cfg.Device}
	fwd, err := LoadForward(ctx, path, &cfg, rep)
	if err != nil {
		return nil, err
	}
	if err := countWhole(ctx, fwd, &cfg, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	finish(rep, start)
	return rep, nil
}

func countWhole(ctx context.Context, fwd *graph.CSR, cfg *CountConfig, rep *Report) error {
	counter, err := cfg.NewCounter()
	if err != nil {
		return err
	}
	defer closeCounter(counter, cfg.Logger)
	rep.Kernel = counter.Name()
	t := time.Now()
	cfg.Progress.Start("count", "edges", fwd.NumEdges())
	res, err := counter.Count(ctx, kernels.Whole(fwd))
	cfg.Progress.Done()
	if err != nil {
		return fmt.Errorf("count with %s: %w", counter.Name(), err)
	}
	rep.Triangles = res.Triangles
	rep.Seconds.Count = since(t)
	rep.Seconds.Kernel = res.KernelTime.Seconds()
	if cfg.Verify {
		return verify(ctx, kernels.Whole(fwd), res.Triangles, counter.Name(), rep)
	}
	return nil
}

func verify(ctx context.Context, t kernels.Subtask, got uint64, kernel string, rep *Report) error {
	ref, err := kernels.NewCPU("reference", kernels.CPUOptions{})
	if err != nil {
		return err
	}
	want, err := ref.Count(ctx, t)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if want.Triangles != got {
		return fmt.Errorf("verify: kernel %s counted %d triangles, the reference counts %d", kernel, got, want.Triangles)
	}
	rep.Verified = true
	return nil
}

func closeCounter(c kernels.Counter, log *slog.Logger) {
	if cl, ok := c.(io.Closer); ok {
		if err := cl.Close(); err != nil {
			log.Warn("closing kernel", "kernel", c.Name(), "err", err)
		}
	}
}

func finish(rep *Report, start time.Time) {
	rep.Seconds.Total = since(start)
	if rep.Seconds.Total > 0 {
		rep.EdgesPerSecond = float64(rep.Edges) / rep.Seconds.Total
	}
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }
