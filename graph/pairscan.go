package graph

import (
	"fmt"
	"slices"
)

// PairScan is what one pass over 32-bit pairs of the input's own ids
// finds: the largest id, the self-loops, and the distinct ids of the
// loops in ascending order (LoopsListed), unless a part of the pass meets
// more than its share of one loop in 64 pairs (the list's memory stays
// small beside the pairs').
type PairScan struct {
	MaxID       uint64
	SelfLoops   uint64
	LoopIDs     []uint32
	LoopsListed bool
}

// ScanPairs reads pairs (u then v, each pair) once on workers goroutines
// (0: GOMAXPROCS). It fails on an odd number of ids.
func ScanPairs(pairs []uint32, workers int) (PairScan, error) {
	if len(pairs)%2 != 0 {
		return PairScan{}, fmt.Errorf("graph: scan: odd number of ids (%d)", len(pairs))
	}
	n := len(pairs) / 2
	w := resolveWorkers(workers)
	parts := min(w, max(1, n/(1<<16)))
	bound := n/64/parts + 64 // the loop ids a part lists at most
	type part struct {
		maxID, loops uint64
		ids          []uint32
		over         bool
	}
	res := make([]part, parts)
	forEachStatic(n, parts, func(p, lo, hi int) {
		var r part
		for i := lo; i < hi; i++ {
			u, v := pairs[2*i], pairs[2*i+1]
			r.maxID = max(r.maxID, uint64(u), uint64(v))
			if u != v {
				continue
			}
			r.loops++
			switch {
			case r.over:
			case len(r.ids) < bound:
				r.ids = append(r.ids, u)
			default:
				r.over, r.ids = true, nil
			}
		}
		res[p] = r
	})
	s := PairScan{LoopsListed: true}
	for _, r := range res {
		s.MaxID = max(s.MaxID, r.maxID)
		s.SelfLoops += r.loops
		s.LoopsListed = s.LoopsListed && !r.over
		if s.LoopsListed {
			s.LoopIDs = append(s.LoopIDs, r.ids...)
		}
	}
	if !s.LoopsListed {
		s.LoopIDs = nil
		return s, nil
	}
	slices.Sort(s.LoopIDs)
	s.LoopIDs = slices.Compact(s.LoopIDs)
	return s, nil
}
