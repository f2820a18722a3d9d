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
// a table take Compact's path on widened edges, which allocates. Where
// every id up to the largest has a non-loop edge the ids are already
// compact: only loops, if any, are removed.
func CompactPairsInPlace(pairs []uint32, opts CleanOptions) (*Compacted, error) {
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("graph: compact: odd number of ids (%d)", len(pairs))
	}
	w := resolveWorkers(opts.Workers)
	n := len(pairs) / 2
	sc, partLoops := scanPairs(pairs, w)
	if n == 0 || !useDense(sc.maxID, n) {
		return Compact(WidenPairs(pairs, w), opts)
	}
	pm := newProgressMeter(opts.Progress, 3*int64(n))
	pm.set(int64(n))
	st := CleanStats{InputEdges: uint64(n), SelfLoops: sc.loops}
	var (
		ids      idMap
		origID   []uint64
		isolated uint64
		err      error
	)
	if sc.maxID <= idBitsMax {
		ids, origID, isolated, err = markIDBits(pairs, sc.maxID, partLoops, w)
		pm.add(int64(n))
	} else {
		ids.table, origID, isolated, err = markTable(pairs, sc.maxID, w, pm)
	}
	if err != nil {
		return nil, fmt.Errorf("graph: compact: %w", err)
	}
	st.IsolatedIDs = isolated
	st.Vertices = int64(len(origID))
	out := pairs[:len(pairs):len(pairs)]
	switch {
	case uint64(len(origID)) <= sc.maxID:
		out = translatePairsInPlace(pairs, &ids, partLoops, w)
	case sc.loops > 0:
		// Every id up to the largest has a non-loop edge: the compact
		// ids are the input's own, and only the loops go.
		out = translatePairsInPlace(pairs, &idMap{}, partLoops, w)
	}
	if uint64(len(out)/2) != uint64(n)-sc.loops {
		return nil, fmt.Errorf("graph: compact: translated %d non-loop edges, the scan found %d", len(out)/2, uint64(n)-sc.loops)
	}
	pm.set(pm.total)
	return &Compacted{Pairs: out, OrigID: origID, Stats: st}, nil
}

// markTable marks the ids of pairs in a table of maxID+1 ids shared by
// all workers, then numbers them (numberTable).
func markTable(pairs []uint32, maxID uint64, w int, pm *progressMeter) (table []uint32, origID []uint64, isolated uint64, err error) {
	table = make([]uint32, maxID+1)
	parallel.Dynamic(len(pairs)/2, remapChunk, w, func(lo, hi int) {
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
	return numberTable(table, w)
}

// scanPairs is scanEdges over 32-bit pairs; it also returns the loops of
// each part of the static split that translatePairsInPlace uses.
func scanPairs(pairs []uint32, w int) (scan, []uint64) {
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
	loops := make([]uint64, parts)
	for p, r := range res {
		s.minID = min(s.minID, r.minID)
		s.maxID = max(s.maxID, r.maxID)
		s.loops += r.loops
		loops[p] = r.loops
	}
	return s, loops
}

// translatePairsInPlace writes the compact pairs of the non-loop pairs,
// in input order, over pairs; loops[p] is the number of loops in part p of
// the static split into len(loops) parts. Each part writes its pairs
// straight to their final places, which start before its own range by the
// loops of the parts before it: its first pairs, which would land on
// pairs the part before may not have read yet, are kept aside until every
// part is done. Where that would keep much aside (many loops), each part
// translates to the start of its own range and the parts then move left
// in ascending order, as translateInPlace does.
func translatePairsInPlace(pairs []uint32, ids *idMap, loops []uint64, w int) []uint32 {
	n := len(pairs) / 2
	parts := len(loops)
	dst := make([]int, parts+1) // in pairs
	ahead := make([]int, parts)
	aside := 0
	for p := range parts {
		lo, hi := staticRange(n, parts, p)
		kept := hi - lo - int(loops[p])
		ahead[p] = min(lo-dst[p], kept)
		aside += ahead[p]
		dst[p+1] = dst[p] + kept
	}
	if aside > n/16 {
		return translateThenMove(pairs, ids, w, parts)
	}
	held := make([][]uint32, parts)
	forEachStatic(n, parts, func(p, lo, hi int) {
		buf := make([]uint32, 0, 2*ahead[p])
		out := 2 * dst[p]
		a := ahead[p]
		k := 0
		for i := lo; i < hi; i++ {
			u, v := pairs[2*i], pairs[2*i+1]
			if u == v {
				continue
			}
			if k < a {
				buf = append(buf, ids.id(u), ids.id(v))
			} else {
				pairs[out+2*k], pairs[out+2*k+1] = ids.id(u), ids.id(v)
			}
			k++
		}
		held[p] = buf
	})
	forEachStatic(parts, parts, func(p, _, _ int) {
		copy(pairs[2*dst[p]:], held[p])
	})
	return pairs[: 2*dst[parts] : 2*dst[parts]]
}

// translateThenMove is translatePairsInPlace by parts that each translate
// to the start of their own range (writes never pass reads), then move
// left in ascending order.
func translateThenMove(pairs []uint32, ids *idMap, w, parts int) []uint32 {
	n := len(pairs) / 2
	kept := make([]int, parts)
	starts := make([]int, parts)
	forEachStatic(n, parts, func(p, lo, hi int) {
		starts[p] = lo
		out := 2 * lo
		for i := lo; i < hi; i++ {
			u, v := pairs[2*i], pairs[2*i+1]
			if u != v {
				pairs[out], pairs[out+1] = ids.id(u), ids.id(v)
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
