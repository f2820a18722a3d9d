package partition

import (
	"fmt"
	"math/bits"

	"github.com/trigrid/trigrid/storage"
)

// Layout maps forward-graph vertex ids to (group, local id) for one scheme.
// It is immutable once built and safe for concurrent use.
type Layout struct {
	Scheme storage.Scheme
	P      int
	// N is the number of vertices of the forward graph.
	N int64
	// Bounds holds P+1 group starts for the range scheme (Bounds[0] = 0,
	// Bounds[P] = N); nil for the hash scheme.
	Bounds []uint64

	sizes []int64
	// shift is log2(P) when P is a power of two, so the hash scheme's
	// mod/div per edge become a mask and a shift; -1 otherwise.
	shift int
}

// NewHashLayout returns TRUST's layout: group = id mod p, local = id div p.
func NewHashLayout(n int64, p int) (*Layout, error) {
	if err := checkP(n, p); err != nil {
		return nil, err
	}
	l := &Layout{Scheme: storage.SchemeHash, P: p, N: n, shift: -1}
	if p&(p-1) == 0 {
		l.shift = bits.TrailingZeros(uint(p))
	}
	l.sizes = make([]int64, p)
	for g := range p {
		if int64(g) < n {
			l.sizes[g] = (n-int64(g)-1)/int64(p) + 1
		}
	}
	return l, nil
}

// NewRangeLayout returns a range layout over the given P+1 group starts.
func NewRangeLayout(n int64, bounds []uint64) (*Layout, error) {
	p := len(bounds) - 1
	if err := checkP(n, p); err != nil {
		return nil, err
	}
	if bounds[0] != 0 || bounds[p] != uint64(n) {
		return nil, fmt.Errorf("partition: range bounds must run from 0 to %d, got %d..%d", n, bounds[0], bounds[p])
	}
	l := &Layout{Scheme: storage.SchemeRange, P: p, N: n, shift: -1, Bounds: append([]uint64(nil), bounds...)}
	l.sizes = make([]int64, p)
	for g := range p {
		if bounds[g+1] < bounds[g] {
			return nil, fmt.Errorf("partition: range bounds decrease at group %d (%d > %d)", g, bounds[g], bounds[g+1])
		}
		l.sizes[g] = int64(bounds[g+1] - bounds[g])
	}
	return l, nil
}

func checkP(n int64, p int) error {
	if p < 1 {
		return fmt.Errorf("partition: P must be at least 1, got %d", p)
	}
	if p > maxP {
		return fmt.Errorf("partition: P = %d is above the supported maximum %d", p, maxP)
	}
	if n < 0 || n > 1<<32 {
		return fmt.Errorf("partition: %d vertices do not fit 32-bit ids", n)
	}
	return nil
}

// maxP bounds P so that P^3 subtasks stay enumerable and P^2 block headers
// stay small next to the data.
const maxP = 1024

// Group returns the group of vertex v.
func (l *Layout) Group(v uint32) int {
	if l.Scheme == storage.SchemeHash {
		if l.shift >= 0 {
			return int(v & uint32(l.P-1))
		}
		return int(v % uint32(l.P))
	}
	// Binary search for the last start <= v; P is small so this is a few
	// well-predicted steps.
	lo, hi := 0, l.P-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.Bounds[mid] <= uint64(v) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Local returns v's id inside group g (which must be Group(v)).
func (l *Layout) Local(v uint32, g int) uint32 {
	if l.Scheme == storage.SchemeHash {
		if l.shift >= 0 {
			return v >> uint(l.shift)
		}
		return v / uint32(l.P)
	}
	return v - uint32(l.Bounds[g])
}

// Global returns the forward-graph id of local id x in group g.
func (l *Layout) Global(g int, x uint32) uint32 {
	if l.Scheme == storage.SchemeHash {
		return x*uint32(l.P) + uint32(g)
	}
	return uint32(l.Bounds[g]) + x
}

// GroupSize returns the number of vertices of group g.
func (l *Layout) GroupSize(g int) int64 { return l.sizes[g] }

// GroupSizes returns a copy of all group sizes.
func (l *Layout) GroupSizes() []int64 { return append([]int64(nil), l.sizes...) }

// CanHaveEdges reports whether block (i, j) may hold forward edges: every
// block for the hash scheme, only i <= j for the range scheme (each forward
// edge goes from a lower to a higher id).
func (l *Layout) CanHaveEdges(i, j int) bool {
	return l.Scheme == storage.SchemeHash || i <= j
}

func (l *Layout) isHash() bool { return l.Scheme == storage.SchemeHash }
