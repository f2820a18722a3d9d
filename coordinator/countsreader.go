package coordinator

import (
	"context"

	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/storage"
)

// CountsReader turns a done per-vertex job's summed partial counts into
// its counts, reading the job's blocks for their edges. The coordinator
// never loads a block's CSR arrays itself: the command hands it a reader
// (the pipeline's) through Config.CountsReader. ReadCounts may be called
// from several goroutines at once.
type CountsReader interface {
	// ReadCounts returns req.Sums in the input's ids (req.IDs), with the
	// edges of every block of req.Manifest (and their support, when the
	// sums have it) read from req.Store. The coordinator checks the
	// counts against the job's total and writes them, iterating their
	// edges once per file written; a block that cannot be read then is
	// reported through the counts' EdgeErr.
	ReadCounts(ctx context.Context, req CountsRequest) (*counts.Counts, error)
}

// CountsRequest asks a CountsReader for a done per-vertex job's counts.
type CountsRequest struct {
	// Store holds the job's shards, as Manifest lists them.
	Store    storage.Store
	Manifest *storage.Manifest
	// Sums are the partial counts of the job's subtasks, each added once;
	// IDs is the input id of each forward id (the store's id map).
	Sums *counts.Blocks
	IDs  []uint64
}
