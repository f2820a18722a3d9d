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
// compact: only loops, if any, are removed. It is MarkPairs then
// MarkedPairs.Compact.
func CompactPairsInPlace(pairs []uint32, opts CleanOptions) (*Compacted, error) {
	m, err := MarkPairs(pairs, opts)
	if err != nil {
		return nil, err
	}
	return m.Compact()
}

// MarkedPairs is a 32-bit edge list whose ids are numbered but not yet
// rewritten (MarkPairs): a caller that can translate them elsewhere (a
// device, as it copies them) reads Pairs and Bits; Compact rewrites them
// on the host.
type MarkedPairs struct {
	// Pairs is the input as given, loops included.
	Pairs []uint32
	// Bits maps each id with a non-loop edge to its compact id, 2 bits
	// an id: Bits[2i] marks the ids 64i to 64i+63 that have one, and
	// Bits[2i+1] is the number of marked ids below 64i, so the compact id
	// of a marked id u is Bits[2(u>>6)+1] plus the marks of Bits[2(u>>6)]
	// below bit u&63. It is nil where the ids are numbered otherwise (a
	// table, for a largest id above a few tens of millions) or not at all
	// (ids too sparse): only Compact can use those.
	Bits []uint64
	// OrigID and Stats are the Compacted's (unset where the ids are too
	// sparse).
	OrigID []uint64
	Stats  CleanStats

	sparse bool
	ids    idMap
	maxID  uint64
	loops  []uint64 // per part of the static split
	w      int
	pm     *progressMeter
	opts   CleanOptions
}

// MarkPairs is the first half of CompactPairsInPlace: it scans pairs and
// numbers their ids as CompactPairsInPlace does, leaving pairs as they are.
func MarkPairs(pairs []uint32, opts CleanOptions) (*MarkedPairs, error) {
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("graph: compact: odd number of ids (%d)", len(pairs))
	}
	w := resolveWorkers(opts.Workers)
	n := len(pairs) / 2
	sc, partLoops := scanPairs(pairs, w)
	m := &MarkedPairs{Pairs: pairs, maxID: sc.maxID, loops: partLoops, w: w, opts: opts}
	if n == 0 || !useDense(sc.maxID, n) {
		m.sparse = true
		return m, nil
	}
	m.pm = newProgressMeter(opts.Progress, 3*int64(n))
	m.pm.set(int64(n))
	m.Stats = CleanStats{InputEdges: uint64(n), SelfLoops: sc.loops}
	var (
		isolated uint64
		err      error
	)
	if sc.maxID <= idBitsMax {
		m.ids, m.OrigID, isolated, err = markIDBits(pairs, sc.maxID, partLoops, w)
		m.Bits = m.ids.rk
		m.pm.add(int64(n))
	} else {
		m.ids.table, m.OrigID, isolated, err = markTable(pairs, sc.maxID, w, m.pm)
	}
	if err != nil {
		return nil, fmt.Errorf("graph: compact: %w", err)
	}
	m.Stats.IsolatedIDs = isolated
	m.Stats.Vertices = int64(len(m.OrigID))
	return m, nil
}

// Compact is the second half of CompactPairsInPlace: it rewrites the pairs
// into compact ids in their own memory; m must not be used afterwards.
func (m *MarkedPairs) Compact() (*Compacted, error) {
	pairs := m.Pairs
	if m.sparse {
		return Compact(WidenPairs(pairs, m.w), m.opts)
	}
	n := len(pairs) / 2
	loops := m.Stats.SelfLoops
	out := pairs[:len(pairs):len(pairs)]
	switch {
	case uint64(len(m.OrigID)) <= m.maxID:
		out = translatePairsInPlace(pairs, &m.ids, m.loops, m.w)
	case loops > 0:
		// Every id up to the largest has a non-loop edge: the compact
		// ids are the input's own, and only the loops go.
		out = translatePairsInPlace(pairs, &idMap{}, m.loops, m.w)
	}
	if uint64(len(out)/2) != uint64(n)-loops {
		return nil, fmt.Errorf("graph: compact: translated %d non-loop edges, the scan found %d", len(out)/2, uint64(n)-loops)
	}
	m.pm.set(m.pm.total)
	return &Compacted{Pairs: out, OrigID: m.OrigID, Stats: m.Stats}, nil
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
