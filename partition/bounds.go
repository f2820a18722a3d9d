package partition

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/parallel"
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
// minimises (largest block, sum of squared blocks). A move changes only
// the two ranges beside the cut, so only the blocks in the rows and
// columns of their groups: the sweep of one cut over its positions first
// sums, by group, the prefix sums of the other ranges along the sweep
// (read along rows of the prefix sums and of their transpose), so that a
// candidate costs O(P), and a candidate is dropped as soon as one of its
// blocks exceeds the best largest block. Folds above 2 are searched at
// once.
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
// and returns their fold*p+1 starts in vertex ids, with the fold. Fold 2
// is searched first (at small P it usually reaches foldTarget); the
// larger folds are then searched at once on up to workers goroutines and
// weighed in order, so the answer is the same whatever workers is.
func (g *rangeGrid) bounds(p, workers int) ([]uint64, int) {
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
	// st is s transposed: the sums over a range of rows for fixed
	// columns, read along the rows, lie side by side.
	st := make([]uint64, w*w)
	for a := range w {
		for b := range w {
			st[b*w+a] = s[a*w+b]
		}
	}
	total := s[nb*w+nb]
	type found struct {
		cut []int
		sc  foldScore
	}
	res := make([]found, searchFolds+1)
	search := func(fold int) {
		res[fold].cut, res[fold].sc = newFoldSearch(s, st, nb, p, fold).search()
	}
	reached := func(sc foldScore) bool { return float64(sc.max)*float64(p*p) <= foldTarget*float64(total) }
	search(2)
	if !reached(res[2].sc) {
		// The largest fold, the longest search, first.
		parallel.Dynamic(searchFolds-2, 1, workers, func(k, _ int) { search(searchFolds - k) })
	}
	var best []int
	var bestScore foldScore
	for fold := 2; fold <= searchFolds; fold++ {
		cut, sc := res[fold].cut, res[fold].sc
		if best == nil || sc.max < bestScore.max {
			best, bestScore = cut, sc
		}
		if reached(sc) {
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
	s, st      []uint64 // prefix sums over the (nb+1)^2 grid, and transposed
	nb, p, r   int
	group      []int    // group of each range
	m, base, t []uint64 // block sums (p*p): current, without two ranges, candidate
	// A move of cut c changes only the blocks in the rows and columns of
	// the groups of ranges c-1 and c: moved lists them (each once: stamp
	// marks the blocks listed by the gen-th call of around), and rest is
	// the score of all the others.
	moved []int
	stamp []uint64
	gen   uint64
	rest  foldScore
	// The sweep of cut c over [lo, hi] (around): up[g*(hi-lo+1)+i] sums,
	// over the ranges a < c-1 of group g, a's edges into columns
	// [0, lo+i); down[...] sums, over the ranges b > c of group g, the
	// edges from rows [0, lo+i) into b's columns. Ranges c-1 and c meet
	// at lo+i.
	up, down []uint64
	lo, hi   int
}

func newFoldSearch(s, st []uint64, nb, p, fold int) *foldSearch {
	r := fold * p
	f := &foldSearch{s: s, st: st, nb: nb, p: p, r: r, group: make([]int, r),
		m: make([]uint64, p*p), base: make([]uint64, p*p), t: make([]uint64, p*p),
		moved: make([]int, 0, 4*p), stamp: make([]uint64, p*p)}
	for k := range r {
		f.group[k] = storage.RangeGroup(k, p)
	}
	return f
}

// around prepares the moves of cut c from f.base (the blocks without
// ranges c-1 and c): the blocks a move changes, the score of the others,
// and the sweep's sums by group (up, down), read along rows of s and st.
func (f *foldSearch) around(cut []int, c int) {
	f.gen++
	f.moved = f.moved[:0]
	for _, g := range [2]int{f.group[c-1], f.group[c]} {
		for j := range f.p {
			for _, k := range [2]int{g*f.p + j, j*f.p + g} {
				if f.stamp[k] != f.gen {
					f.stamp[k] = f.gen
					f.moved = append(f.moved, k)
				}
			}
		}
	}
	f.rest = foldScore{}
	for k, x := range f.base {
		if f.stamp[k] != f.gen {
			f.rest.max = max(f.rest.max, x)
			f.rest.sq += float64(x) * float64(x)
		}
	}
	w := f.nb + 1
	f.lo, f.hi = cut[c-1], cut[c+1]
	n := f.hi - f.lo + 1
	f.up = slices.Grow(f.up[:0], f.p*n)[:f.p*n]
	f.down = slices.Grow(f.down[:0], f.p*n)[:f.p*n]
	clear(f.up)
	clear(f.down)
	for a := 0; a < c-1; a++ {
		// Range a's rows [cut[a], cut[a+1]), columns [0, y).
		r0, r1 := f.s[cut[a]*w+f.lo:][:n], f.s[cut[a+1]*w+f.lo:][:n]
		u := f.up[f.group[a]*n:][:n]
		for i := range u {
			u[i] += r1[i] - r0[i]
		}
	}
	for b := c + 1; b < f.r; b++ {
		// Rows [0, y), range b's columns [cut[b], cut[b+1]).
		c0, c1 := f.st[cut[b]*w+f.lo:][:n], f.st[cut[b+1]*w+f.lo:][:n]
		d := f.down[f.group[b]*n:][:n]
		for i := range d {
			d[i] += c1[i] - c0[i]
		}
	}
}

// candidate returns the score of cut c at x (around prepared the sweep):
// the blocks a move changes, from f.base plus the pairs of ranges c-1 =
// [lo, x) and c = [x, hi), with the others' score. It gives up (false) as
// soon as a block exceeds bound: such a position cannot beat a score
// whose largest block is bound.
func (f *foldSearch) candidate(c, x int, bound uint64) (foldScore, bool) {
	p, n, i := f.p, f.hi-f.lo+1, x-f.lo
	gl, gh := f.group[c-1], f.group[c]
	// The blocks where the rows and columns of groups gl and gh cross
	// take several of the sums below; every other moved block takes one.
	for _, k := range [4]int{gl*p + gl, gl*p + gh, gh*p + gl, gh*p + gh} {
		f.t[k] = f.base[k]
	}
	groups := [2]int{gl, gh}
	for _, g := range groups[:1+b2i(gl != gh)] {
		u, d := f.up[g*n:][:n], f.down[g*n:][:n]
		f.t[g*p+gl] += u[i] - u[0]
		f.t[g*p+gh] += u[n-1] - u[i]
		f.t[gl*p+g] += d[i] - d[0]
		f.t[gh*p+g] += d[n-1] - d[i]
	}
	w := f.nb + 1
	s := func(r, c int) uint64 { return f.s[r*w+c] }
	lo, hi := f.lo, f.hi
	f.t[gl*p+gl] += s(x, x) - s(lo, x) - s(x, lo) + s(lo, lo)
	f.t[gl*p+gh] += s(x, hi) - s(lo, hi) - s(x, x) + s(lo, x)
	f.t[gh*p+gh] += s(hi, hi) - s(x, hi) - s(hi, x) + s(x, x)
	sc := f.rest
	add := func(v uint64) bool {
		sc.max = max(sc.max, v)
		sc.sq += float64(v) * float64(v)
		return v <= bound
	}
	if gl == gh {
		if !add(f.t[gl*p+gl]) {
			return sc, false
		}
	} else {
		for _, k := range [4]int{gl*p + gl, gl*p + gh, gh*p + gl, gh*p + gh} {
			if !add(f.t[k]) {
				return sc, false
			}
		}
	}
	for g := range p {
		if g == gl || g == gh {
			continue
		}
		u, d := f.up[g*n:][:n], f.down[g*n:][:n]
		if gl == gh {
			// Ranges c-1 and c of one group: their blocks with g do not
			// depend on x.
			if !add(f.base[g*p+gl]+u[n-1]-u[0]) || !add(f.base[gl*p+g]+d[n-1]-d[0]) {
				return sc, false
			}
			continue
		}
		// Ranges a < c-1 of group g into c-1 and into c; c-1 and c into
		// the ranges b > c of group g.
		if !add(f.base[g*p+gl]+u[i]-u[0]) || !add(f.base[g*p+gh]+u[n-1]-u[i]) ||
			!add(f.base[gl*p+g]+d[i]-d[0]) || !add(f.base[gh*p+g]+d[n-1]-d[i]) {
			return sc, false
		}
	}
	return sc, true
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
			f.around(cut, c)
			old, bx := cut[c], cut[c]
			for x := cut[c-1]; x <= cut[c+1]; x++ {
				if x == old {
					continue
				}
				if sc, ok := f.candidate(c, x, best.max); ok && sc.less(best) {
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
	b, fold := g.bounds(p, workers)
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
