package graph

import (
	"fmt"
	"sync/atomic"

	"github.com/trigrid/trigrid/internal/parallel"
)

// CompactPairsInPlace is CompactInPlace for an edge list of 32-bit ids
// (u0, v0, u1, v1, ... as edgeio.ReadBinaryPairs32 reads them): the compact
// pairs of the non-loop edges are written over pairs itself, which must not
// be used afterwards (the result's Pairs aliases its front). The result
// equals Compact's for the same edges, for any Workers. Ids too sparse for
// a table take Compact's path on widened edges, which allocates.
func CompactPairsInPlace(pairs []uint32, opts CleanOptions) (*Compacted, error) {
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("graph: compact: odd number of ids (%d)", len(pairs))
	}
	w := resolveWorkers(opts.Workers)
	n := len(pairs) / 2
	sc := scanPairs(pairs, w)
	if n == 0 || !useDense(sc.maxID, n) {
		return Compact(WidenPairs(pairs, w), opts)
	}
	pm := newProgressMeter(opts.Progress, 3*int64(n))
	pm.set(int64(n))
	st := CleanStats{InputEdges: uint64(n), SelfLoops: sc.loops}
	table := make([]uint32, sc.maxID+1)
	parallel.Dynamic(n, remapChunk, w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			u, v := pairs[2*i], pairs[2*i+1]
			if u == v {
				if atomic.LoadUint32(&table[u]) == markNone {
					atomic.CompareAndSwapUint32(&table[u], markNone, markLoop)
				}
				continue
			}
			if atomic.LoadUint32(&table[u]) != markActive {
				atomic.StoreUint32(&table[u], markActive)
			}
			if atomic.LoadUint32(&table[v]) != markActive {
				atomic.StoreUint32(&table[v], markActive)
			}
		}
		pm.add(int64(hi - lo))
	})
	table, origID, isolated, err := numberTable(table, w)
	if err != nil {
		return nil, fmt.Errorf("graph: compact: %w", err)
	}
	st.IsolatedIDs = isolated
	st.Vertices = int64(len(origID))
	out := translatePairsInPlace(pairs, table, w)
	if uint64(len(out)/2) != uint64(n)-sc.loops {
		return nil, fmt.Errorf("graph: compact: translated %d non-loop edges, the scan found %d", len(out)/2, uint64(n)-sc.loops)
	}
	pm.set(pm.total)
	return &Compacted{Pairs: out, OrigID: origID, Stats: st}, nil
}

// scanPairs is scanEdges over 32-bit pairs.
func scanPairs(pairs []uint32, w int) scan {
	n := len(pairs) / 2
	parts := min(w, max(1, n/(1<<16)))
	res := make([]scan, parts)
	forEachStatic(n, parts, func(p, lo, hi int) {
		s := scan{minID: ^uint64(0)}
		for i := lo; i < hi; i++ {
			u, v := uint64(pairs[2*i]), uint64(pairs[2*i+1])
			s.minID = min(s.minID, u, v)
			s.maxID = max(s.maxID, u, v)
			if u == v {
				s.loops++
			}
		}
		res[p] = s
	})
	s := scan{minID: ^uint64(0)}
	for _, r := range res {
		s.minID = min(s.minID, r.minID)
		s.maxID = max(s.maxID, r.maxID)
		s.loops += r.loops
	}
	return s
}

// translatePairsInPlace writes the compact pairs of the non-loop pairs,
// in input order, over pairs: each part translates its own pairs to the
// start of its own range (writes never pass reads), then the parts move
// left in ascending order, as translateInPlace does.
func translatePairsInPlace(pairs, table []uint32, w int) []uint32 {
	n := len(pairs) / 2
	parts := min(w, max(1, n/(1<<16)))
	kept := make([]int, parts)
	starts := make([]int, parts)
	forEachStatic(n, parts, func(p, lo, hi int) {
		starts[p] = lo
		out := 2 * lo
		for i := lo; i < hi; i++ {
			u, v := pairs[2*i], pairs[2*i+1]
			if u != v {
				pairs[out], pairs[out+1] = table[u], table[v]
				out += 2
			}
		}
		kept[p] = (out - 2*lo) / 2
	})
	dst := 0
	for p := range parts {
		moveLeft(pairs, dst, 2*starts[p], 2*kept[p], w)
		dst += 2 * kept[p]
	}
	return pairs[:dst:dst]
}
