package coordinator

import (
	"context"
	"fmt"

	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// What the tests hand a coordinator in place of the command's pipeline:
// package partition alone reads and cuts graph files, and blocks load
// straight from the job's store. The command's own (package pipeline)
// are tested there and end to end in internal/clustertest.

// testPartitioner is a Partitioner on package partition alone: with P
// set, partition.PartitionFile; with P 0, it loads the graph, chooses P
// for the budget and partitions it (without an id map).
type testPartitioner struct{}

func (testPartitioner) CheckRead(o ReadOptions) error {
	_, err := edgeReadOptions(o)
	return err
}

func (testPartitioner) Partition(ctx context.Context, req PartitionRequest) (*storage.Manifest, error) {
	ro, err := edgeReadOptions(req.Read)
	if err != nil {
		return nil, err
	}
	cfg := partition.Config{Scheme: req.Scheme, P: req.P}
	if req.P > 0 {
		if _, err := partition.PartitionFile(ctx, req.Graph, ro, req.Store, cfg); err != nil {
			return nil, err
		}
	} else {
		fwd, _, stats, _, err := partition.LoadGraph(ctx, req.Graph, ro, 0)
		if err != nil {
			return nil, err
		}
		if cfg.P, err = partition.ChoosePForGraph(fwd, req.Scheme, req.Budget, partition.MemModel{}, 0); err != nil {
			return nil, fmt.Errorf("%s: choosing P for %d bytes: %w", req.Graph, req.Budget, err)
		}
		if _, err := partition.PartitionGraph(ctx, fwd, stats, req.Store, cfg); err != nil {
			return nil, err
		}
	}
	return storage.ReadManifest(ctx, req.Store)
}

func edgeReadOptions(o ReadOptions) (edgeio.ReadOptions, error) {
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

// testCounts is a CountsReader that loads each block from the job's store.
type testCounts struct{}

func (testCounts) ReadCounts(ctx context.Context, req CountsRequest) (*counts.Counts, error) {
	return req.Sums.Counts(ctx, req.IDs, manifestEdges(req.Manifest), func(ctx context.Context, i, j int) (*graph.CSR, error) {
		return storage.LoadShard(ctx, req.Store, req.Manifest, i, j)
	})
}

// testKernels are trigrid's kernels, as the command lists them.
func testKernels() KernelNames {
	return KernelNames{CPU: kernels.CPUKernelNames(), GPU: gpu.Kernels()}
}
