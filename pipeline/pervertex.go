package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/worker"
)

// localCounter returns c's per-vertex mode, or the CPU's auto kernel (with
// a logged reason) when c has none.
func localCounter(c kernels.Counter, cfg *Config) (kernels.LocalCounter, error) {
	if lc, ok := c.(kernels.LocalCounter); ok {
		return lc, nil
	}
	cfg.Logger.Info("the kernel has no per-vertex mode; counting per vertex with the CPU's auto kernel", "kernel", c.Name())
	lc, err := kernels.NewCPU("auto", kernels.CPUOptions{Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	return lc.(kernels.LocalCounter), nil
}

// countWholePerVertex is countWhole with per-vertex (and per-edge)
// counts: it counts, checks the counts against the total, writes the
// files cfg.PerVertex names and fills the report's clustering figures.
func countWholePerVertex(ctx context.Context, fwd *graph.CSR, ids []uint64, counter kernels.Counter, cfg *Config, rep *Report) error {
	lc, err := localCounter(counter, cfg)
	if err != nil {
		return err
	}
	t := time.Now()
	cfg.Progress.Start("count", "edges", fwd.NumEdges())
	c, res, err := counts.CountWhole(ctx, lc, fwd, ids, cfg.PerVertex.PerEdge())
	cfg.Progress.Done()
	if err != nil {
		return fmt.Errorf("count per vertex with %s: %w", lc.Name(), err)
	}
	rep.Triangles = res.Triangles
	rep.Kernel = worker.KernelName(lc)
	rep.Device = "cpu"
	rep.Seconds.Count = since(t)
	rep.Seconds.Kernel = res.KernelTime.Seconds()
	if cfg.Verify {
		if err := verify(ctx, kernels.Whole(fwd), res.Triangles, lc.Name(), rep); err != nil {
			return err
		}
	}
	return finishPerVertex(ctx, c, cfg, rep)
}

// finishPerVertex checks, writes and summarises per-vertex counts.
func finishPerVertex(ctx context.Context, c *counts.Counts, cfg *Config, rep *Report) error {
	t := time.Now()
	cfg.Progress.Start("write", "", -1)
	sum, err := counts.Finish(ctx, c, rep.Triangles, cfg.PerVertex)
	cfg.Progress.Done()
	if err != nil {
		return err
	}
	sum.Seconds = since(t)
	avg := sum.AverageClustering
	rep.AverageClustering = &avg
	rep.PerVertex = sum
	return nil
}
