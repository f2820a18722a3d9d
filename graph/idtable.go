package graph

import (
	"math/bits"
	"sync/atomic"

	"github.com/trigrid/trigrid/internal/parallel"
)

// idTable maps the distinct original ids of a sparse graph to compact ids:
// an open-addressing hash table with linear probing, at most half full.
// A lookup costs about one cache miss where a binary search over the
// sorted ids costs one per level; on huge sparse inputs that difference is
// most of Clean's time.
type idTable struct {
	mask  uint64
	shift uint
	keys  []uint64
	vals  []uint32 // compact id + 1; 0 marks an empty slot
}

// newIDTable indexes ids (distinct, compact id = position) in parallel.
func newIDTable(ids []uint64, w int) *idTable {
	size := uint64(1) << bits.Len64(uint64(2*len(ids)+1))
	t := &idTable{
		mask:  size - 1,
		shift: uint(64 - bits.Len64(size-1)),
		keys:  make([]uint64, size),
		vals:  make([]uint32, size),
	}
	// Keys are distinct, so an inserter never compares keys: claiming a
	// free slot with one CAS is the whole protocol, and keys are written
	// before anyone reads them (readers start after the wait).
	parallel.Dynamic(len(ids), 1<<14, w, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			x := ids[c]
			for i := t.slot(x); ; i = (i + 1) & t.mask {
				if atomic.CompareAndSwapUint32(&t.vals[i], 0, uint32(c)+1) {
					t.keys[i] = x
					break
				}
			}
		}
	})
	return t
}

func (t *idTable) slot(x uint64) uint64 {
	if t.shift >= 64 {
		return 0
	}
	return (x * 0x9e3779b97f4a7c15) >> t.shift
}

// find returns the compact id of x and whether x is present.
func (t *idTable) find(x uint64) (uint32, bool) {
	for i := t.slot(x); ; i = (i + 1) & t.mask {
		v := t.vals[i]
		if v == 0 {
			return 0, false
		}
		if t.keys[i] == x {
			return v - 1, true
		}
	}
}
