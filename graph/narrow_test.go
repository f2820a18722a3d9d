package graph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// NarrowInPlace keeps every pair in order for any split into parts, and
// declines ids of 64 bits without touching the edges; WidenPairs and
// WideIDs give back what they were made from.
func TestNarrowInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 1<<16 - 1, 3<<16 + 5, 9 << 16} {
		for _, w := range []int{1, 2, 5} {
			edges := make([]Edge, n)
			for i := range edges {
				edges[i] = Edge{U: rng.Uint64N(math.MaxUint32 + 1), V: rng.Uint64N(1 << 20)}
			}
			want := append([]Edge(nil), edges...)
			pairs, ok := NarrowInPlace(edges, w)
			if !ok || len(pairs) != 2*n {
				t.Fatalf("n %d w %d: ok=%v, %d ids", n, w, ok, len(pairs))
			}
			for i, e := range want {
				if uint64(pairs[2*i]) != e.U || uint64(pairs[2*i+1]) != e.V {
					t.Fatalf("n %d w %d: pair %d is (%d, %d), want %v", n, w, i, pairs[2*i], pairs[2*i+1], e)
				}
			}
			back := WidenPairs(pairs, w)
			for i := range want {
				if back[i] != want[i] {
					t.Fatalf("n %d w %d: widened edge %d is %v, want %v", n, w, i, back[i], want[i])
				}
			}
		}
	}
	edges := []Edge{{1, 2}, {3, math.MaxUint32 + 1}}
	if _, ok := NarrowInPlace(edges, 2); ok || edges[1].V != math.MaxUint32+1 || edges[0] != (Edge{1, 2}) {
		t.Fatalf("64-bit ids narrowed: ok=%v, edges %v", ok, edges)
	}
	ids := WideIDs(edges)
	if len(ids) != 4 || ids[0] != 1 || ids[1] != 2 || ids[2] != 3 || ids[3] != math.MaxUint32+1 {
		t.Fatalf("WideIDs %v", ids)
	}
}
