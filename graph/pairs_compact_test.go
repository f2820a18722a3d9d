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
	if _, err := CompactPairsInPlace([]uint32{1, 2, 3}, CleanOptions{}); err == nil {
		t.Fatal("an odd number of ids was accepted")
	}
}
