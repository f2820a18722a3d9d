package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
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
	if lc != counter {
		rep.Device = "cpu" // the CPU's auto kernel stood in
	}
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
	rep.Seconds.Write = sum.Seconds
	avg := sum.AverageClustering
	rep.AverageClustering = &avg
	rep.PerVertex = sum
	return nil
}

// shardSums prepares the per-vertex sums of a stored partitioning when o
// wants them, with the id map that turns forward ids back into the
// input's. Shards without an id map cannot name vertices: an error.
func shardSums(ctx context.Context, store storage.Store, m *storage.Manifest, o counts.Options) (*counts.Blocks, []uint64, error) {
	if !o.Wanted() {
		return nil, nil, nil
	}
	if m.IDMap == nil {
		return nil, nil, fmt.Errorf("per-vertex counts need the id map, which this partitioning does not have (partition the graph again)")
	}
	ids, err := storage.ReadIDMap(ctx, store, *m.IDMap)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(ids)) != m.Graph.Vertices {
		return nil, nil, fmt.Errorf("id map %s has %d ids for %d vertices", m.IDMap.File, len(ids), m.Graph.Vertices)
	}
	l, err := partition.ManifestLayout(m)
	if err != nil {
		return nil, nil, err
	}
	return counts.NewBlocks(l, m.Graph.Vertices, shardEdges(m), o.PerEdge()), ids, nil
}

// shardEdges returns the edge count of each block of m (0 for blocks
// without a shard).
func shardEdges(m *storage.Manifest) func(i, j int) int64 {
	idx := make(map[[2]int]int64, len(m.Shards))
	for _, s := range m.Shards {
		idx[[2]int{s.I, s.J}] = int64(s.Edges)
	}
	return func(i, j int) int64 { return idx[[2]int{i, j}] }
}

// countFilePerVertex is CountFile with per-vertex counts: the forward
// graph and the input id of each forward id come from loadForBlocks, then
// the whole graph is counted per vertex on the first slot. On one GPU the
// device builds the forward graph from the input's own ids and "splits"
// it into a single block (P = 1: the forward graph itself) that stays
// resident, so that the count uploads nothing; the host gets the block
// back for the degrees and the per-edge rows. Elsewhere, or when the
// block does not fit beside the forward graph, the forward graph is built
// as for any partitioned count and uploaded for the count.
func countFilePerVertex(ctx context.Context, path string, cfg Config, rep *Report, start time.Time) (*Report, error) {
	cfg.P, cfg.Scheme = 1, storage.SchemeHash
	split := &deviceSplit{}
	fwd, ids, err := loadForBlocks(ctx, path, &cfg, rep, true, split)
	defer split.wait()
	if err != nil {
		return nil, err
	}
	slot := cfg.Slots[0]
	if split.part != nil {
		fwd = split.part.Block(0, 0)
		var release func()
		slot, release = handOver(slot, split.counter, cfg.Logger)
		defer release()
		// The one-block split is part of building the forward graph.
		rep.Seconds.Order += rep.Seconds.Partition
		rep.Seconds.Partition = 0
	}
	counter, err := slot.NewCounter("")
	if err != nil {
		return nil, err
	}
	defer closeCounter(counter, cfg.Logger)
	rep.Device = cfg.Device
	if err := countWholePerVertex(ctx, fwd, ids, counter, &cfg, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	finish(rep, start)
	return rep, nil
}
