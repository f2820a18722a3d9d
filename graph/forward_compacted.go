package graph

import "fmt"

// ForwardCompacted builds the forward graph of c in degree order: the CSR,
// ranks and statistics that CleanCompacted then Orient(OrderDegree) build
// from the same pairs, array for array, without building the symmetric
// adjacency. Each pair is laid out once, in the row of its smaller compact
// id, and deduplicated there (the upper triangle, half the entries of the
// symmetric rows); degrees are the row lengths plus the column counts;
// the edges of the upper triangle, relabelled by rank, are laid out once
// more in the row of their smaller rank. It consumes c.Pairs: their memory
// is reused as scratch once the upper triangle is laid out, and c.Pairs
// is set to nil; c.OrigID stays (rank[compact id] is the forward id).
func ForwardCompacted(c *Compacted, opts CleanOptions) (fwd *CSR, rank []uint32, cs CleanStats, os OrientStats, err error) {
	return forwardCompacted(c, opts, cleanPaths{})
}

// forwardCompacted is ForwardCompacted with the bucket sizes and entry
// width of paths (tests force them).
func forwardCompacted(c *Compacted, opts CleanOptions, paths cleanPaths) (fwd *CSR, rank []uint32, cs CleanStats, os OrientStats, err error) {
	w := resolveWorkers(opts.Workers)
	n := len(c.OrigID)
	if uint64(n) > vertexLimit {
		return nil, nil, cs, os, fmt.Errorf("graph: forward: %d vertices: %w", n, ErrTooManyVertices)
	}
	pairs := c.Pairs
	c.Pairs = nil
	nonLoop := uint64(len(pairs) / 2)
	pm := newProgressMeter(opts.Progress, 5*int64(nonLoop))
	var m int64
	if n == 0 || nonLoop == 0 {
		fwd = &CSR{Offsets: make([]uint64, n+1), Cols: []uint32{}, NCols: int64(n)}
		deg := make([]uint32, n)
		os.Wedges, os.MaxDegree = countDegreeStats(deg, w)
		rank = degreeRankCounts(deg, os.MaxDegree, w)
	} else if sh := shapeBuckets(n, int(nonLoop), paths); sh.wide {
		fwd, rank, os, m = forwardRows[uint64](pairs, n, sh, paths, w, pm)
	} else {
		fwd, rank, os, m = forwardRows[uint32](pairs, n, sh, paths, w, pm)
	}
	os.MaxOutDegree = maxRowLen(fwd, w)
	cs = c.Stats
	cs.Vertices = int64(n)
	cs.Edges = m
	cs.Duplicates = nonLoop - uint64(m)
	pm.set(pm.total)
	return fwd, rank, cs, os, nil
}

// countDegreeStats is degreeStats over a degree array.
func countDegreeStats(deg []uint32, w int) (wedges uint64, maxDeg int64) {
	parts := min(w, max(1, len(deg)/(1<<16)))
	ws := make([]uint64, parts)
	ms := make([]int64, parts)
	forEachStatic(len(deg), parts, func(p, lo, hi int) {
		var s, m uint64
		for _, d32 := range deg[lo:hi] {
			d := uint64(d32)
			s += d * (d - 1) / 2
			m = max(m, d)
		}
		ws[p], ms[p] = s, int64(m)
	})
	for p := range ws {
		wedges += ws[p]
		maxDeg = max(maxDeg, ms[p])
	}
	return wedges, maxDeg
}

// degreeRankCounts is degreeRank over a degree array.
func degreeRankCounts(deg []uint32, maxDeg int64, w int) []uint32 {
	n := len(deg)
	rank := make([]uint32, n)
	nd := int(maxDeg) + 1
	parts := min(w, max(1, n/(4*nd)), max(1, n/(1<<14)))
	hist := make([]uint64, parts*nd)
	forEachStatic(n, parts, func(p, lo, hi int) {
		h := hist[p*nd : (p+1)*nd]
		for _, d := range deg[lo:hi] {
			h[d]++
		}
	})
	var pos uint64
	for d := 0; d < nd; d++ {
		for p := 0; p < parts; p++ {
			c := hist[p*nd+d]
			hist[p*nd+d] = pos
			pos += c
		}
	}
	forEachStatic(n, parts, func(p, lo, hi int) {
		h := hist[p*nd : (p+1)*nd]
		for v := lo; v < hi; v++ {
			d := deg[v]
			rank[v] = uint32(h[d])
			h[d]++
		}
	})
	return rank
}

// maxRowLen is the longest row of a CSR.
func maxRowLen(c *CSR, w int) int64 {
	n := int(c.NumRows())
	parts := min(w, max(1, n/(1<<16)))
	ms := make([]uint64, parts)
	forEachStatic(n, parts, func(p, lo, hi int) {
		var m uint64
		for v := lo; v < hi; v++ {
			m = max(m, c.Offsets[v+1]-c.Offsets[v])
		}
		ms[p] = m
	})
	var m uint64
	for _, x := range ms {
		m = max(m, x)
	}
	return int64(m)
}

// DegreeOrder ranks vertices by (degree, id) ascending, as the forward
// graph's degree order does: rank[v] is v's forward id. It also returns the
// wedges (the sum of d(d-1)/2) and the largest degree.
func DegreeOrder(deg []uint32, workers int) (rank []uint32, wedges uint64, maxDeg int64) {
	w := resolveWorkers(workers)
	wedges, maxDeg = countDegreeStats(deg, w)
	return degreeRankCounts(deg, maxDeg, w), wedges, maxDeg
}
