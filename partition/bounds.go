package partition

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/storage"
)

// Choosing range bounds (TriX's "2D managed" partition, section IV).
//
// Row and column groups share one set of cuts: the columns of B[I][J] are
// the rows of B[J][K]. With one contiguous range of ranks per group a
// forward graph (edges from lower to higher rank) fills only the P(P+1)/2
// blocks with I <= J, and P-1 cuts cannot make those equal: the largest
// stays near 1.35-1.4 times their mean on rmat graphs (an exhaustive
// search over cut positions confirms it), and not even a uniform density
// over the triangle u < v gets below 1.25. So the range scheme folds:
// ranks are cut into fold*P ranges dealt to the groups in boustrophedon
// order (storage.RangeGroup), each group holds low and high ranks, every
// block can fill, and under a uniform density fold 2 makes all P^2 blocks
// equal. Balance is then measured against the mean of all P^2 blocks.
//
// The cut positions minimise the largest block. Fold grows from 2 until
// the largest block is within foldTarget of the mean, up to searchFolds;
// if none gets there, the fold with the smallest largest block wins.
// Graphs whose edges cluster near the diagonal of the rank order
// (collaboration networks) gain most from more ranges, since mostly
// neighbouring ranges share edges.
//
// The search runs on a coarse grid so that it costs O(edges) once plus a
// little per candidate: vertices (in id = rank order) are cut into B
// buckets of about equal incident-edge mass, a B x B matrix counts the
// forward edges between buckets, and cuts fall on bucket starts. Block
// (I, J) sums the cells over the ranges of I times the ranges of J.
// Coordinate descent moves one cut at a time to the position that
// minimises (largest block, sum of squared blocks); a move changes only
// the two ranges beside the cut, so a candidate costs O(P^2 + fold*P).
// The min-max landscape has plateaus where one-cut moves stall, so basin
// hopping restarts the descent from randomly displaced cuts and keeps the
// best; the generator's seed is fixed, so the search is deterministic.
// Degrees come from the graph itself (out + in degree of the forward
// graph = undirected degree), so the external-memory partitioner, which
// knows the same degrees and streams the same edges, reaches the same
// bounds and byte-identical shards.

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
		fill(g.bucket[starts[b]:starts[b+1]], uint16(b))
	}
	nbk := len(starts) - 1
	g.cells = make([]uint64, nbk*nbk)
	return g
}

// fill sets every element of a to x.
func fill(a []uint16, x uint16) {
	for i := range a {
		a[i] = x
	}
}

func (g *rangeGrid) buckets() int { return len(g.starts) - 1 }

// countCSR fills the cell matrix from a forward CSR using workers goroutines,
// each with its own matrix.
func (g *rangeGrid) countCSR(fwd *graph.CSR, workers int) {
	nb := g.buckets()
	if nb == 0 {
		return
	}
	workers = clampWorkers(workers)
	chunks := rowChunks(fwd, workers*4)
	var wg sync.WaitGroup
	next := make(chan [2]int64, len(chunks))
	for _, c := range chunks {
		next <- c
	}
	close(next)
	locals := make([][]uint64, min(workers, len(chunks)))
	for w := range locals {
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
			locals[w] = local
		}()
	}
	wg.Wait()
	sumInto(g.cells, locals, workers)
}

const (
	// foldTarget is the largest block over the mean that ends the search
	// over folds.
	foldTarget = 1.15
	// searchFolds is the largest fold the search tries.
	searchFolds = 4
	// foldHops is the number of basin-hopping restarts per fold.
	foldHops = 24
	// foldSeed seeds the restarts' displacements.
	foldSeed = 0x7472696772696421
)

