package graph

import (
	"fmt"
	"unsafe"
)

// CompactInPlace is Compact that consumes edges: when the ids are dense
// enough for a table (the common case), the pairs are written into the
// memory of edges itself, so the result costs no memory beyond the input
// and the id table. Afterwards edges must not be used; Pairs aliases its
// first half. Sparse id spaces take Compact's path, which allocates.
//
// The result is identical to Compact's for any input and any Workers.
func CompactInPlace(edges []Edge, opts CleanOptions) (*Compacted, error) {
	w := resolveWorkers(opts.Workers)
	sc := scanEdges(edges, w)
	if len(edges) == 0 || !useDense(sc.maxID, len(edges)) {
		return Compact(edges, opts)
	}
	pm := newProgressMeter(opts.Progress, 3*int64(len(edges)))
	pm.set(int64(len(edges)))
	st := CleanStats{InputEdges: uint64(len(edges)), SelfLoops: sc.loops}
	nonLoop := len(edges) - int(sc.loops)
	table, origID, isolated, err := denseRemap(edges, sc.maxID, w, pm)
	if err != nil {
		return nil, fmt.Errorf("graph: compact: %w", err)
	}
	pm.set(2 * int64(len(edges)))
	st.IsolatedIDs = isolated
	st.Vertices = int64(len(origID))
	pairs := translateInPlace(edges, table, w)
	if len(pairs) != 2*nonLoop {
		return nil, fmt.Errorf("graph: compact: translated %d non-loop edges, the scan found %d", len(pairs)/2, nonLoop)
	}
	pm.set(pm.total)
	return &Compacted{Pairs: pairs, OrigID: origID, Stats: st}, nil
}

// translateInPlace writes the compact pairs of the non-loop edges, in
// input order, over the memory of edges (16 bytes per edge; a pair takes
// 8). Each part first translates its own edges to the start of its own
// range, where writes never pass reads (the k-th pair of a part lands at
// or before the k-th edge's first word). Then the parts' pairs move left,
// part by part in ascending order (each move on all workers), to their
// final places: a part's destination ends at or before the start of the
// next part's source, so no move overwrites pairs still to be moved.
func translateInPlace(edges []Edge, table []uint32, w int) []uint32 {
	words := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(edges))), 4*len(edges))
	parts := min(w, max(1, len(edges)/(1<<16)))
	kept := make([]int, parts)
	starts := make([]int, parts)
	forEachStatic(len(edges), parts, func(p, lo, hi int) {
		starts[p] = lo
		out := 4 * lo
		for i := lo; i < hi; i++ {
			u, v := edges[i].U, edges[i].V
			if u != v {
				words[out], words[out+1] = table[u], table[v]
				out += 2
			}
		}
		kept[p] = (out - 4*lo) / 2
	})
	dst := 0
	for p := range parts {
		moveLeft(words, dst, 4*starts[p], 2*kept[p], w)
		dst += 2 * kept[p]
	}
	return words[:dst:dst]
}

// moveLeft copies words[src:src+n] to words[dst:dst+n], dst <= src, on w
// workers. Copies run in waves of at most src-dst words, so that no
// chunk's write lands on a source word that another chunk of the same
// wave has still to read.
func moveLeft(words []uint32, dst, src, n, w int) {
	d := src - dst
	if d == 0 || n == 0 {
		return
	}
	for off := 0; off < n; off += d {
		m := min(d, n-off)
		to, from := words[dst+off:dst+off+m], words[src+off:src+off+m]
		forEachStatic(m, min(w, max(1, m/(1<<16))), func(_, lo, hi int) {
			copy(to[lo:hi], from[lo:hi])
		})
	}
}

// CleanCompacted finishes the cleaning of c, which Compact or
// CompactInPlace made: it symmetrises, sorts and deduplicates the pairs
// into the undirected graph that Clean would have built from the same
// input, with the same statistics. c.Pairs is only read; the result's
// OrigID is c.OrigID.
func CleanCompacted(c *Compacted, opts CleanOptions) (*Undirected, CleanStats, error) {
	w := resolveWorkers(opts.Workers)
	nonLoop := uint64(len(c.Pairs) / 2)
	pm := newProgressMeter(opts.Progress, 3*int64(nonLoop))
	adj := buildSymmetric(&pairsSource{p: c.Pairs}, len(c.OrigID), w, cleanPaths{}, pm)
	st := c.Stats
	st.Vertices = int64(len(c.OrigID))
	st.Edges = adj.NumEdges() / 2
	st.Duplicates = nonLoop - uint64(st.Edges)
	pm.set(pm.total)
	return &Undirected{Adj: adj, OrigID: c.OrigID}, st, nil
}
