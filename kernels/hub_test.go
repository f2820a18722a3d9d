package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// hubGraph is a forward graph oriented by id (not by degree, so the hub
// keeps a huge row): vertex 0 points at every other vertex, and m random
// edges join the others. Every other edge closes one triangle with the hub.
func hubGraph(rng *rand.Rand, n, m int) *graph.CSR {
	return csrOf(n, n, hubEdges(rng, n, m))
}

func hubEdges(rng *rand.Rand, n, m int) [][2]uint32 {
	var e [][2]uint32
	for v := 1; v < n; v++ {
		e = append(e, [2]uint32{0, uint32(v)})
	}
	seen := map[[2]uint32]bool{}
	for len(seen) < m {
		a, b := uint32(1+rng.IntN(n-1)), uint32(1+rng.IntN(n-1))
		k := [2]uint32{min(a, b), max(a, b)}
		if a != b && !seen[k] {
			seen[k] = true
			e = append(e, k)
		}
	}
	return e
}

// TestHub checks rows far longer than a chunk and lists of very different
// lengths (the galloping and lopsided paths), against brute force.
func TestHub(t *testing.T) {
	tests := []struct {
		name string
		n, m int
	}{
		{"sparse rest", 3000, 40},   // hub list >> all probe lists: search in u's list
		{"dense rest", 1500, 20000}, // balanced: marks and merges
		{"big hub", 70000, 2000},    // hub row spans many chunks
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := hubEdges(rng, tt.n, tt.m)
			// Every non-hub edge makes a triangle with the hub; the rest
			// form triangles among themselves, counted by brute force on
			// the vertices they touch.
			want := uint64(tt.m) + bruteForceSparse(e[tt.n-1:])
			s := Whole(csrOf(tt.n, tt.n, e))
			for _, c := range testCounters(t) {
				if got := countWith(t, c, s); got != want {
					t.Errorf("%s = %d, want %d", c.Name(), got, want)
				}
			}
		})
	}
	// The reverse shape: a small row u whose edges lead to a hub v, so
	// JK.Row(v) dwarfs IK.Row(u).
	t.Run("small row into hub", func(t *testing.T) {
		const n = 5000
		var e [][2]uint32
		for v := 2; v < n; v++ {
			e = append(e, [2]uint32{1, uint32(v)})
		}
		for _, v := range []uint32{1, 7, 99, 1234, 4999} {
			e = append(e, [2]uint32{0, v})
		}
		want := uint64(4) // 0-1-v for each v of 0's list other than 1
		s := Whole(csrOf(n, n, e))
		for _, c := range testCounters(t) {
			if got := countWith(t, c, s); got != want {
				t.Errorf("%s = %d, want %d", c.Name(), got, want)
			}
		}
	})
}

// bruteForceSparse counts the triangles of a small edge set over a large id
// space by compacting the ids first.
func bruteForceSparse(edges [][2]uint32) uint64 {
	ids := map[uint32]uint32{}
	var c [][2]uint32
	for _, e := range edges {
		for _, x := range e {
			if _, ok := ids[x]; !ok {
				ids[x] = uint32(len(ids))
			}
		}
		c = append(c, [2]uint32{ids[e[0]], ids[e[1]]})
	}
	return bruteForce(len(ids), c)
}
