package kernels

import (
	"context"
	"errors"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
)

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

// IDPairs is an edge list in the input's own ids, u then v for each pair
// (any direction, duplicates and self-loops allowed), in one of two
// widths: P32 when every id is below 2^32, else P64. Exactly one is used:
// P64 when it is not nil.
type IDPairs struct {
	P32 []uint32
	P64 []uint64
	// Staged, when not nil, holds every id of P32 on the device already
	// (Device.StageIDs, then IDStage.Add over all of P32): the device
	// starts from that copy and consumes it, P32 staying the host's copy
	// for a host path. The caller still calls Staged.Release.
	Staged *IDStage
}

// Pairs is the number of pairs.
func (p IDPairs) Pairs() int {
	if p.P64 != nil {
		return len(p.P64) / 2
	}
	return len(p.P32) / 2
}

// DeviceCaps says which of Device's steps a device takes; a method of a
// step it does not take returns ErrNotOffered.
type DeviceCaps struct {
	// Prepare: PrepareResident and CountResident (compacted pairs cleaned,
	// oriented and counted in place); PrepareIDs: PrepareResidentIDs too
	// (the input's own ids).
	Prepare, PrepareIDs bool
	// Stage: StageIDs (the input handed over while it is read).
	Stage bool
	// Orient: OrientOnDevice and PrepareOrient (compacted pairs);
	// OrientIDs: OrientIDsOnDevice (the input's own ids); OrientMarked:
	// OrientMarkedOnDevice (ids the host numbered, mapped as read) and
	// OrientSpanOnDevice (ids numbered on the device).
	Orient, OrientIDs, OrientMarked bool
	// MaxSplit is the largest P SplitOnDevice takes (KeepIDsOnDevice,
	// SplitOnDevice and ForwardOut); 0: it splits none.
	MaxSplit int
}

// ErrNotOffered is the error of a Device method whose step the device does
// not take (DeviceCaps).
var ErrNotOffered = errors.New("kernels: the device does not offer this step")

// Device is a Counter whose device also cleans, orients, splits and holds
// graphs itself, so that they need not pass through host memory: the host
// pipeline's steps, on the device, in two id forms (compacted pairs, or
// the input's own ids: IDPairs). Caps says which steps it takes; callers
// read it once and use the host pipeline for the others.
type Device interface {
	Counter
	// Caps says which steps the device takes.
	Caps() DeviceCaps
	// DoesNotFit reports whether err says a graph, its pairs or a subtask
	// do not fit the device's memory: the caller takes the host's way.
	DoesNotFit(err error) bool
	// DeviceStats reports the device's figures; they stay available after
	// the counter is closed.
	DeviceStats() DeviceStats

	// PrepareResident builds on the device the forward graph of pairs:
	// n-vertex compact ids, u then v for each pair (any direction,
	// duplicates and self-loops allowed), the graph the host builds with
	// graph.Clean and graph.Orient(OrderDegree) from the same ids.
	// PrepareResidentIDs does the same from p, after giving the ids with a
	// non-loop edge compact ids in ascending order of their input ids (as
	// graph.Compact does); its stats' Vertices are those ids and
	// IsolatedIDs the ids seen only in self-loops. DoesNotFit errors mean
	// the host should compact (and clean).
	PrepareResident(ctx context.Context, pairs []uint32, n uint64) (PrepStats, error)
	PrepareResidentIDs(ctx context.Context, p IDPairs) (PrepStats, error)
	// CountResident counts the graph the last PrepareResident(IDs) built.
	CountResident(ctx context.Context) (Result, error)

	// StageIDs reserves the device's room for words 32-bit ids, handed
	// over in pieces while the rest is still read (IDStage);
	// PrepareResidentIDs and OrientIDsOnDevice then start from the
	// device's copy (IDPairs.Staged). An error means the list goes to the
	// device the ordinary way.
	StageIDs(words int) (*IDStage, error)

	// OrientOnDevice builds the forward graph of pairs (as
	// PrepareResident) and hands it back with rank[compact id] = forward
	// id, every id in 0..n-1 kept. OrientIDsOnDevice does the same from
	// p's own ids (compacted as PrepareResidentIDs does), with ids[forward
	// id] = input id. OrientMarkedOnDevice builds the forward graph of m's
	// pairs mapped through m.Bits (which must be set) to compact ids, in
	// pieces; st counts m's pairs and self-loops as given, and a
	// DoesNotFit error leaves m's pairs as they were. DoesNotFit errors
	// mean the host should build the forward graph (or compact the ids).
	OrientOnDevice(ctx context.Context, pairs []uint32, n uint64) (fwd *graph.CSR, rank []uint32, st PrepStats, err error)
	OrientIDsOnDevice(ctx context.Context, p IDPairs) (fwd *graph.CSR, ids []uint64, st PrepStats, err error)
	OrientMarkedOnDevice(ctx context.Context, m *graph.MarkedPairs) (fwd *graph.CSR, rank []uint32, st PrepStats, err error)
	// OrientSpanOnDevice builds the forward graph of pairs of the input's
	// own ids, each below span, in pieces, the device numbering the ids:
	// the vertices are the ids with a non-loop edge, in ascending order
	// (as graph.Compact numbers them), rank[id] their forward ids (span
	// words, ^uint32(0) for an id without one). st counts the pairs and
	// self-loops as given, Vertices the ids with an edge, IsolatedIDs
	// none (the device cannot tell the ids seen only in loops). A
	// DoesNotFit error leaves pairs as they were.
	OrientSpanOnDevice(ctx context.Context, pairs []uint32, span uint64) (fwd *graph.CSR, rank []uint32, st PrepStats, err error)
	// PrepareOrient readies, while the host still writes pairs (compacts
	// their ids in place), the host memory an OrientOnDevice of them or of
	// a prefix of them would prepare first, without reading pairs, and
	// returns at once.
	PrepareOrient(pairs []uint32)

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
	// the same groups, and stay resident on the device: a subtask that
	// names those very blocks uploads none of them. An error for which
	// DoesNotFit is true means they do not fit beside the forward graph,
	// which then stays on the device.
	SplitOnDevice(ctx context.Context, g BlockGroups) ([]*graph.CSR, error)
	// ForwardOut copies the forward graph KeepIDsOnDevice left back to the
	// host; with free it is then given up on the device.
	ForwardOut(ctx context.Context, free bool) (*graph.CSR, error)
}