// bounds picks fold*p ranges of whole buckets minimising the largest block
// and returns their fold*p+1 starts in vertex ids, with the fold.
func (g *rangeGrid) bounds(p int) ([]uint64, int) {
	if p == 1 {
		return []uint64{0, g.starts[len(g.starts)-1]}, 1
	}
	nb := g.buckets()
	// Prefix sums over the (nb+1)^2 grid make any range pair an O(1)
	// query.
	w := nb + 1
	s := make([]uint64, w*w)
	for a := 0; a < nb; a++ {
		for b := 0; b < nb; b++ {
			s[(a+1)*w+b+1] = g.cells[a*nb+b] + s[a*w+b+1] + s[(a+1)*w+b] - s[a*w+b]
		}
	}
	total := s[nb*w+nb]
	var best []int
	var bestScore foldScore
	for fold := 2; fold <= searchFolds; fold++ {
		fs := newFoldSearch(s, nb, p, fold)
		cut, sc := fs.search()
		if best == nil || sc.max < bestScore.max {
			best, bestScore = cut, sc
		}
		if float64(sc.max)*float64(p*p) <= foldTarget*float64(total) {
			break
		}
	}
	out := make([]uint64, len(best))
	for r, c := range best {
		out[r] = g.starts[c]
	}
	return out, (len(best) - 1) / p
}

// foldScore ranks cut positions: largest block first, then the sum of
// squared blocks, which moves the descent along plateaus of the maximum.
type foldScore struct {
	max uint64
	sq  float64
}

func (a foldScore) less(b foldScore) bool {
	return a.max < b.max || a.max == b.max && a.sq < b.sq-1e-9*b.sq
}

// foldSearch places the fold*p+1 cuts (bucket indices) of one fold.
type foldSearch struct {
	s          []uint64 // prefix sums over the (nb+1)^2 grid
	nb, p, r   int
	group      []int    // group of each range
	m, base, t []uint64 // block sums (p*p): current, without two ranges, candidate
}

func newFoldSearch(s []uint64, nb, p, fold int) *foldSearch {
	r := fold * p
	f := &foldSearch{s: s, nb: nb, p: p, r: r, group: make([]int, r),
		m: make([]uint64, p*p), base: make([]uint64, p*p), t: make([]uint64, p*p)}
	for k := range r {
		f.group[k] = storage.RangeGroup(k, p)
	}
	return f
}

// pair returns the forward edges from range a to range b (a <= b; a > b
// holds none, edges go up in rank).
func (f *foldSearch) pair(cut []int, a, b int) uint64 {
	w := f.nb + 1
	r0, r1, c0, c1 := cut[a], cut[a+1], cut[b], cut[b+1]
	return f.s[r1*w+c1] - f.s[r0*w+c1] - f.s[r1*w+c0] + f.s[r0*w+c0]
}

// fill sets m to the block sums of cut.
func (f *foldSearch) fill(cut []int, m []uint64) {
	clear(m)
	for a := range f.r {
		ga := f.group[a] * f.p
		for b := a; b < f.r; b++ {
			m[ga+f.group[b]] += f.pair(cut, a, b)
		}
	}
}

// touching adds sign * the pairs that involve range c-1 or c (the ranges
// beside cut c) to m.
func (f *foldSearch) touching(cut []int, c int, m []uint64, sub bool) {
	add := func(a, b int) {
		x := f.pair(cut, a, b)
		k := f.group[a]*f.p + f.group[b]
		if sub {
			m[k] -= x
		} else {
			m[k] += x
		}
	}
	lo, hi := c-1, c
	for b := lo; b < f.r; b++ {
		add(lo, b)
	}
	for b := hi; b < f.r; b++ {
		add(hi, b)
	}
	for a := 0; a < lo; a++ {
		add(a, lo)
		add(a, hi)
	}
}

func score(m []uint64) foldScore {
	var sc foldScore
	for _, x := range m {
		sc.max = max(sc.max, x)
		sc.sq += float64(x) * float64(x)
	}
	return sc
}

