package partition

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/trigrid/trigrid/graph"
)

// Choosing range boundaries (TriX's "2D managed" partition, section IV).
//
// Row and column groups must share one set of boundaries: columns of
// B[I][J] are the rows of B[J][K]. With one cut list there are only P-1
// free parameters for P(P+1)/2 blocks, so the blocks cannot all be equal;
// the aim is to make the largest block as small as possible, which is what
// bounds device memory and the longest subtask. The mean that balance is
// measured against is over those P(P+1)/2 blocks with I <= J, the only ones
// a forward graph can fill under this scheme.
//
// The search runs on a coarse grid so that it costs O(edges) once plus a
// little per candidate: vertices (in id = rank order) are cut into B
// buckets of about equal incident-edge mass, a B x B matrix counts the
// forward edges between buckets, and boundaries fall on bucket starts. For
// a largest-block target M, a greedy sweep grows each group as far as it
// can while every block of its column stays <= M; a binary search on M
// finds the smallest target the sweep meets. Degrees come from the graph
// itself (out + in degree of the forward graph = undirected degree), so the
// external-memory partitioner, which knows the same degrees and streams the
// same edges, reaches the same boundaries and byte-identical shards.

// rangeGrid is the coarse bucket grid of the boundary search.
type rangeGrid struct {
	// starts holds B+1 bucket starts in vertex ids.
	starts []uint64
	// bucket maps a vertex id to its bucket.
	bucket []uint16
	// cells[a*B+b] counts forward edges from bucket a to bucket b.
	cells []uint64
}

// gridBuckets is the bucket count for P groups: at least 16 buckets per
// group so that cuts can move in steps of about 1/16 of a group, and no
// more than uint16 and a 128 MiB matrix allow.
func gridBuckets(n int64, p int) int {
	b := max(1024, 16*p)
	b = min(b, 4096)
	if int64(b) > n {
		b = int(n)
	}
	return max(b, 1)
}

// newRangeGrid cuts ids 0..n-1 into buckets of about equal degree mass.
// deg[v] is the undirected degree of vertex v (v in forward/rank ids).
func newRangeGrid(deg []uint32, p int) *rangeGrid {
	n := int64(len(deg))
	nb := gridBuckets(n, p)
	var total uint64
	for _, d := range deg {
		total += uint64(d)
	}
	starts := make([]uint64, 0, nb+1)
	starts = append(starts, 0)
	if total == 0 {
		for k := 1; k < nb; k++ {
			starts = append(starts, uint64(int64(k)*n/int64(nb)))
		}
	} else {
		// Start bucket k at the first vertex whose prefix mass reaches
		// k*total/nb; a heavy vertex swallows targets, which just yields
		// fewer buckets.
		var cum uint64
		k := 1
		for v := int64(0); v < n && k < nb; v++ {
			cum += uint64(deg[v])
			for k < nb && cum*uint64(nb) >= uint64(k)*total {
				k++
				if s := uint64(v + 1); s > starts[len(starts)-1] && s < uint64(n) {
					starts = append(starts, s)
				}
			}
		}
	}
	starts = append(starts, uint64(n))
	if n == 0 {
		starts = starts[:1]
	}
	g := &rangeGrid{starts: starts, bucket: make([]uint16, n)}
	for b := 0; b+1 < len(starts); b++ {
		for v := starts[b]; v < starts[b+1]; v++ {
			g.bucket[v] = uint16(b)
		}
	}
	nbk := len(starts) - 1
	g.cells = make([]uint64, nbk*nbk)
	return g
}

func (g *rangeGrid) buckets() int { return len(g.starts) - 1 }

// addEdge counts one forward edge u -> v (ids in rank order).
func (g *rangeGrid) addEdge(u, v uint32) {
	g.cells[int(g.bucket[u])*g.buckets()+int(g.bucket[v])]++
}

