package kernels

import (
	"context"

	"github.com/trigrid/trigrid/graph"
)

// BlockGroups says how a device split groups the vertices of a forward
// graph: P groups, by id mod P (the hash scheme, local id = id div P) when
// Bounds is nil, else by ranges: range r holds the ids Bounds[r] ..
// Bounds[r+1]-1 and belongs to group Groups[r], whose local ids number its
// ranges' vertices in id order (partition.Layout's rule for both schemes).
type BlockGroups struct {
	P      int
	Bounds []uint64
	Groups []int32
}

// DeviceSplitter is an IDOrienter that can also keep the forward graph on
// its device, split it there into the P x P blocks of a 2D partition and
// keep those blocks resident for the subtasks it counts next: a subtask
// that names the very blocks SplitOnDevice returned uploads none of them.
// Callers ask for it with a type assertion.
type DeviceSplitter interface {
	IDOrienter
	// KeepIDsOnDevice is OrientIDsOnDevice that leaves the forward graph on
	// the device for SplitOnDevice or ForwardOut and returns only the
	// stats and, when wantIDs, ids[forward id] = input id. host, when not
	// nil, is the memory (MakeHostBlocks for these pairs) SplitOnDevice is
	// to copy the blocks back into; KeepIDsOnDevice returns only once host
	// no longer reads the pairs.
	KeepIDsOnDevice(ctx context.Context, p IDPairs, wantIDs bool, host *HostBlocks) (ids []uint64, st PrepStats, err error)
	// SplitOnDevice splits the forward graph KeepIDsOnDevice left into the
	// blocks of g and gives the forward graph up. The blocks come back in
	// host memory, B[i][j] at i*P+j, equal to partition.SplitLayout's for
	// the same groups, and stay resident on the device. An error for
	// which DoesNotFit is true means they do not fit beside the forward
	// graph, which then stays on the device.
	SplitOnDevice(ctx context.Context, g BlockGroups) ([]*graph.CSR, error)
	// ForwardOut copies the forward graph KeepIDsOnDevice left back to the
	// host; with free it is then given up on the device.
	ForwardOut(ctx context.Context, free bool) (*graph.CSR, error)
	// MaxSplit is the largest P SplitOnDevice takes.
	MaxSplit() int
}
