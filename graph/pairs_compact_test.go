package graph

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
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
		{2000, 300_000, 1, 997}}
	if testlong.Enabled() {
		sizes = append(sizes, struct {
			n, m      int
			spread    uint64
			loopEvery int
		}{70_000, 400_000, 1, 5003})
	}
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
	loopEvery := []int{0, 5003}
	if testlong.Enabled() {
		loopEvery = []int{0, 7, 5003}
	}
	for _, loopEvery := range loopEvery {
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

// MarkPairs leaves the pairs as they are, and its Bits translate each
// non-loop pair, in input order, into the pairs CompactPairsInPlace
// writes, with its OrigID and Stats; Bits is nil on the table's path and
// for sparse ids, whose Compact still equals CompactPairsInPlace's.
func TestMarkPairs(t *testing.T) {
	defer func(was uint64) { idBitsMax = was }(idBitsMax)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct {
		n, m    int
		spread  uint64
		bitsMax uint64
		bits    bool
	}{{40, 300, 1, idBitsMax, true}, {2000, 300_000, 1, idBitsMax, true}, {2000, 300_000, 1, 0, false},
		{50, 300, 1 << 20, idBitsMax, false}, {1, 0, 1, idBitsMax, false}} {
		idBitsMax = tc.bitsMax
		edges := spreadEdges(rng, tc.n, tc.m, tc.spread)
		for i := range edges {
			if i%13 == 0 {
				edges[i].V = edges[i].U
			}
		}
		pairs := make([]uint32, 0, 2*len(edges))
		for _, e := range edges {
			pairs = append(pairs, uint32(e.U), uint32(e.V))
		}
		want, err := CompactPairsInPlace(slices.Clone(pairs), CleanOptions{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		in := slices.Clone(pairs)
		m, err := MarkPairs(in, CleanOptions{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(in, pairs) {
			t.Fatalf("n %d: MarkPairs changed the pairs", tc.n)
		}
		if (m.Bits != nil) != tc.bits {
			t.Fatalf("n %d bits up to %d: Bits set %v, want %v", tc.n, tc.bitsMax, m.Bits != nil, tc.bits)
		}
		if m.Bits != nil {
			if m.Stats != want.Stats || !slices.Equal(m.OrigID, want.OrigID) {
				t.Fatalf("n %d: stats %+v, want %+v", tc.n, m.Stats, want.Stats)
			}
			id := func(u uint32) uint32 {
				i := 2 * int(u>>6)
				return uint32(m.Bits[i+1]) + uint32(bits.OnesCount64(m.Bits[i]&(1<<(u&63)-1)))
			}
			var got []uint32
			for i := 0; i < len(pairs); i += 2 {
				if pairs[i] != pairs[i+1] {
					got = append(got, id(pairs[i]), id(pairs[i+1]))
				}
			}
			if !slices.Equal(got, want.Pairs) {
				t.Fatalf("n %d: the pairs translated through Bits differ from CompactPairsInPlace's", tc.n)
			}
		}
		c, err := m.Compact()
		if err != nil {
			t.Fatal(err)
		}
		if c.Stats != want.Stats || !slices.Equal(c.OrigID, want.OrigID) || !slices.Equal(c.Pairs, want.Pairs) {
			t.Fatalf("n %d bits up to %d: Compact differs from CompactPairsInPlace", tc.n, tc.bitsMax)
		}
	}
}
