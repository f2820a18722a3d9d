package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	par "github.com/trigrid/trigrid/internal/parallel"
)

// HostBlocks is host memory that a device split (Device.SplitOnDevice) copies
// its blocks back into: offsets and columns, made and faulted in on all
// cores by a goroutine of its own, started as soon as the input is read
// so that it is ready by the time the device has built the forward graph.
// A fresh slice is not yet backed by memory; a copy from the device into
// it would take each page's fault on the driver's one thread.
type HostBlocks struct {
	// Offsets and Cols are set once Wait returns.
	Offsets []uint64
	Cols    []uint32
	// Vertices is the pairs' VertexBound, set once Scanned returns.
	Vertices uint64
	scanned  chan struct{} // closed once the pairs are no longer read
	ready    chan struct{}
	stop     atomic.Bool // Discard: make nothing more
}

// MakeHostBlocks starts making the room a split of the graph of pairs
// into p groups can need: p*(n+p) offsets for at most n = min(2 pairs,
// largest id + 1) vertices, and one column per pair. It reads the pairs,
// which must not change until Scanned returns.
func MakeHostBlocks(pairs IDPairs, p int) *HostBlocks {
	h := &HostBlocks{scanned: make(chan struct{}), ready: make(chan struct{})}
	go func() {
		defer close(h.ready)
		np := uint64(pairs.Pairs())
		n := pairs.VertexBound()
		h.Vertices = n
		pairs = IDPairs{} // the pairs may go once the device has them
		close(h.scanned)
		if h.stop.Load() {
			return
		}
		offs := make([]uint64, uint64(p)*(n+uint64(p)))
		cols := make([]uint32, np)
		prefault(offs, &h.stop)
		prefault(cols, &h.stop)
		if !h.stop.Load() {
			h.Offsets, h.Cols = offs, cols
		}
	}()
	return h
}

// Discard says that no split will use h: what is not yet made is not
// made, and Offsets and Cols stay nil unless they were ready. nil is a
// no-op.
func (h *HostBlocks) Discard() {
	if h != nil {
		h.stop.Store(true)
	}
}

// Scanned returns once h no longer reads the pairs; nil returns at once.
func (h *HostBlocks) Scanned() {
	if h != nil {
		<-h.scanned
	}
}

// Wait returns once Offsets and Cols are made and faulted in (or, after
// Discard, given up); nil returns at once.
func (h *HostBlocks) Wait() {
	if h != nil {
		<-h.ready
	}
}

// VertexBound bounds the vertices of p's graph: one more than its largest
// id, and at most two per pair.
func (p IDPairs) VertexBound() uint64 {
	np := uint64(p.Pairs())
	if top := p.MaxID(); top < 2*np {
		return top + 1
	}
	return 2 * np
}

// MaxID is the largest id of p (0 when it is empty), read on all cores.
func (p IDPairs) MaxID() uint64 {
	if p.P64 != nil {
		return maxOf(p.P64)
	}
	return maxOf(p.P32)
}

// maxOf is the largest element of s (0 when it is empty), read on all
// cores in chunks of plain loops.
func maxOf[T uint32 | uint64](s []T) uint64 {
	var (
		mu  sync.Mutex
		top T
	)
	par.Dynamic(len(s), 1<<20, runtime.GOMAXPROCS(0), func(lo, hi int) {
		var m T
		for _, v := range s[lo:hi] {
			m = max(m, v)
		}
		mu.Lock()
		top = max(top, m)
		mu.Unlock()
	})
	return uint64(top)
}

// prefault writes the zero value into one element of every page of s on
// all cores, until stop is set.
func prefault[T any](s []T, stop *atomic.Bool) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 0 || len(s)*size < 1<<20 {
		return
	}
	const pageBytes = 4096
	step := max(1, pageBytes/size)
	pages := (len(s) + step - 1) / step
	par.Dynamic(pages, 256, runtime.GOMAXPROCS(0), func(lo, hi int) {
		if stop.Load() {
			return
		}
		for x := lo; x < hi; x++ {
			s[x*step] = zero
		}
	})
}
