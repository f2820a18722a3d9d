package graph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkAgainstNaive compares a cleaned graph with the naive cleaner's.
func checkAgainstNaive(t *testing.T, edges []Edge, u *Undirected, st CleanStats) {
	t.Helper()
	want := naiveClean(edges)
	if st != want.stats {
		t.Fatalf("stats %+v, want %+v", st, want.stats)
	}
	if !slices.Equal(u.OrigID, want.orig) && !(len(u.OrigID) == 0 && len(want.orig) == 0) {
		t.Fatalf("OrigID %v, want %v", u.OrigID, want.orig)
	}
	if err := u.Adj.Validate(); err != nil {
		t.Fatalf("adjacency: %v", err)
	}
	if u.Adj.NumRows() != int64(len(want.nbr)) || u.Adj.NCols != int64(len(want.nbr)) {
		t.Fatalf("adjacency is %dx%d, want %d vertices", u.Adj.NumRows(), u.Adj.NCols, len(want.nbr))
	}
	for v, ns := range want.nbr {
		if got := u.Adj.Row(int64(v)); !slices.Equal(got, ns) && len(got)+len(ns) > 0 {
			t.Fatalf("row %d (id %d) = %v, want %v", v, want.orig[v], got, ns)
		}
	}
}

func TestCleanMatchesNaive(t *testing.T) {
	type variant struct {
		name    string
		paths   cleanPaths
		workers int
	}
	variants := []variant{
		{"auto-1", cleanPaths{}, 1},
		{"auto-3", cleanPaths{}, 3},
		{"dense-one-bucket-2", cleanPaths{remap: pathDense, perBucket: 1 << 30, wide: false}, 2},
		{"dense-tiny-buckets-3", cleanPaths{remap: pathDense, perBucket: 3, wide: false}, 3},
		{"dense-wide-3", cleanPaths{remap: pathDense, perBucket: 5, wide: true}, 3},
		{"sparse-tiny-buckets-3", cleanPaths{remap: pathSparse, perBucket: 2, wide: false}, 3},
		{"sparse-mid-buckets-2", cleanPaths{remap: pathSparse, perBucket: 40, wide: false}, 2},
		{"sparse-wide-1", cleanPaths{remap: pathSparse, perBucket: 0, wide: true}, 1},
	}
	for _, shape := range edgeShapes() {
		t.Run(shape.name, func(t *testing.T) {
			for seed := uint64(0); seed < 25; seed++ {
				r := rand.New(rand.NewPCG(seed, 1))
				edges := shape.make(r)
				for _, v := range variants {
					if v.paths.remap == pathDense && slices.ContainsFunc(edges, func(e Edge) bool {
						return max(e.U, e.V) >= 1<<24
					}) {
						continue // a dense table over huge ids would not fit
					}
					in := slices.Clone(edges)
					u, st, err := clean(in, CleanOptions{Workers: v.workers}, v.paths)
					if err != nil {
						t.Fatalf("seed %d %s: %v", seed, v.name, err)
					}
					if !slices.Equal(in, edges) {
						t.Fatalf("seed %d %s: input modified", seed, v.name)
					}
					t.Run(fmt.Sprintf("seed%d-%s", seed, v.name), func(t *testing.T) {
						checkAgainstNaive(t, edges, u, st)
					})
				}
			}
		})
	}
}

// TestCleanLarge covers what small inputs do not reach: several sampled
// buckets in the sparse remap, several partition parts and row buckets.
func TestCleanLarge(t *testing.T) {
	m := 150_000
	if raceEnabled {
		m = 70_000
	}
	r := rand.New(rand.NewPCG(7, 7))
	// Over 2^16 vertices: one bucket would need 17+17 bits per entry, so
	// "narrow-buckets" takes the narrower-bucket branch.
	base := randomEdges(r, 100_000, m)
	for i := 0; i < 500; i++ { // a hub, loops and repeats
		base = append(base, Edge{3, r.Uint64N(100_000)}, Edge{uint64(i), uint64(i)}, base[i])
	}
	cases := []struct {
		name  string
		edges []Edge
		paths cleanPaths
	}{
		{"dense-auto", base, cleanPaths{}},
		{"sparse-forced", base, cleanPaths{remap: pathSparse}},
		{"huge-ids", spreadIDs(base, r, true), cleanPaths{}},
		{"huge-ids-small-buckets", spreadIDs(base, r, true), cleanPaths{perBucket: 1000}},
		{"wide-entries", base, cleanPaths{perBucket: 3000, wide: true}},
		{"narrow-buckets", base, cleanPaths{perBucket: 1 << 40}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, st, err := clean(c.edges, CleanOptions{Workers: 4}, c.paths)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstNaive(t, c.edges, u, st)
		})
	}
}

// TestCleanOrderIndependent checks the contract the external-memory
// partitioner relies on: shuffling and flipping edges changes nothing.
func TestCleanOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	edges := spreadIDs(randomEdges(r, 300, 3000), r, false)
	u1, st1, err := Clean(edges, CleanOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	flipped := shuffled(r, edges)
	for i := range flipped {
		if i%2 == 0 {
			flipped[i].U, flipped[i].V = flipped[i].V, flipped[i].U
		}
	}
	u2, st2, err := Clean(flipped, CleanOptions{Workers: 5})
	if err != nil {
		t.Fatal(err)
	}
	if st1.Vertices != st2.Vertices || st1.Edges != st2.Edges || st1.Duplicates != st2.Duplicates {
		t.Fatalf("stats differ: %+v vs %+v", st1, st2)
	}
	if !slices.Equal(u1.OrigID, u2.OrigID) || !slices.Equal(u1.Adj.Offsets, u2.Adj.Offsets) ||
		!slices.Equal(u1.Adj.Cols, u2.Adj.Cols) {
		t.Fatal("cleaned graphs differ")
	}
}

