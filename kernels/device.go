package kernels

import "context"

// PrepStats are the figures of a graph cleaned and oriented on a device:
// what the host path reports as graph.CleanStats and graph.OrientStats.
type PrepStats struct {
	Vertices   uint64 // n, the compact id space
	InputPairs uint64 // pairs given
	SelfLoops  uint64 // dropped
	Duplicates uint64 // non-loop pairs that added no new undirected edge
	Edges      uint64 // undirected simple edges = forward edges
	Wedges     uint64 // sum of d(d-1)/2 over undirected degrees
	MaxDegree  uint64 // undirected
	MaxForward uint64 // largest forward degree
	// IsolatedIDs are the input ids seen only in self-loops (dropped);
	// set by PrepareResidentIDs only.
	IsolatedIDs uint64
}

// DevicePreprocessor is a Counter that can clean, orient (degree order)
// and count a whole graph on its own device, without the forward graph
// passing through host memory. Callers ask for it with a type assertion
// to this interface and fall back to the host pipeline without it.
type DevicePreprocessor interface {
	Counter
	// PrepareResident builds on the device the forward graph of pairs:
	// n-vertex compact ids, u then v for each pair (any direction,
	// duplicates and self-loops allowed), the graph the host builds with
	// graph.Clean and graph.Orient(OrderDegree) from the same ids. An
	// error for which DoesNotFit is true means the graph does not fit the
	// device and the host path should be used instead.
	PrepareResident(ctx context.Context, pairs []uint32, n uint64) (PrepStats, error)
	// CountResident counts the graph the last PrepareResident built.
	CountResident(ctx context.Context) (Result, error)
	// DoesNotFit reports whether err says a graph or subtask does not fit
	// the device's memory.
	DoesNotFit(err error) bool
}

// IDPairs is an edge list in the input's own ids, u then v for each pair
// (any direction, duplicates and self-loops allowed), in one of two
// widths: P32 when every id is below 2^32, else P64. Exactly one is used:
// P64 when it is not nil.
type IDPairs struct {
	P32 []uint32
	P64 []uint64
	// Staged, when not nil, holds every id of P32 on the device already
	// (IDStager.StageIDs, then IDStage.Add over all of P32): the device
	// starts from that copy and consumes it, P32 staying the host's copy
	// for a host path. The caller still calls Staged.Release.
	Staged IDStage
}

// IDStager is a Counter whose device takes a 32-bit edge list in pieces
// while the rest of it is still being read, so that the upload overlaps
// the read; PrepareResidentIDs and OrientIDsOnDevice then start from the
// device's copy (IDPairs.Staged).
type IDStager interface {
	Counter
	// StageIDs reserves the device's room for words 32-bit ids. An error
	// means the list goes to the device the ordinary way.
	StageIDs(words int) (IDStage, error)
}

// IDStage is a 32-bit edge list on its way to a device.
type IDStage interface {
	// Add starts copying ids[lo:hi] into the same words of the device's
	// copy and may return before the copy is done: those ids must not
	// change until Release. ids is the whole edge list, the same slice
	// (of the words given to StageIDs) on every call, and each word is
	// added once. Calls may come from several goroutines at once.
	Add(ids []uint32, lo, hi int) error
	// Release frees what the stage holds: the device's copy when nothing
	// consumed it, and the host memory it pinned. The ids may change
	// afterwards. It waits for pending copies; later calls are no-ops.
	Release() error
}

// Pairs is the number of pairs.
func (p IDPairs) Pairs() int {
	if p.P64 != nil {
		return len(p.P64) / 2
	}
	return len(p.P32) / 2
}

// IDPreprocessor is a DevicePreprocessor that also compacts the input's
// own ids on its device, so the host neither compacts nor cleans.
type IDPreprocessor interface {
	DevicePreprocessor
	// PrepareResidentIDs builds on the device the forward graph of p as
	// PrepareResident does, after giving the ids with a non-loop edge
	// compact ids in ascending order of their input ids (as graph.Compact
	// does). Its stats' Vertices are those ids and IsolatedIDs the ids
	// seen only in self-loops. DoesNotFit errors mean the host should
	// compact.
	PrepareResidentIDs(ctx context.Context, p IDPairs) (PrepStats, error)
}
