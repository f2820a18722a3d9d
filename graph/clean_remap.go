package graph

import (
	"fmt"
	"sync/atomic"

	"github.com/trigrid/trigrid/internal/parallel"
)

// Marks in the dense table before numbering. Loop-only ids are remembered
// only to be counted (CleanStats.IsolatedIDs).
const (
	markNone   = 0
	markActive = 1
	markLoop   = 2
)

// remapChunk is the number of edges a worker takes at a time in the remap
// passes: large enough to amortise the scheduler, small enough to balance.
const remapChunk = 1 << 15

// denseRemap marks every id in a table indexed by original id, then numbers
// the active ids in ascending order. table[id] is the compact id of every
// id with a non-loop edge (other entries are meaningless afterwards).
func denseRemap(edges []Edge, maxID uint64, w int, pm *progressMeter) (table []uint32, origID []uint64, isolated uint64, err error) {
	table = make([]uint32, maxID+1)
	parallel.Dynamic(len(edges), remapChunk, w, func(lo, hi int) {
		for _, e := range edges[lo:hi] {
			if e.U == e.V {
				// A loop marks its id only if nothing else did; a
				// later active mark overwrites it.
				if atomic.LoadUint32(&table[e.U]) == markNone {
					atomic.CompareAndSwapUint32(&table[e.U], markNone, markLoop)
				}
				continue
			}
			// Load first: most ids repeat, and a plain load keeps the
			// cache line shared between cores.
			if atomic.LoadUint32(&table[e.U]) != markActive {
				atomic.StoreUint32(&table[e.U], markActive)
			}
			if atomic.LoadUint32(&table[e.V]) != markActive {
				atomic.StoreUint32(&table[e.V], markActive)
			}
		}
		pm.add(int64(hi - lo))
	})

	return numberTable(table, w)
}

// numberTable numbers the ids marked active in table in ascending order,
// writing each one's compact id over its mark, and counts the ids marked
// as seen only in self-loops.
func numberTable(table []uint32, w int) (_ []uint32, origID []uint64, isolated uint64, err error) {
	parts := min(w, max(1, len(table)/(1<<16)))
	active := make([]uint64, parts)
	loops := make([]uint64, parts)
	forEachStatic(len(table), parts, func(p, lo, hi int) {
		for _, m := range table[lo:hi] {
			switch m {
			case markActive:
				active[p]++
			case markLoop:
				loops[p]++
			}
		}
	})
	n := uint64(0)
	for p := range active {
		isolated += loops[p]
		active[p], n = n, n+active[p]
	}
	if n > vertexLimit {
		return nil, nil, 0, fmt.Errorf("%d vertices: %w", n, ErrTooManyVertices)
	}
	origID = make([]uint64, n)
	forEachStatic(len(table), parts, func(p, lo, hi int) {
		next := active[p]
		for i := lo; i < hi; i++ {
			if table[i] == markActive {
				table[i] = uint32(next)
				origID[next] = uint64(i)
				next++
			}
		}
	})
	return table, origID, isolated, nil
}
