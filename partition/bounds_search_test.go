package partition

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/storage"
)

// naiveSearch is foldSearch.search with every candidate scored from
// scratch (all range pairs summed into all P^2 blocks): the search the
// sweep, the group sums and the early exit must reproduce cut for cut.
func naiveSearch(s []uint64, nb, p, fold int) ([]int, foldScore) {
	f := newFoldSearch(s, nil, nb, p, fold)
	m := make([]uint64, p*p)
	scoreOf := func(cut []int) foldScore {
		f.fill(cut, m)
		return score(m)
	}
	descend := func(cut []int) foldScore {
		best := scoreOf(cut)
		for range 64 {
			moved := false
			for c := 1; c < f.r; c++ {
				old, bx := cut[c], cut[c]
				for x := cut[c-1]; x <= cut[c+1]; x++ {
					if x == old {
						continue
					}
					cut[c] = x
					if sc := scoreOf(cut); sc.less(best) {
						best, bx = sc, x
					}
				}
				cut[c] = bx
				moved = moved || bx != old
			}
			if !moved {
				break
			}
		}
		return best
	}
	cut := make([]int, f.r+1)
	for k := range cut {
		cut[k] = k * nb / f.r
	}
	best := descend(cut)
	rng := rand.New(rand.NewPCG(foldSeed, uint64(p*64+f.r)))
	span := max(1, nb/(2*f.r))
	try := make([]int, f.r+1)
	for range foldHops {
		copy(try, cut)
		for c := 1; c < f.r; c++ {
			try[c] = min(max(try[c]+rng.IntN(2*span+1)-span, 0), nb)
		}
		slices.Sort(try[1:f.r])
		if sc := descend(try); sc.less(best) {
			best = sc
			copy(cut, try)
		}
	}
	return cut, best
}

// The boundary search finds the cuts the naive search finds, on a grid of
// an R-MAT graph, at every fold and at P large enough that one range's
// groups meet themselves at the fold (boustrophedon order).
func TestFoldSearchMatchesNaive(t *testing.T) {
	t.Parallel()
	fwd := refForward(rmatEdges(10, 8, 7))
	for _, p := range []int{2, 3, 6} {
		g := newRangeGrid(forwardDegrees(fwd, 2), p)
		g.countCSR(fwd, 2)
		// A coarser grid than the partitioner's keeps the naive search
		// quick; the search is the same code at any size.
		nb := min(g.buckets(), 48)
		cells := make([]uint64, nb*nb)
		for a := range g.buckets() {
			for b := range g.buckets() {
				cells[(a*nb/g.buckets())*nb+b*nb/g.buckets()] += g.cells[a*g.buckets()+b]
			}
		}
		w := nb + 1
		s, st := make([]uint64, w*w), make([]uint64, w*w)
		for a := range nb {
			for b := range nb {
				s[(a+1)*w+b+1] = cells[a*nb+b] + s[a*w+b+1] + s[(a+1)*w+b] - s[a*w+b]
			}
		}
		for a := range w {
			for b := range w {
				st[b*w+a] = s[a*w+b]
			}
		}
		for fold := 2; fold <= searchFolds; fold++ {
			cut, sc := newFoldSearch(s, st, nb, p, fold).search()
			want, wsc := naiveSearch(s, nb, p, fold)
			if !slices.Equal(cut, want) || sc != wsc {
				t.Fatalf("P=%d fold %d: cuts %v (%+v), the naive search %v (%+v)", p, fold, cut, sc, want, wsc)
			}
		}
	}
}

// At P = 16, and 32 in the long tests (where every fold is searched), the
// range scheme's partition counts exactly what a brute-force count of the
// graph gives, and its bounds are the same on one worker and on several.
func TestRangeSchemeLargePCountsExactly(t *testing.T) {
	t.Parallel()
	fwd := refForward(rmatEdges(8, 8, 5))
	want := bruteCount(fwd)
	ps := []int{16}
	if testlong.Enabled() {
		ps = append(ps, 32)
	}
	for _, p := range ps {
		part, err := Split(fwd, storage.SchemeRange, p, 4)
		if err != nil {
			t.Fatal(err)
		}
		if got := countPartition(t, part); got != want {
			t.Fatalf("P=%d: %d triangles, brute force %d", p, got, want)
		}
		one, fold, err := RangeBounds(fwd, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		if fold != part.Layout.Fold || !slices.Equal(one, part.Layout.Bounds) {
			t.Fatalf("P=%d: bounds on 1 worker (fold %d) %v, on 4 (fold %d) %v", p, fold, one, part.Layout.Fold, part.Layout.Bounds)
		}
	}
}
