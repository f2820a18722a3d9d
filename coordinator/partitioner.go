package coordinator

import (
	"context"

	"github.com/trigrid/trigrid/storage"
)

// Partitioner cuts the graph files of submitted jobs into shards. The
// coordinator reads no graph file itself: the command hands it one (the
// pipeline's, which reads, cleans and orients as every command does)
// through Config.Partitioner. Its methods may be called from several
// goroutines at once.
type Partitioner interface {
	// CheckRead reports whether Partition can read graph files as opts
	// say; an unknown format is an error naming the known ones. Submit
	// refuses a job whose options it rejects.
	CheckRead(opts ReadOptions) error
	// Partition reads, cleans and orients req.Graph, writes its shards
	// and manifest into req.Store and returns the manifest. ctx ends when
	// the job is cancelled or the coordinator stops.
	Partition(ctx context.Context, req PartitionRequest) (*storage.Manifest, error)
}

// PartitionRequest asks a Partitioner to cut a graph file into shards.
type PartitionRequest struct {
	// Graph is the path of the edge file on the coordinator.
	Graph  string
	Scheme storage.Scheme
	// P is the number of groups; 0 asks the partitioner to choose the
	// smallest P whose subtasks fit Budget bytes of device memory.
	P      int
	Budget int64
	// Store receives the shards and the manifest.
	Store storage.Store
	// Read says how the graph file is parsed, as its job asked.
	Read ReadOptions
}

// ReadOptions say how a graph file is parsed: api.JobSpec's Format and
// SkipBadLines, as submitted.
type ReadOptions struct {
	// Format names the file's format; "" lets the partitioner tell it
	// from the file.
	Format string
	// SkipBadLines skips lines that are not edges instead of failing on
	// the first.
	SkipBadLines bool
}
