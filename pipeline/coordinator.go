package pipeline

import (
	"context"
	"log/slog"

	"github.com/trigrid/trigrid/coordinator"
	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// Partitioner is the coordinator's coordinator.Partitioner: it cuts a
// submitted graph file with the pipeline every command shares (read ->
// clean -> orient, id map kept), reading it as the job says (format, bad
// lines). A job with P 0 gets the smallest P whose subtasks fit the
// request's Budget, the workers' device memory.
type Partitioner struct {
	// Logger receives the partitioning's messages; nil discards them.
	Logger *slog.Logger
}

// CheckRead implements coordinator.Partitioner: an unknown format is an
// error naming the known ones.
func (p Partitioner) CheckRead(o coordinator.ReadOptions) error {
	_, err := jobReadOptions(o)
	return err
}

// Partition implements coordinator.Partitioner.
func (p Partitioner) Partition(ctx context.Context, req coordinator.PartitionRequest) (*storage.Manifest, error) {
	ro, err := jobReadOptions(req.Read)
	if err != nil {
		return nil, err
	}
	logger := p.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := DefaultConfig()
	cfg.Logger = logger
	cfg.Budget = req.Budget
	cfg.Read.Format, cfg.Read.SkipBadLines = ro.Format, ro.SkipBadLines
	if _, err := PartitionFile(ctx, req.Graph, req.Store, cfg, partition.Config{Scheme: req.Scheme, P: req.P, Logger: logger}); err != nil {
		return nil, err
	}
	return storage.ReadManifest(ctx, req.Store)
}

func jobReadOptions(o coordinator.ReadOptions) (edgeio.ReadOptions, error) {
	ro := edgeio.ReadOptions{SkipBadLines: o.SkipBadLines}
	if o.Format != "" {
		f, err := edgeio.ParseFormat(o.Format)
		if err != nil {
			return ro, err
		}
		ro.Format = f
	}
	return ro, nil
}

// ShardCounts is the coordinator's coordinator.CountsReader: it loads
// each block of a per-vertex job from the job's shard store.
type ShardCounts struct{}

// ReadCounts implements coordinator.CountsReader.
func (ShardCounts) ReadCounts(ctx context.Context, req coordinator.CountsRequest) (*counts.Counts, error) {
	return req.Sums.Counts(ctx, req.IDs, shardEdges(req.Manifest), func(ctx context.Context, i, j int) (*graph.CSR, error) {
		return storage.LoadShard(ctx, req.Store, req.Manifest, i, j)
	})
}
