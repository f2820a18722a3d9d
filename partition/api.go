package partition

import (
	"context"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/storage"
)

// PartitionGraph cuts an oriented forward graph with cfg's scheme and P and
// stores its shards and manifest in store, the manifest last. On an error
// or cancellation the files it stored are removed again (when the store
// is a storage.Remover). The store must hold no other partitioning (a
// directory is made ready by OpenOutput): old and new shards would mix.
func PartitionGraph(ctx context.Context, fwd *graph.CSR, stats storage.GraphStats, store storage.Store, cfg Config) (sum *Summary, err error) {
	ts := &trackedStore{Store: store}
	defer func() {
		if err != nil {
			ts.undo(ctx, cfg.logger())
		}
	}()
	return partitionGraph(ctx, fwd, stats, nil, ts, cfg, newClock(), &Summary{})
}

// maxRowLen is the largest row of c: the forward max degree of a forward
// graph.
func maxRowLen(c *graph.CSR) int64 {
	var d int64
	for r := range c.NumRows() {
		d = max(d, c.Degree(r))
	}
	return d
}

func partitionGraph(ctx context.Context, fwd *graph.CSR, stats storage.GraphStats, ids []uint64,
	store storage.Store, cfg Config, clock *stageClock, sum *Summary) (*Summary, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if stats.MaxOutDegree == nil {
		d := maxRowLen(fwd)
		stats.MaxOutDegree = &d
	}
	cfg.progress("split", 0, -1)
	part, err := splitCtx(ctx, fwd, &cfg)
	if err != nil {
		return nil, err
	}
	clock.mark("split")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idm := startIDMap(ctx, store, ids)
	shards, raw, err := writeBlocks(ctx, part.Layout, cfg.PartitionID, store, cfg.Workers, &cfg,
		func(i, j int) (*graph.CSR, error) { return part.Block(i, j), nil },
		func(i, j int) int64 { return part.Block(i, j).NumEdges() })
	if err != nil {
		cancel()
		idm.wait()
		return nil, err
	}
	if err := finish(ctx, store, part.Layout, &cfg, stats, idm, shards, raw, clock, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

func splitCtx(ctx context.Context, fwd *graph.CSR, cfg *Config) (*Partition, error) {
	l, err := NewLayout(fwd, cfg.Scheme, cfg.P, cfg.Workers)
	if err != nil {
		return nil, err
	}
	return SplitLayout(ctx, fwd, l, cfg.Workers)
}

// LoadGraph reads, cleans and orients (degree order) an edge file in
// memory: the pipeline PartitionFile and the external path must agree on.
// It returns the forward graph, the input id of every forward id, and the
// statistics for a manifest.
func LoadGraph(ctx context.Context, path string, ro edgeio.ReadOptions, workers int) (*graph.CSR, []uint64, storage.GraphStats, graph.CleanStats, error) {
	return loadGraph(ctx, path, ro, workers, nil)
}

// loadGraph is LoadGraph reporting its clean and orient stages to
// progress, when not nil (the read reports through ro.Progress).
func loadGraph(ctx context.Context, path string, ro edgeio.ReadOptions, workers int,
	progress func(stage string, done, total int64)) (*graph.CSR, []uint64, storage.GraphStats, graph.CleanStats, error) {
	var st storage.GraphStats
	edges, rs, err := edgeio.ReadFile(ctx, path, ro)
	if err != nil {
		return nil, nil, st, graph.CleanStats{}, err
	}
	co := graph.CleanOptions{Workers: workers}
	if progress != nil {
		co.Progress = func(done, total int64) { progress("clean", done, total) }
		progress("clean", 0, -1)
	}
	u, cst, err := graph.Clean(edges, co)
	edges = nil
	if err != nil {
		return nil, nil, st, cst, fmt.Errorf("partition: %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, st, cst, err
	}
	if progress != nil {
		progress("orient", 0, -1)
	}
	fwd, rank, ost, err := graph.Orient(u, graph.OrderDegree, workers)
	if err != nil {
		return nil, nil, st, cst, fmt.Errorf("partition: %s: %w", path, err)
	}
	ids := make([]uint64, len(rank))
	for c, r := range rank {
		ids[r] = u.OrigID[c]
	}
	st = storage.GraphStats{
		Vertices: fwd.NumRows(), Edges: fwd.NumEdges(), Wedges: ost.Wedges,
		MaxDegree: ost.MaxDegree, Order: graph.OrderDegree.String(), Source: path,
		MaxOutDegree: &ost.MaxOutDegree,
		Removed:      removedStats(cst, rs),
		Input:        inputStats(rs),
	}
	return fwd, ids, st, cst, nil
}

// PartitionFile partitions an edge file into store. With cfg.MemLimit = 0
// it reads the whole graph (read -> clean -> orient by degree -> split ->
// encode); with a limit it runs the external-memory partitioner, which
// writes byte-identical shards for the same partition id. The manifest is
// written last; on an error or cancellation the files stored so far are
// removed again, as PartitionGraph does.
func PartitionFile(ctx context.Context, path string, ro edgeio.ReadOptions, store storage.Store, cfg Config) (sum *Summary, err error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	ts := &trackedStore{Store: store}
	store = ts
	defer func() {
		if err != nil {
			ts.undo(ctx, cfg.Logger)
		}
	}()
	if ro.Progress == nil && cfg.Progress != nil {
		ro.Progress = func(done, total int64) { cfg.progress("read", done, total) }
	}
	if cfg.MemLimit > 0 {
		return partitionExternal(ctx, path, ro, store, cfg)
	}
	clock := newClock()
	if ro.Workers == 0 {
		ro.Workers = cfg.Workers
	}
	fwd, ids, st, cst, err := loadGraph(ctx, path, ro, cfg.Workers, cfg.progress)
	if err != nil {
		return nil, err
	}
	clock.mark("read+clean+orient")
	return partitionGraph(ctx, fwd, st, ids, store, cfg, clock, &Summary{Clean: &cst})
}

// PartitionInMemory splits a forward graph into blocks without writing
// shards, for `trigrid count --partitions N`: the blocks, their subtasks
// and balance come straight from memory.
func PartitionInMemory(ctx context.Context, fwd *graph.CSR, cfg Config) (*Partition, error) {
	if cfg.PartitionID == 0 {
		cfg.PartitionID = 1 // no shards carry it; skip crypto/rand
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	return splitCtx(ctx, fwd, &cfg)
}

// removedStats and inputStats are the manifest's record of the read and
// the cleaning.
func removedStats(c graph.CleanStats, rs edgeio.ReadStats) *storage.RemovedStats {
	return &storage.RemovedStats{SelfLoops: c.SelfLoops, Duplicates: c.Duplicates, IsolatedIDs: c.IsolatedIDs, BadLines: rs.BadLines}
}

func inputStats(rs edgeio.ReadStats) *storage.InputStats {
	return &storage.InputStats{Format: rs.Format.String(), Compression: rs.Compression, Bytes: rs.Bytes, RawEdges: rs.Edges}
}

// PartitionLoaded is PartitionGraph for a graph the caller read, cleaned
// and oriented by degree, starting at start: ids maps forward ids to input
// ids (stored as the id map; nil stores none) and clean is what cleaning
// removed. The summary's time runs from start, the loading counted as the
// stage "read+clean+orient".
func PartitionLoaded(ctx context.Context, fwd *graph.CSR, ids []uint64, stats storage.GraphStats, clean graph.CleanStats,
	start time.Time, store storage.Store, cfg Config) (sum *Summary, err error) {
	ts := &trackedStore{Store: store}
	defer func() {
		if err != nil {
			ts.undo(ctx, cfg.logger())
		}
	}()
	clock := &stageClock{start: start, last: start}
	clock.mark("read+clean+orient")
	return partitionGraph(ctx, fwd, stats, ids, ts, cfg, clock, &Summary{Clean: &clean})
}
