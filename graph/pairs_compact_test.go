package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// CompactPairsInPlace must equal Compact of the same edges: dense and
// sparse ids, self-loops (also of ids seen nowhere else), duplicates, and
// several parts whose pairs land before their own range: with many loops
// (the parts move left past each other) and with few (each part writes
// straight to its final place, keeping its first pairs aside).
func TestCompactPairsInPlace(t *testing.T) {
	compactPairsWith := func(pairs []uint32, opts CleanOptions, bitsMax uint64) (*Compacted, error) {
		defer func(was uint64) { idBitsMax = was }(idBitsMax)
		idBitsMax = bitsMax
		return CompactPairsInPlace(pairs, opts)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	sizes := []struct {
		n, m      int
		spread    uint64
		loopEvery int
	}{{1, 0, 1, 11}, {3, 1, 1, 11}, {40, 300, 1, 11}, {50, 300, 1 << 20, 11}, {2000, 300_000, 1, 11},
		{2000, 300_000, 1, 997}, {70_000, 400_000, 1, 5003}}
	for _, sz := range sizes {
		edges := spreadEdges(rng, sz.n, sz.m, sz.spread)
		for i := range edges {
			if i%sz.loopEvery == 0 {
				edges[i].V = edges[i].U // loops
			}
			if i%97 == 0 {
				edges[i] = Edge{U: uint64(sz.n) * sz.spread * 3, V: uint64(sz.n) * sz.spread * 3} // a loop-only id
			}
		}
		want, err := Compact(edges, CleanOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{1, 2, 5} {
			for _, bitsMax := range []uint64{idBitsMax, 0} { // rank bits, table
				pairs := make([]uint32, 0, 2*len(edges))
				for _, e := range edges {
					pairs = append(pairs, uint32(e.U), uint32(e.V))
				}
				got, err := compactPairsWith(pairs, CleanOptions{Workers: w}, bitsMax)
				if err != nil {
					t.Fatal(err)
				}
				if got.Stats != want.Stats || !slices.Equal(got.OrigID, want.OrigID) || !slices.Equal(got.Pairs, want.Pairs) {
					t.Fatalf("n %d m %d workers %d bits up to %d: %+v (%d pairs), Compact %+v (%d pairs)",
						sz.n, sz.m, w, bitsMax, got.Stats, len(got.Pairs)/2, want.Stats, len(want.Pairs)/2)
				}
			}
		}
	}
	// Ids already compact (every id up to the largest has a non-loop
	// edge), with loops and without: the pairs stay or only lose loops.
	for _, loopEvery := range []int{0, 7, 5003} {
		var edges []Edge
		for i := range 300_000 {
			u := uint64(rng.IntN(1 + rng.IntN(70_000)))
			e := Edge{U: u, V: (u + 1 + uint64(rng.IntN(69_999))) % 70_000}
			if i < 70_000 {
				e = Edge{U: uint64(i), V: uint64(i+1) % 70_000} // every id
			}
			if loopEvery > 0 && i%loopEvery == 0 {
				e.V = e.U
			}
			edges = append(edges, e)
		}
		want, err := Compact(edges, CleanOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(want.OrigID)) != want.OrigID[len(want.OrigID)-1]+1 {
			t.Fatalf("loops every %d: the ids are not all used", loopEvery)
		}
		for _, w := range []int{1, 4} {
			pairs := make([]uint32, 0, 2*len(edges))
			for _, e := range edges {
				pairs = append(pairs, uint32(e.U), uint32(e.V))
			}
			got, err := CompactPairsInPlace(pairs, CleanOptions{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			if got.Stats != want.Stats || !slices.Equal(got.OrigID, want.OrigID) || !slices.Equal(got.Pairs, want.Pairs) {
				t.Fatalf("compact ids, loops every %d, workers %d: %+v (%d pairs), Compact %+v (%d pairs)",
					loopEvery, w, got.Stats, len(got.Pairs)/2, want.Stats, len(want.Pairs)/2)
			}
		}
	}
	if _, err := CompactPairsInPlace([]uint32{1, 2, 3}, CleanOptions{}); err == nil {
		t.Fatal("an odd number of ids was accepted")
	}
}
