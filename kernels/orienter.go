package kernels

import (
	"context"

	"github.com/trigrid/trigrid/graph"
)

// DeviceOrienter is a Counter whose device can clean and orient a graph
// (degree order) and hand the forward graph back to the host, for callers
// that split it into blocks themselves. Callers ask for it with a type
// assertion and build the forward graph on the host without it.
type DeviceOrienter interface {
	Counter
	// OrientOnDevice builds the forward graph of pairs (n-vertex compact
	// ids, u then v for each pair, any direction, duplicates and self-loops
	// allowed) on the device and returns it with rank[compact id] =
	// forward id: the CSR and ranks that graph.Clean then
	// graph.Orient(OrderDegree) build from the same ids, every id in
	// 0..n-1 kept. An error for which DoesNotFit is true means the graph
	// does not fit the device and the host should build it instead.
	OrientOnDevice(ctx context.Context, pairs []uint32, n uint64) (fwd *graph.CSR, rank []uint32, st PrepStats, err error)
	// DoesNotFit reports whether err says a graph does not fit the
	// device's memory.
	DoesNotFit(err error) bool
}

// IDOrienter is a DeviceOrienter that also compacts the input's own ids
// on its device, so the host neither compacts nor cleans before splitting
// the forward graph into blocks.
type IDOrienter interface {
	DeviceOrienter
	// OrientIDsOnDevice builds the forward graph of p (the input's own
	// ids, any values) on the device: the ids with a non-loop edge become
	// compact ids in ascending order of their input ids (as graph.Compact
	// does), then as OrientOnDevice. ids[forward id] is the input id.
	// st.Vertices counts the compact ids, st.IsolatedIDs the ids seen only
	// in self-loops. An error for which DoesNotFit is true means the pairs
	// do not fit the device and the host should compact them.
	OrientIDsOnDevice(ctx context.Context, p IDPairs) (fwd *graph.CSR, ids []uint64, st PrepStats, err error)
}

// MarkedOrienter is a DeviceOrienter whose device also maps ids the host
// has numbered but not rewritten (graph.MarkPairs) as it reads them, so
// that the host need not rewrite every pair first.
type MarkedOrienter interface {
	DeviceOrienter
	// OrientMarkedOnDevice builds the forward graph of m's pairs mapped
	// through m.Bits (which must be set) to compact ids: the forward graph
	// and ranks OrientOnDevice makes of the pairs m.Compact would write, in
	// pieces (as for pairs that do not fit the device whole). st counts
	// m's pairs and self-loops as given. An error for which DoesNotFit is
	// true leaves m's pairs as they were: the caller compacts them.
	OrientMarkedOnDevice(ctx context.Context, m *graph.MarkedPairs) (fwd *graph.CSR, rank []uint32, st PrepStats, err error)
}

// OrientPreparer is a DeviceOrienter that can ready, while the host still
// writes the pairs (compacts their ids in place), the host memory an
// OrientOnDevice of them would prepare first.
type OrientPreparer interface {
	DeviceOrienter
	// PrepareOrient readies host memory for an OrientOnDevice of pairs or
	// of a prefix of them, without reading pairs, and returns at once.
	PrepareOrient(pairs []uint32)
}
