package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// Source hands out the decoded blocks B[i][j] of one partitioned graph.
// Implementations must be safe for concurrent use; the returned CSR is
// shared and must not be modified.
type Source interface {
	Block(ctx context.Context, i, j int) (*graph.CSR, LoadTimes, error)
}

// LoadTimes is what loading one block cost: getting its bytes and
// decoding them. Both are zero for blocks already in memory.
type LoadTimes struct {
	Fetch, Decode time.Duration
}

// PartitionSource serves the blocks of an in-memory partition.
type PartitionSource struct{ Part *partition.Partition }

// Block returns B[i][j].
func (s PartitionSource) Block(ctx context.Context, i, j int) (*graph.CSR, LoadTimes, error) {
	p := s.Part.P()
	if i < 0 || j < 0 || i >= p || j >= p {
		return nil, LoadTimes{}, fmt.Errorf("worker: block (%d,%d) outside a %dx%d partition", i, j, p, p)
	}
	return s.Part.Block(i, j), LoadTimes{}, nil
}

// StoreSource serves the blocks of a stored partitioning, checked against
// the manifest and decoded by package storage (whose errors name the
// shard).
type StoreSource struct {
	Store    storage.Store
	Manifest *storage.Manifest
}

// Block fetches and decodes B[i][j].
func (s StoreSource) Block(ctx context.Context, i, j int) (*graph.CSR, LoadTimes, error) {
	var lt LoadTimes
	t := time.Now()
	data, err := storage.FetchShard(ctx, s.Store, s.Manifest, i, j)
	lt.Fetch = time.Since(t)
	if err != nil {
		return nil, lt, err
	}
	t = time.Now()
	b, err := storage.DecodeBlock(s.Manifest, i, j, data)
	lt.Decode = time.Since(t)
	return b, lt, err
}
