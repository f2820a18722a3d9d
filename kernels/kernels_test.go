package kernels

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func clique(n int) [][2]uint32 {
	var e [][2]uint32
	for a := range n {
		for b := a + 1; b < n; b++ {
			e = append(e, [2]uint32{uint32(a), uint32(b)})
		}
	}
	return e
}

func star(n int) [][2]uint32 {
	var e [][2]uint32
	for v := 1; v < n; v++ {
		e = append(e, [2]uint32{0, uint32(v)})
	}
	return e
}

func bipartite(l, r int) [][2]uint32 {
	var e [][2]uint32
	for a := range l {
		for b := range r {
			e = append(e, [2]uint32{uint32(a), uint32(l + b)})
		}
	}
	return e
}

// gnp is G(n, p) with loops and both directions of some edges thrown in,
// so that forward's cleaning is exercised too.
func gnp(rng *rand.Rand, n int, p float64) [][2]uint32 {
	var e [][2]uint32
	for a := range n {
		for b := range n {
			if rng.Float64() < p/2 {
				e = append(e, [2]uint32{uint32(a), uint32(b)})
			}
		}
	}
	return e
}

func choose3(n uint64) uint64 { return n * (n - 1) * (n - 2) / 6 }

func TestKnownGraphs(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges [][2]uint32
		want  uint64
	}{
		{"empty", 0, nil, 0},
		{"no edges", 5, nil, 0},
		{"single edge", 2, [][2]uint32{{0, 1}}, 0},
		{"triangle", 3, [][2]uint32{{0, 1}, {1, 2}, {2, 0}}, 1},
		{"K4", 4, clique(4), choose3(4)},
		{"K10", 10, clique(10), choose3(10)},
		{"K40", 40, clique(40), choose3(40)},
		{"K100", 100, clique(100), choose3(100)},
		{"star 50", 50, star(50), 0},
		{"K7,9", 16, bipartite(7, 9), 0},
		{"K30,30", 60, bipartite(30, 30), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if bf := bruteForce(tt.n, tt.edges); bf != tt.want {
				t.Fatalf("brute force = %d, want %d", bf, tt.want)
			}
			s := Whole(forward(tt.n, tt.edges))
			for _, c := range testCounters(t) {
				if got := countWith(t, c, s); got != tt.want {
					t.Errorf("%s = %d, want %d", c.Name(), got, tt.want)
				}
			}
		})
	}
}

func TestRandomGraphsAgreeWithBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	counters := testCounters(t)
	for i := range 150 {
		n := 1 + rng.IntN(60)
		p := rng.Float64()
		edges := gnp(rng, n, p)
		want := bruteForce(n, edges)
		s := Whole(forward(n, edges))
		for _, c := range counters {
			if got := countWith(t, c, s); got != want {
				t.Fatalf("graph %d (n=%d p=%.2f): %s = %d, brute force %d", i, n, p, c.Name(), got, want)
			}
		}
	}
}

// TestRandomOrientation counts forward graphs oriented by a random
// permutation instead of by degree: kernels may not depend on the order.
func TestRandomOrientation(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	counters := testCounters(t)
	for range 30 {
		n := 2 + rng.IntN(80)
		edges := gnp(rng, n, 0.3)
		want := bruteForce(n, edges)
		perm := rng.Perm(n)
		var fw [][2]uint32
		seen := map[[2]uint32]bool{}
		for _, e := range edges {
			a, b := uint32(perm[e[0]]), uint32(perm[e[1]])
			k := [2]uint32{min(a, b), max(a, b)}
			if a != b && !seen[k] {
				seen[k] = true
				fw = append(fw, k)
			}
		}
		s := Whole(csrOf(n, n, fw))
		for _, c := range counters {
			if got := countWith(t, c, s); got != want {
				t.Fatalf("n=%d: %s = %d, brute force %d", n, c.Name(), got, want)
			}
		}
	}
}

func TestRmatSmall(t *testing.T) {
	g := rmat(10, 8)
	n, edges := kronecker(10, 8, 1)
	want := bruteForce(n, edges)
	if want == 0 {
		t.Fatal("rmat graph has no triangles: the test would prove nothing")
	}
	for _, c := range testCounters(t) {
		if got := countWith(t, c, Whole(g)); got != want {
			t.Errorf("%s = %d, brute force %d", c.Name(), got, want)
		}
	}
}

func TestIntersect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	sorted := func(n, space int) []uint32 {
		m := map[uint32]bool{}
		for len(m) < n {
			m[uint32(rng.IntN(space))] = true
		}
		s := make([]uint32, 0, n)
		for x := range m {
			s = append(s, x)
		}
		slices.Sort(s)
		return s
	}
	for range 500 {
		la, lb := rng.IntN(50), rng.IntN(3000)
		space := max(la, lb) + rng.IntN(5000)
		a, b := sorted(la, space), sorted(lb, space)
		in := map[uint32]bool{}
		for _, x := range a {
			in[x] = true
		}
		var want uint64
		for _, x := range b {
			if in[x] {
				want++
			}
		}
		for name, f := range map[string]func(a, b []uint32) uint64{
			"intersectCount": intersectCount, "mergeCount": mergeCount, "searchCount": searchCount,
		} {
			if got := f(a, b); got != want {
				t.Fatalf("%s(%d, %d elements) = %d, want %d", name, la, lb, got, want)
			}
			if got := f(b, a); got != want {
				t.Fatalf("%s(%d, %d elements) = %d, want %d", name, lb, la, got, want)
			}
		}
	}
}

// TestSymmetricInput counts a symmetric (not forward) CSR. The Subtask
// definition then sees every triangle from each of its six directed edges,
// so kernels that silently assumed orientation would be caught here.
func TestSymmetricInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	counters := testCounters(t)
	for range 20 {
		n := 2 + rng.IntN(70)
		edges := gnp(rng, n, 0.4)
		want := 6 * bruteForce(n, edges)
		seen := map[[2]uint32]bool{}
		var sym [][2]uint32
		for _, e := range edges {
			for _, d := range [][2]uint32{{e[0], e[1]}, {e[1], e[0]}} {
				if d[0] != d[1] && !seen[d] {
					seen[d] = true
					sym = append(sym, d)
				}
			}
		}
		s := Whole(csrOf(n, n, sym))
		for _, c := range counters {
			if got := countWith(t, c, s); got != want {
				t.Fatalf("n=%d: %s = %d, want 6 x %d", n, c.Name(), got, want/6)
			}
		}
	}
}