func TestCleanProgress(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	edges := randomEdges(r, 1000, 50_000)
	var calls int
	var last, total int64
	_, _, err := Clean(edges, CleanOptions{Workers: 3, Progress: func(done, tot int64) {
		calls++
		if done < last || done > tot || (total != 0 && tot != total) {
			t.Errorf("progress went %d -> %d of %d", last, done, tot)
		}
		last, total = done, tot
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || last != total || total == 0 {
		t.Fatalf("%d calls, last %d of %d", calls, last, total)
	}
}

func TestSortUint32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{0, 1, 10, insertionMax, insertionMax + 1, radixBelow - 1, radixBelow, 1000, 5000} {
		for _, spread := range []uint32{1, 200, 1 << 16, 1<<32 - 1} {
			s := make([]uint32, n)
			for i := range s {
				s[i] = r.Uint32N(spread) + (1<<32-1-spread)/2
			}
			want := slices.Clone(s)
			slices.Sort(want)
			sortUint32(s, nil)
			if !slices.Equal(s, want) {
				t.Fatalf("n=%d spread=%d: not sorted", n, spread)
			}
		}
	}
}

func TestBucketOf(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for n := 0; n < 40; n++ {
		split := make([]uint64, n)
		for i := range split {
			split[i] = r.Uint64N(100)
		}
		slices.Sort(split)
		split = slices.Compact(split)
		for x := uint64(0); x < 102; x++ {
			want := 0
			for _, s := range split {
				if s <= x {
					want++
				}
			}
			if got := bucketOf(split, x); got != want {
				t.Fatalf("bucketOf(%v, %d) = %d, want %d", split, x, got, want)
			}
		}
	}
}

func TestIDTable(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{0, 1, 2, 7, 1000, 50_000} {
		ids := make([]uint64, n)
		set := map[uint64]bool{}
		for i := range ids {
			for {
				x := r.Uint64()
				if i%3 == 0 {
					x = uint64(i) << 40 // strided keys
				}
				if !set[x] {
					ids[i], set[x] = x, true
					break
				}
			}
		}
		tab := newIDTable(ids, 3)
		for c, x := range ids {
			if got, ok := tab.find(x); !ok || got != uint32(c) {
				t.Fatalf("n=%d: find(%d) = %d, %v, want %d", n, x, got, ok, c)
			}
		}
		for i := 0; i < 1000; i++ {
			if x := r.Uint64(); !set[x] {
				if _, ok := tab.find(x); ok {
					t.Fatalf("n=%d: found absent id %d", n, x)
				}
			}
		}
	}
}

func TestBucketer(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	// pick draws from [a, b], leaning to small offsets so that splitters
	// cluster (the case where a prefix holds several buckets).
	pick := func(a, b uint64) uint64 {
		off := r.Uint64() >> r.UintN(64)
		if span := b - a; span != ^uint64(0) {
			off %= span + 1
		}
		return a + off
	}
	for trial := 0; trial < 200; trial++ {
		lo := r.Uint64() >> r.UintN(64)
		hi := pick(lo, ^uint64(0))
		if trial%7 == 0 {
			lo, hi = 0, ^uint64(0)
		}
		var split []uint64
		for range r.IntN(50) {
			split = append(split, pick(lo, hi))
		}
		slices.Sort(split)
		split = slices.Compact(split)
		bk := newBucketer(split, lo, hi)
		probes := append([]uint64{lo, hi}, split...)
		for range 200 {
			probes = append(probes, pick(lo, hi))
		}
		for _, s := range split {
			if s > lo {
				probes = append(probes, s-1)
			}
		}
		for _, x := range probes {
			if x < lo || x > hi {
				continue
			}
			if got, want := bk.of(x), bucketOf(split, x); got != want {
				t.Fatalf("range [%d, %d], split %v: of(%d) = %d, want %d", lo, hi, split, x, got, want)
			}
		}
	}
}

func TestIDSetDedupe(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, n := range []int{0, 1, 5, 100, 5000, 20000} {
		for _, distinct := range []uint64{1, 3, 1000, 1 << 40} {
			s := make([]uint64, n)
			for i := range s {
				s[i] = r.Uint64N(distinct) * 0x100000001
				if i%10 == 0 {
					s[i] = ^uint64(0)
				}
			}
			want := slices.Clone(s)
			slices.Sort(want)
			want = slices.Compact(want)
			var set idSet
			k := set.dedupe(s)
			got := slices.Clone(s[:k])
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d distinct<%d: %d values, want %d", n, distinct, len(got), len(want))
			}
		}
	}
}

func TestCleanTooManyVertices(t *testing.T) {
	defer func(l uint64) { vertexLimit = l }(vertexLimit)
	vertexLimit = 4
	for _, c := range []struct {
		name  string
		paths cleanPaths
	}{{"dense", cleanPaths{remap: pathDense}}, {"sparse", cleanPaths{remap: pathSparse}}} {
		t.Run(c.name, func(t *testing.T) {
			ok := []Edge{{1, 2}, {3, 4}, {9, 9}}
			if _, _, err := clean(ok, CleanOptions{}, c.paths); err != nil {
				t.Fatalf("4 vertices at the limit: %v", err)
			}
			_, _, err := clean(append(ok, Edge{5, 1}), CleanOptions{}, c.paths)
			if !errors.Is(err, ErrTooManyVertices) || !strings.Contains(err.Error(), "graph: clean: 5 vertices") {
				t.Fatalf("5 vertices over a limit of 4: %v", err)
			}
		})
	}
}
