package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// PartitionFile partitions a graph file ("-" is standard input) into
// store. With pc.MemLimit = 0 the graph goes through Load (read -> clean
// -> orient by degree, the pipeline every command shares) and is split in
// memory; with a limit the external-memory partitioner streams it, which
// writes byte-identical shards for the same partition id. cfg says how the
// file is read; its Order must be degree. pc.P = 0 chooses the smallest P
// whose largest subtask fits cfg.Budget under cfg.Model, from the loaded
// graph; it needs a positive Budget and no MemLimit.
func PartitionFile(ctx context.Context, path string, store storage.Store, cfg Config, pc partition.Config) (*partition.Summary, error) {
	cfg.fill()
	if pc.P == 0 && (pc.MemLimit > 0 || cfg.Budget <= 0) {
		return nil, fmt.Errorf("%s: choosing P needs a memory budget and the in-memory partitioner", path)
	}
	if pc.MemLimit > 0 {
		ro := cfg.Read
		ro.Progress = nil
		return partition.PartitionFile(ctx, path, ro, store, pc)
	}
	start := time.Now()
	cfg.Order = graph.OrderDegree
	var rep Report
	fwd, ids, err := Load(ctx, path, cfg, &rep, true)
	if err != nil {
		return nil, err
	}
	rm, in := rep.Removed, rep.Input
	stats := storage.GraphStats{Vertices: rep.Vertices, Edges: rep.Edges, Wedges: rep.Wedges,
		MaxDegree: rep.MaxDegree, Order: rep.Order, Source: path, MaxOutDegree: rep.MaxOutDegree,
		Removed: &storage.RemovedStats{SelfLoops: rm.SelfLoops, Duplicates: rm.Duplicates, IsolatedIDs: rm.IsolatedIDs, BadLines: rm.BadLines},
		Input:   &storage.InputStats{Format: in.Format, Compression: in.Compression, Bytes: in.Bytes, RawEdges: in.RawEdges}}
	if pc.P == 0 {
		if pc.P, err = partition.ChoosePForGraph(fwd, pc.Scheme, cfg.Budget, cfg.Model, cfg.Workers); err != nil {
			return nil, fmt.Errorf("%s: choosing P for %d bytes: %w", path, cfg.Budget, err)
		}
		cfg.Logger.Info("chose P", "p", pc.P, "budget", cfg.Budget)
	}
	clean := graph.CleanStats{InputEdges: uint64(in.RawEdges), Vertices: rep.Vertices, Edges: rep.Edges, SelfLoops: rm.SelfLoops,
		Duplicates: rm.Duplicates, IsolatedIDs: rm.IsolatedIDs}
	return partition.PartitionLoaded(ctx, fwd, ids, stats, clean, start, store, pc)
}
