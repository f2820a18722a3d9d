package graph

import (
	"math/rand/v2"
	"testing"
)

// Compact must number ids exactly as Clean does, keep every non-loop edge
// in input order, and report the same loop and isolated-id figures.
func TestCompactMatchesClean(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 60; trial++ {
		n := 1 + rng.IntN(50)
		m := rng.IntN(300)
		spread := uint64(1)
		if trial%3 == 0 {
			spread = 1 << 40 // sparse ids take the other remap path
		}
		edges := make([]Edge, m)
		for i := range edges {
			edges[i] = Edge{U: uint64(rng.IntN(n)) * spread, V: uint64(rng.IntN(n)) * spread}
		}
		for _, w := range []int{1, 3} {
			c, err := Compact(edges, CleanOptions{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			u, st, err := Clean(edges, CleanOptions{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			if c.Stats.SelfLoops != st.SelfLoops || c.Stats.IsolatedIDs != st.IsolatedIDs || c.Stats.Vertices != st.Vertices || c.Stats.InputEdges != st.InputEdges {
				t.Fatalf("trial %d: compact stats %+v, clean stats %+v", trial, c.Stats, st)
			}
			if len(c.OrigID) != len(u.OrigID) {
				t.Fatalf("trial %d: %d ids, clean has %d", trial, len(c.OrigID), len(u.OrigID))
			}
			for i := range c.OrigID {
				if c.OrigID[i] != u.OrigID[i] {
					t.Fatalf("trial %d: id %d is %d, clean says %d", trial, i, c.OrigID[i], u.OrigID[i])
				}
			}
			k := 0
			for _, e := range edges {
				if e.U == e.V {
					continue
				}
				if c.OrigID[c.Pairs[k]] != e.U || c.OrigID[c.Pairs[k+1]] != e.V {
					t.Fatalf("trial %d: pair %d is (%d,%d), want (%d,%d)", trial, k/2, c.OrigID[c.Pairs[k]], c.OrigID[c.Pairs[k+1]], e.U, e.V)
				}
				k += 2
			}
			if k != len(c.Pairs) {
				t.Fatalf("trial %d: %d pair entries, want %d", trial, len(c.Pairs), k)
			}
		}
	}
}
