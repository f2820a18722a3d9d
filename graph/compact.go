package graph

import "fmt"

// Compacted is an edge list translated to compact ids but not yet
// symmetrised or deduplicated: the input of devices that clean and orient
// on their own (GPU preprocessing).
type Compacted struct {
	// Pairs holds the non-loop input edges as u0, v0, u1, v1, ... over
	// compact ids, in input order, duplicates and both directions kept.
	Pairs []uint32
	// OrigID maps a compact id to the id it had in the input.
	OrigID []uint64
	// Stats has InputEdges, SelfLoops, IsolatedIDs and Vertices set;
	// Duplicates and Edges are known only once the pairs are deduplicated.
	Stats CleanStats
}

// Compact assigns compact ids exactly as Clean does (ascending original id
// among the ids with a non-loop edge) and translates the non-loop edges.
// It is the part of Clean that needs the original 64-bit ids; what remains
// (symmetrise, sort, deduplicate) works on 32-bit pairs and can run
// elsewhere.
func Compact(edges []Edge, opts CleanOptions) (*Compacted, error) {
	w := resolveWorkers(opts.Workers)
	pm := newProgressMeter(opts.Progress, 3*int64(len(edges)))
	sc := scanEdges(edges, w)
	pm.set(int64(len(edges)))
	st := CleanStats{InputEdges: uint64(len(edges)), SelfLoops: sc.loops}
	nonLoop := len(edges) - int(sc.loops)
	c := &Compacted{}
	if useDense(sc.maxID, len(edges)) {
		table, origID, isolated, err := denseRemap(edges, sc.maxID, w, pm)
		if err != nil {
			return nil, fmt.Errorf("graph: compact: %w", err)
		}
		pm.set(2 * int64(len(edges)))
		c.OrigID, st.IsolatedIDs = origID, isolated
		c.Pairs = translateDense(edges, table, nonLoop, w)
	} else {
		origID, pairs, isolated, err := sparseRemap(edges, sc, w, pm)
		if err != nil {
			return nil, fmt.Errorf("graph: compact: %w", err)
		}
		c.OrigID, c.Pairs, st.IsolatedIDs = origID, pairs, isolated
	}
	st.Vertices = int64(len(c.OrigID))
	c.Stats = st
	pm.set(pm.total)
	return c, nil
}

// translateDense writes the pairs of the non-loop edges in input order:
// each part counts its non-loop edges first so parts can fill disjoint
// ranges of the output in parallel.
func translateDense(edges []Edge, table []uint32, nonLoop, w int) []uint32 {
	parts := min(w, max(1, len(edges)/(1<<16)))
	counts := make([]int, parts+1)
	forEachStatic(len(edges), parts, func(p, lo, hi int) {
		n := 0
		for _, e := range edges[lo:hi] {
			if e.U != e.V {
				n++
			}
		}
		counts[p+1] = n
	})
	for p := 1; p <= parts; p++ {
		counts[p] += counts[p-1]
	}
	out := make([]uint32, 2*nonLoop)
	forEachStatic(len(edges), parts, func(p, lo, hi int) {
		dst := out[2*counts[p] : 2*counts[p]]
		for _, e := range edges[lo:hi] {
			if e.U != e.V {
				dst = append(dst, table[e.U], table[e.V])
			}
		}
	})
	return out
}