// countCSR fills the cell matrix from a forward CSR using workers goroutines,
// each with its own matrix.
func (g *rangeGrid) countCSR(fwd *graph.CSR, workers int) {
	nb := g.buckets()
	if nb == 0 {
		return
	}
	workers = clampWorkers(workers)
	chunks := rowChunks(fwd, workers*4)
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan [2]int64, len(chunks))
	for _, c := range chunks {
		next <- c
	}
	close(next)
	for range min(workers, len(chunks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]uint64, nb*nb)
			for c := range next {
				for u := c[0]; u < c[1]; u++ {
					row := local[int(g.bucket[u])*nb:]
					for _, v := range fwd.Cols[fwd.Offsets[u]:fwd.Offsets[u+1]] {
						row[g.bucket[v]]++
					}
				}
			}
			mu.Lock()
			for i, x := range local {
				g.cells[i] += x
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
}

// bounds picks p groups of whole buckets minimising the largest block and
// returns the P+1 group starts in vertex ids.
func (g *rangeGrid) bounds(p int) ([]uint64, error) {
	nb := g.buckets()
	// Prefix sums over the (nb+1)^2 grid make any block an O(1) query.
	w := nb + 1
	s := make([]uint64, w*w)
	for a := 0; a < nb; a++ {
		for b := 0; b < nb; b++ {
			s[(a+1)*w+b+1] = g.cells[a*nb+b] + s[a*w+b+1] + s[(a+1)*w+b] - s[a*w+b]
		}
	}
	block := func(r0, r1, c0, c1 int) uint64 {
		return s[r1*w+c1] - s[r0*w+c1] - s[r1*w+c0] + s[r0*w+c0]
	}
	cut := make([]int, p+1)
	// sweep tries target m; on success cut holds bucket boundaries.
	sweep := func(m uint64) bool {
		cut[0] = 0
		for j := 0; j < p; j++ {
			rest := p - 1 - j
			if rest == 0 {
				cut[p] = nb
			} else {
				hi := max(cut[j], nb-rest)
				lo := min(cut[j]+1, hi)
				fits := func(x int) bool {
					for i := 0; i < j; i++ {
						if block(cut[i], cut[i+1], cut[j], x) > m {
							return false
						}
					}
					return block(cut[j], x, cut[j], x) <= m
				}
				if !fits(lo) {
					return false
				}
				// Blocks only grow with x: binary search the largest fit.
				for lo < hi {
					mid := (lo + hi + 1) / 2
					if fits(mid) {
						lo = mid
					} else {
						hi = mid - 1
					}
				}
				cut[j+1] = lo
			}
			for i := 0; i <= j; i++ {
				if block(cut[i], cut[i+1], cut[j], cut[j+1]) > m {
					return false
				}
			}
		}
		return true
	}
	total := block(0, nb, 0, nb)
	lo, hi := uint64(0), total
	for lo < hi {
		mid := lo + (hi-lo)/2
		if sweep(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if !sweep(lo) {
		// A target of all edges always fits, so this means a bug here.
		return nil, fmt.Errorf("partition: range boundary search failed at target %d of %d edges", lo, total)
	}
	coarseSearch(cut, nb, block)
	descend(cut, nb, block)
	out := make([]uint64, p+1)
	for j, c := range cut {
		out[j] = g.starts[c]
	}
	return out, nil
}

// descend improves cuts by coordinate descent: move one cut at a time to
// the position that minimises (largest block, sum of squared blocks) over
// the blocks it touches, until no move helps. The greedy sweep is only a
// heuristic for the min-max problem (it grows early groups as far as they
// go, which loads row 0); descent typically lowers its maximum by a
// quarter on scale-free graphs. Only blocks in the two rows and columns
// next to a cut change when it moves, so a candidate costs O(P).
func descend(cut []int, nb int, block func(r0, r1, c0, c1 int) uint64) {
	p := len(cut) - 1
	type score struct {
		max uint64
		sq  float64
	}
	less := func(a, b score) bool { return a.max < b.max || a.max == b.max && a.sq < b.sq-1e-9*b.sq }
	touched := func(c, i, j int) bool { return i == c-1 || i == c || j == c-1 || j == c }
	for round := 0; round < 64; round++ {
		moved := false
		for c := 1; c < p; c++ {
			// Largest untouched block stays put while cut c moves.
			var fixed uint64
			for i := 0; i < p; i++ {
				for j := i; j < p; j++ {
					if !touched(c, i, j) {
						fixed = max(fixed, block(cut[i], cut[i+1], cut[j], cut[j+1]))
					}
				}
			}
			at := func(x int) score {
				old := cut[c]
				cut[c] = x
				sc := score{max: fixed}
				for i := 0; i < p; i++ {
					for j := i; j < p; j++ {
						if touched(c, i, j) {
							b := block(cut[i], cut[i+1], cut[j], cut[j+1])
							sc.max = max(sc.max, b)
							sc.sq += float64(b) * float64(b)
						}
					}
				}
				cut[c] = old
				return sc
			}
			lo, hi := cut[c-1], cut[c+1]
			if hi-lo >= 2 {
				lo, hi = lo+1, hi-1 // keep groups non-empty when buckets allow
			}
			best, bestX := at(cut[c]), cut[c]
			for x := lo; x <= hi; x++ {
				if sc := at(x); less(sc, best) {
					best, bestX = sc, x
				}
			}
			if bestX != cut[c] {
				cut[c] = bestX
				moved = true
			}
		}
		if !moved {
			break
		}
	}
}

// maxBlock returns the largest block of cuts.
func maxBlock(cut []int, block func(r0, r1, c0, c1 int) uint64) uint64 {
	var m uint64
	for i := 0; i+1 < len(cut); i++ {
		for j := i; j+1 < len(cut); j++ {
			m = max(m, block(cut[i], cut[i+1], cut[j], cut[j+1]))
		}
	}
	return m
}

// coarseSearch tries every placement of p-1 cuts on a grid of about
// coarseSteps evenly spaced buckets and copies the best into cut when it
// beats cut. The min-max landscape has plateaus where one-cut moves stall;
// for small P an exhaustive coarse pass lands in the right basin.
func coarseSearch(cut []int, nb int, block func(r0, r1, c0, c1 int) uint64) {
	p := len(cut) - 1
	const coarseSteps = 48
	if p < 2 || p > 5 || nb < 2*p {
		return
	}
	g := min(coarseSteps, nb)
	pos := make([]int, g+1)
	for k := range pos {
		pos[k] = k * nb / g
	}
	best := maxBlock(cut, block)
	try := make([]int, p+1)
	try[p] = nb
	var rec func(c, from int)
	rec = func(c, from int) {
		if c == p {
			if m := maxBlock(try, block); m < best {
				best = m
				copy(cut, try)
			}
			return
		}
		for k := from; k < g-(p-1-c); k++ {
			try[c] = pos[k]
			rec(c+1, k+1)
		}
	}
	rec(1, 1)
}

// forwardDegrees returns out+in degree of every vertex of a forward CSR.
func forwardDegrees(fwd *graph.CSR) []uint32 {
	n := fwd.NumRows()
	deg := make([]uint32, n)
	for u := int64(0); u < n; u++ {
		deg[u] += uint32(fwd.Offsets[u+1] - fwd.Offsets[u])
	}
	for _, v := range fwd.Cols {
		deg[v]++
	}
	return deg
}

// RangeBounds returns the range scheme's P+1 group starts for a forward
// graph (see the comment at the top of bounds.go).
func RangeBounds(fwd *graph.CSR, p, workers int) ([]uint64, error) {
	n := fwd.NumRows()
	if err := checkP(n, p); err != nil {
		return nil, err
	}
	g := newRangeGrid(forwardDegrees(fwd), p)
	g.countCSR(fwd, workers)
	return g.bounds(p)
}

func clampWorkers(w int) int {
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return w
}

// rowChunks cuts the rows of c into about k ranges of similar edge counts.
func rowChunks(c *graph.CSR, k int) [][2]int64 {
	n := c.NumRows()
	if n == 0 {
		return nil
	}
	m := uint64(c.NumEdges())
	per := m/uint64(k) + 1
	var out [][2]int64
	start := int64(0)
	for start < n {
		target := c.Offsets[start] + per
		// First row end whose offset reaches the target.
		lo, hi := start+1, n
		for lo < hi {
			mid := (lo + hi) / 2
			if c.Offsets[mid] >= target {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		out = append(out, [2]int64{start, lo})
		start = lo
	}
	return out
}