// descend moves one cut at a time to its best position until no move
// helps, and returns the score reached.
func (f *foldSearch) descend(cut []int) foldScore {
	f.fill(cut, f.m)
	best := score(f.m)
	for round := 0; round < 64; round++ {
		moved := false
		for c := 1; c < f.r; c++ {
			copy(f.base, f.m)
			f.touching(cut, c, f.base, true)
			old, bx := cut[c], cut[c]
			for x := cut[c-1]; x <= cut[c+1]; x++ {
				if x == old {
					continue
				}
				cut[c] = x
				copy(f.t, f.base)
				f.touching(cut, c, f.t, false)
				if sc := score(f.t); sc.less(best) {
					best, bx = sc, x
				}
			}
			cut[c] = bx
			if bx != old {
				moved = true
				copy(f.m, f.base)
				f.touching(cut, c, f.m, false)
			}
		}
		if !moved {
			break
		}
	}
	return best
}

// search descends from equal bucket counts per range, then from foldHops
// random displacements of the best cuts (each inner cut by up to half a
// mean range), keeping the best.
func (f *foldSearch) search() ([]int, foldScore) {
	cut := make([]int, f.r+1)
	for k := range cut {
		cut[k] = k * f.nb / f.r
	}
	best := f.descend(cut)
	rng := rand.New(rand.NewPCG(foldSeed, uint64(f.p*64+f.r)))
	span := max(1, f.nb/(2*f.r))
	try := make([]int, f.r+1)
	for range foldHops {
		copy(try, cut)
		for c := 1; c < f.r; c++ {
			try[c] = min(max(try[c]+rng.IntN(2*span+1)-span, 0), f.nb)
		}
		slices.Sort(try[1:f.r])
		if sc := f.descend(try); sc.less(best) {
			best = sc
			copy(cut, try)
		}
	}
	return cut, best
}

// forwardDegrees returns out+in degree of every vertex of a forward CSR,
// using workers goroutines over row chunks. Each worker counts the top
// hubIDs ids (the hubs, in degree order) in an array of its own, added up
// at the end, and every other id with an atomic add, which those ids, few
// edges each, rarely contend for.
func forwardDegrees(fwd *graph.CSR, workers int) []uint32 {
	n := fwd.NumRows()
	deg := make([]uint32, n)
	workers = clampWorkers(workers)
	if workers == 1 || fwd.NumEdges() < 1<<16 {
		for u := int64(0); u < n; u++ {
			deg[u] += uint32(fwd.Offsets[u+1] - fwd.Offsets[u])
		}
		for _, v := range fwd.Cols {
			deg[v]++
		}
		return deg
	}
	hub := uint32(max(n-hubIDs, 0))
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
			local := make([]uint32, n-int64(hub))
			add := func(v, d uint32) {
				if v >= hub {
					local[v-hub] += d
				} else {
					atomic.AddUint32(&deg[v], d)
				}
			}
			for c := range next {
				for u := c[0]; u < c[1]; u++ {
					add(uint32(u), uint32(fwd.Offsets[u+1]-fwd.Offsets[u]))
					for _, v := range fwd.Cols[fwd.Offsets[u]:fwd.Offsets[u+1]] {
						add(v, 1)
					}
				}
			}
			mu.Lock()
			for i, x := range local {
				deg[hub+uint32(i)] += x
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return deg
}

// hubIDs is the number of top ids forwardDegrees counts per worker.
const hubIDs = 1 << 16

// RangeBounds returns the range scheme's fold*P+1 range starts for a
// forward graph, with the fold (see the comment at the top of bounds.go).
func RangeBounds(fwd *graph.CSR, p, workers int) ([]uint64, int, error) {
	n := fwd.NumRows()
	if err := checkP(n, p); err != nil {
		return nil, 0, err
	}
	g := newRangeGrid(forwardDegrees(fwd, workers), p)
	g.countCSR(fwd, workers)
	b, fold := g.bounds(p)
	return b, fold, nil
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
