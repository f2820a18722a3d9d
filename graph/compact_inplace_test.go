package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// spreadEdges returns m edges over n ids spread by spread, with loops and
// duplicates in both directions.
func spreadEdges(rng *rand.Rand, n, m int, spread uint64) []Edge {
	edges := make([]Edge, m)
	for i := range edges {
		u := uint64(rng.IntN(1+rng.IntN(n))) * spread
		v := uint64(rng.IntN(n)) * spread
		if rng.IntN(40) == 0 {
			v = u
		}
		edges[i] = Edge{U: u, V: v}
	}
	return edges
}

// CompactInPlace must give exactly Compact's result (which
// TestCompactMatchesClean ties to Clean) on a copy of the same input,
// across the dense and sparse paths and across part counts; inputs above
// 2^16 edges per worker exercise the moves between parts. CleanCompacted
// of the result must equal the naive cleaner's graph and figures, or
// Clean's on inputs too large for the naive cleaner.
func TestCompactInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := []struct {
		n, m   int
		spread uint64
	}{{1, 0, 1}, {3, 1, 1}, {40, 300, 1}, {50, 300, 1 << 40}, {2000, 200_000, 1}}
	for _, sz := range sizes {
		edges := spreadEdges(rng, sz.n, sz.m, sz.spread)
		want, err := Compact(edges, CleanOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		workers := []int{1, 2, 5}
		if sz.m > 20_000 {
			workers = []int{5} // three parts: moves past two others
		}
		for _, w := range workers {
			in := slices.Clone(edges)
			got, err := CompactInPlace(in, CleanOptions{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			if got.Stats != want.Stats || !slices.Equal(got.OrigID, want.OrigID) || !slices.Equal(got.Pairs, want.Pairs) {
				t.Fatalf("n %d m %d workers %d: in place %+v (%d pairs), Compact %+v (%d pairs)",
					sz.n, sz.m, w, got.Stats, len(got.Pairs)/2, want.Stats, len(want.Pairs)/2)
			}
			u, st, err := CleanCompacted(got, CleanOptions{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			if sz.m <= 20_000 {
				checkAgainstNaive(t, edges, u, st)
			} else {
				wantU, wantSt, err := Clean(edges, CleanOptions{Workers: w})
				if err != nil {
					t.Fatal(err)
				}
				if st != wantSt || !slices.Equal(u.OrigID, wantU.OrigID) ||
					!slices.Equal(u.Adj.Cols, wantU.Adj.Cols) || !slices.Equal(u.Adj.Offsets, wantU.Adj.Offsets) {
					t.Fatalf("n %d m %d workers %d: CleanCompacted %+v, Clean %+v", sz.n, sz.m, w, st, wantSt)
				}
			}
		}
	}
}

// moveLeft must equal a plain copy for every distance, short and long
// against the length, and any number of workers.
func TestMoveLeft(t *testing.T) {
	const n = 300_000
	for _, d := range []int{0, 1, 3, 70_000, n, 2 * n} {
		for _, w := range []int{1, 4} {
			words := make([]uint32, 4*n)
			for i := range words {
				words[i] = uint32(i)
			}
			want := slices.Clone(words)
			copy(want[n:2*n], want[n+d:2*n+d])
			moveLeft(words, n, n+d, n, w)
			if !slices.Equal(words, want) {
				t.Fatalf("distance %d, %d workers: the moved words differ from a copy", d, w)
			}
		}
	}
}