// IDStage is a 32-bit edge list on its way to a device (Device.StageIDs).
type IDStage struct {
	handle  any
	add     func(ids []uint32, lo, hi int) error
	release func() error
}

// NewIDStage is the stage a device hands out: handle is the device's own
// record of it (Handle), add and release implement Add and Release.
func NewIDStage(handle any, add func(ids []uint32, lo, hi int) error, release func() error) *IDStage {
	return &IDStage{handle: handle, add: add, release: release}
}

// AlignedPieces cuts words into pieces for an IDStage: the first word of
// each piece, ascending, the pieces after the first starting at addresses
// aligned to piece bytes (a power of two of a page or more), so that no
// two pieces, each pinned on its own, share a page. A piece ends where the
// next starts; the last at len(words).
func AlignedPieces(words []uint32, piece int) []int {
	if len(words) == 0 {
		return nil
	}
	p := uintptr(piece)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(words)))
	first := int((p - base%p) % p / 4)
	starts := []int{0}
	for w := first; w < len(words); w += piece / 4 {
		if w > 0 {
			starts = append(starts, w)
		}
	}
	return starts
}

// Handle is the device's own record of the stage.
func (s *IDStage) Handle() any { return s.handle }

// Add starts copying ids[lo:hi] into the same words of the device's copy
// and may return before the copy is done: those ids must not change until
// Release. ids is the whole edge list, the same slice (of the words given
// to StageIDs) on every call, and each word is added once. Calls may come
// from several goroutines at once.
func (s *IDStage) Add(ids []uint32, lo, hi int) error { return s.add(ids, lo, hi) }

// Release frees what the stage holds: the device's copy when nothing
// consumed it, and the host memory it pinned. The ids may change
// afterwards. It waits for pending copies; later calls are no-ops.
func (s *IDStage) Release() error { return s.release() }

// NoDevice implements every step of Device but Counter's as not offered
// (ErrNotOffered, zero Caps): a Device that takes some steps embeds it and
// implements those.
type NoDevice struct{}

// Caps implements Device: no step.
func (NoDevice) Caps() DeviceCaps { return DeviceCaps{} }

// DoesNotFit implements Device: false.
func (NoDevice) DoesNotFit(error) bool { return false }

// DeviceStats implements Device: none.
func (NoDevice) DeviceStats() DeviceStats { return DeviceStats{} }

// PrepareResident implements Device: not offered.
func (NoDevice) PrepareResident(context.Context, []uint32, uint64) (PrepStats, error) {
	return PrepStats{}, ErrNotOffered
}

// PrepareResidentIDs implements Device: not offered.
func (NoDevice) PrepareResidentIDs(context.Context, IDPairs) (PrepStats, error) {
	return PrepStats{}, ErrNotOffered
}

// CountResident implements Device: not offered.
func (NoDevice) CountResident(context.Context) (Result, error) { return Result{}, ErrNotOffered }

// StageIDs implements Device: not offered.
func (NoDevice) StageIDs(int) (*IDStage, error) { return nil, ErrNotOffered }

// OrientOnDevice implements Device: not offered.
func (NoDevice) OrientOnDevice(context.Context, []uint32, uint64) (*graph.CSR, []uint32, PrepStats, error) {
	return nil, nil, PrepStats{}, ErrNotOffered
}

// OrientIDsOnDevice implements Device: not offered.
func (NoDevice) OrientIDsOnDevice(context.Context, IDPairs) (*graph.CSR, []uint64, PrepStats, error) {
	return nil, nil, PrepStats{}, ErrNotOffered
}

// OrientSpanOnDevice implements Device: not offered.
func (NoDevice) OrientSpanOnDevice(context.Context, []uint32, uint64) (*graph.CSR, []uint32, PrepStats, error) {
	return nil, nil, PrepStats{}, ErrNotOffered
}

// OrientMarkedOnDevice implements Device: not offered.
func (NoDevice) OrientMarkedOnDevice(context.Context, *graph.MarkedPairs) (*graph.CSR, []uint32, PrepStats, error) {
	return nil, nil, PrepStats{}, ErrNotOffered
}

// PrepareOrient implements Device: nothing to ready.
func (NoDevice) PrepareOrient([]uint32) {}

// KeepIDsOnDevice implements Device: not offered.
func (NoDevice) KeepIDsOnDevice(context.Context, IDPairs, bool, *HostBlocks) ([]uint64, PrepStats, error) {
	return nil, PrepStats{}, ErrNotOffered
}

// SplitOnDevice implements Device: not offered.
func (NoDevice) SplitOnDevice(context.Context, BlockGroups) ([]*graph.CSR, error) {
	return nil, ErrNotOffered
}

// ForwardOut implements Device: not offered.
func (NoDevice) ForwardOut(context.Context, bool) (*graph.CSR, error) { return nil, ErrNotOffered }
