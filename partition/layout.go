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
	// Bounds holds the Fold*P+1 range starts of the range scheme
	// (Bounds[0] = 0, Bounds[Fold*P] = N); range r belongs to group
	// storage.RangeGroup(r, P). Nil for the hash scheme.
	Bounds []uint64
	// Fold is the number of ranges per group of the range scheme (1:
	// one contiguous range per group); 0 for the hash scheme.
	Fold int

	sizes []int64
	// shift is log2(P) when P is a power of two, so the hash scheme's
	// mod/div per edge become a mask and a shift; -1 otherwise.
	shift int

	// Range scheme. rgroup[r] is range r's group and rdelta[r] what a
	// vertex of range r loses to become a local id (its range's start
	// minus the ids its group holds in earlier ranges). pieces lists each
	// group's ranges in id order, Fold per group, with plocal their first
	// local ids. next[r] is the start of range r+1 (Bounds[r+1]; 2^33, above
	// every id, for the last range), and slot[v>>slotShift] the range of
	// the first id of v's slot: rangeOf's table.
	rgroup    []int32
	rdelta    []uint32
	pieces    []int32
	plocal    []uint32
	next      []uint64
	slot      []uint16
	slotShift uint
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

// NewFoldedLayout returns a range layout of p groups, each made of fold
// ranges: bounds holds the fold*p+1 range starts, and range r belongs to
// group storage.RangeGroup(r, p).
func NewFoldedLayout(n int64, p, fold int, bounds []uint64) (*Layout, error) {
	if err := checkP(n, p); err != nil {
		return nil, err
	}
	if fold < 1 || fold > storage.MaxFold {
		return nil, fmt.Errorf("partition: fold %d out of range 1..%d", fold, storage.MaxFold)
	}
	r := fold * p
	if len(bounds) != r+1 {
		return nil, fmt.Errorf("partition: %d range bounds for P = %d and fold %d, want %d", len(bounds), p, fold, r+1)
	}
	if bounds[0] != 0 || bounds[r] != uint64(n) {
		return nil, fmt.Errorf("partition: range bounds must run from 0 to %d, got %d..%d", n, bounds[0], bounds[r])
	}
	l := &Layout{Scheme: storage.SchemeRange, P: p, N: n, Fold: fold, shift: -1, Bounds: append([]uint64(nil), bounds...)}
	l.sizes = make([]int64, p)
	l.rgroup = make([]int32, r)
	l.rdelta = make([]uint32, r)
	l.pieces = make([]int32, r)
	l.plocal = make([]uint32, r)
	seen := make([]int, p)
	for k := range r {
		if bounds[k+1] < bounds[k] {
			return nil, fmt.Errorf("partition: range bounds decrease at range %d (%d > %d)", k, bounds[k], bounds[k+1])
		}
		g := storage.RangeGroup(k, p)
		l.rgroup[k] = int32(g)
		// Ranges of a group come in increasing k, so concatenating them
		// keeps local ids in rank order.
		l.rdelta[k] = uint32(bounds[k] - uint64(l.sizes[g]))
		l.pieces[g*fold+seen[g]] = int32(k)
		l.plocal[g*fold+seen[g]] = uint32(l.sizes[g])
		seen[g]++
		l.sizes[g] += int64(bounds[k+1] - bounds[k])
	}
	l.next = append(l.Bounds[1:r:r], 1<<33)
	for n>>l.slotShift >= maxSlots {
		l.slotShift++
	}
	l.slot = make([]uint16, n>>l.slotShift+1)
	k := 0
	for x := range l.slot {
		for l.next[k] <= uint64(x)<<l.slotShift {
			k++
		}
		l.slot[x] = uint16(k)
	}
	return l, nil
}

// maxSlots bounds rangeOf's table (128 KiB). Slots of n/65536 ids are
// narrower than the ranges that hold the hubs at the top of the rank
// order, which are few ids each but the endpoints of many edges.
const maxSlots = 1 << 16

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

// rangeOf returns the range holding v: the last range whose start is <= v
// (an empty range shares its start with the next one, which wins). The
// table gives the range at the start of v's slot, and only a slot that a
// range starts in needs a step further; a binary search over the bounds
// mispredicts on the random ids of a split and costs it about a third.
func (l *Layout) rangeOf(v uint32) int {
	r := int(l.slot[v>>l.slotShift])
	for l.next[r] <= uint64(v) {
		r++
	}
	return r
}

// Group returns the group of vertex v.
func (l *Layout) Group(v uint32) int {
	if l.Scheme == storage.SchemeHash {
		if l.shift >= 0 {
			return int(v & uint32(l.P-1))
		}
		return int(v % uint32(l.P))
	}
	return int(l.rgroup[l.rangeOf(v)])
}

// Locate returns v's group and its local id there, with one range lookup.
func (l *Layout) Locate(v uint32) (int, uint32) {
	if l.Scheme == storage.SchemeHash {
		if l.shift >= 0 {
			return int(v & uint32(l.P-1)), v >> uint(l.shift)
		}
		return int(v % uint32(l.P)), v / uint32(l.P)
	}
	r := l.rangeOf(v)
	return int(l.rgroup[r]), v - l.rdelta[r]
}

// Local returns v's id inside group g (which must be Group(v)).
func (l *Layout) Local(v uint32, g int) uint32 {
	if l.Scheme == storage.SchemeHash {
		if l.shift >= 0 {
			return v >> uint(l.shift)
		}
		return v / uint32(l.P)
	}
	return v - l.rdelta[l.rangeOf(v)]
}

// Global returns the forward-graph id of local id x in group g.
func (l *Layout) Global(g int, x uint32) uint32 {
	if l.Scheme == storage.SchemeHash {
		return x*uint32(l.P) + uint32(g)
	}
	// The last piece starting at or below x holds it: an empty piece
	// shares its start with the next, and x is below the group's size.
	t := g*l.Fold + l.Fold - 1
	for t > g*l.Fold && l.plocal[t] > x {
		t--
	}
	return uint32(l.Bounds[l.pieces[t]]) + x - l.plocal[t]
}

// GroupSize returns the number of vertices of group g.
func (l *Layout) GroupSize(g int) int64 { return l.sizes[g] }

// GroupSizes returns a copy of all group sizes.
func (l *Layout) GroupSizes() []int64 { return append([]int64(nil), l.sizes...) }

// CanHaveEdges reports whether block (i, j) may hold forward edges, which
// go from a lower to a higher id: every block for the hash scheme and for
// folded ranges (every group has a range below every other group's last
// one), only i <= j for one range per group.
func (l *Layout) CanHaveEdges(i, j int) bool {
	return canHaveEdges(l.Scheme, l.Fold, i, j)
}

func canHaveEdges(scheme storage.Scheme, fold, i, j int) bool {
	return scheme == storage.SchemeHash || fold > 1 || i <= j
}
