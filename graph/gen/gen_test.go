package gen

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/internal/testlong"
)

func TestRMATRejectsBadArguments(t *testing.T) {
	cases := []struct {
		name              string
		scale, edgeFactor int
		want              string
	}{
		{"scale-zero", 0, 16, "scale 0 out of range"},
		{"scale-negative", -3, 16, "out of range"},
		{"scale-41", 41, 16, "out of range"},
		{"edge-factor-zero", 10, 0, "edge factor 0"},
		{"edge-factor-negative", 10, -1, "edge factor -1"},
		{"overflow", 40, math.MaxInt, "overflows"},
		{"longer-than-a-slice", 40, 1 << 20, "cannot be held in memory"},
		{"larger-than-machine", 40, 16, "GiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, err := RMAT(c.scale, c.edgeFactor, 1, 1)
			if err == nil || es != nil {
				t.Fatalf("accepted (%d edges)", len(es))
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "gen: rmat: ") {
				t.Fatalf("error %q, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestERRejectsBadArguments(t *testing.T) {
	if _, err := ER(0, 10, 1, 1); err == nil || !strings.Contains(err.Error(), "0 vertices") {
		t.Fatalf("n = 0: %v", err)
	}
	if _, err := ER(10, math.MaxUint64, 1, 1); err == nil || !strings.Contains(err.Error(), "memory") {
		t.Fatalf("huge m: %v", err)
	}
}

// TestWorkerIndependence checks that chunking, not scheduling, defines the
// output: sizes span several chunks and a partial last one.
func TestWorkerIndependence(t *testing.T) {
	gens := []struct {
		name string
		run  func(workers int) ([]graph.Edge, error)
	}{
		{"rmat", func(w int) ([]graph.Edge, error) { return RMAT(13, 20, 42, w) }},
		{"er", func(w int) ([]graph.Edge, error) { return ER(1000, 3*chunkEdges+17, 42, w) }},
	}
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			ref, err := g.run(1)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{0, 2, 3, 7} {
				got, err := g.run(w)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, ref) {
					t.Fatalf("workers=%d gives other edges than workers=1", w)
				}
			}
		})
	}
}

// TestSeedSensitivity checks that seeds (and chunks) give unrelated
// streams: two seeds agree on about as many positions as chance allows.
func TestSeedSensitivity(t *testing.T) {
	for _, seeds := range [][2]uint64{{1, 2}, {0, 1 << 63}, {7, 7 ^ golden}} {
		a, err := ER(1<<20, 2*chunkEdges, seeds[0], 2)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ER(1<<20, 2*chunkEdges, seeds[1], 2)
		if err != nil {
			t.Fatal(err)
		}
		same := 0
		for i := range a {
			if a[i].U == b[i].U {
				same++
			}
		}
		if same > 10 { // expected 2^17/2^20 = 0.125
			t.Fatalf("seeds %v: %d of %d positions agree", seeds, same, len(a))
		}
		// The second chunk must not repeat the first.
		if slices.Equal(a[:100], a[chunkEdges:chunkEdges+100]) {
			t.Fatalf("seed %d: chunks repeat", seeds[0])
		}
	}
	r1, _ := RMAT(10, 4, 1, 2)
	r2, _ := RMAT(10, 4, 2, 2)
	if slices.Equal(r1, r2) {
		t.Fatal("rmat: seeds 1 and 2 give the same edges")
	}
}

func TestIDsInRange(t *testing.T) {
	for _, scale := range []int{1, 2, 3, 7, 12} {
		es, err := RMAT(scale, 8, uint64(scale), 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 8<<scale {
			t.Fatalf("scale %d: %d edges, want %d", scale, len(es), 8<<scale)
		}
		for _, e := range es {
			if e.U >= 1<<scale || e.V >= 1<<scale {
				t.Fatalf("scale %d: edge %v out of range", scale, e)
			}
		}
	}
	for _, n := range []uint64{1, 2, 3, 1000, 1<<63 + 5, math.MaxUint64} {
		es, err := ER(n, 5000, n, 2)
		if err != nil {
			t.Fatal(err)
		}
		var top uint64
		for _, e := range es {
			if e.U >= n || e.V >= n {
				t.Fatalf("n=%d: edge %v out of range", n, e)
			}
			top = max(top, e.U, e.V)
		}
		if n > 1000 && top < n/2 {
			t.Fatalf("n=%d: largest id %d, the upper half is never drawn", n, top)
		}
	}
}

// TestERUniform checks each vertex's share of endpoints against the
// expected count (5 sigma of a binomial).
func TestERUniform(t *testing.T) {
	const n, m = 50, 200_000
	es, err := ER(n, m, 9, 2)
	if err != nil {
		t.Fatal(err)
	}
	var cnt [n]float64
	for _, e := range es {
		cnt[e.U]++
		cnt[e.V]++
	}
	mean := 2.0 * m / n
	sd := math.Sqrt(2 * m * (1.0 / n) * (1 - 1.0/n))
	for v, c := range cnt {
		if math.Abs(c-mean) > 5*sd {
			t.Fatalf("vertex %d drawn %v times, expected %.0f ± %.0f", v, c, mean, sd)
		}
	}
}

func TestScramblerIsPermutation(t *testing.T) {
	for _, bits := range []int{1, 2, 5, 10, 16} {
		for _, seed := range []uint64{0, 1, 99} {
			s := newScrambler(bits, seed)
			seen := make([]bool, 1<<bits)
			moved := 0
			for x := uint64(0); x < 1<<bits; x++ {
				y := s.apply(x)
				if y >= 1<<bits || seen[y] {
					t.Fatalf("bits %d seed %d: %d -> %d collides or leaves the range", bits, seed, x, y)
				}
				seen[y] = true
				if y != x {
					moved++
				}
			}
			if bits >= 5 && moved < (1<<bits)/2 {
				t.Fatalf("bits %d seed %d: only %d of %d labels move", bits, seed, moved, 1<<bits)
			}
		}
	}
}

// TestRMATGraph500Figures compares scale 18, edge factor 16 with the
// published Graph500 figures after cleaning: about 174K vertices, 3.8M
// edges and 8.2e7 triangles.
func TestRMATGraph500Figures(t *testing.T) {
	if raceEnabled {
		// Scale 18 takes minutes under the race detector; the other
		// tests cover the generator's code.
		testlong.Skip(t)
	}
	es, err := RMAT(18, 16, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	fwd, cst, _, err := graph.ForwardFromEdges(es, graph.OrderDegree, 0)
	if err != nil {
		t.Fatal(err)
	}
	within := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*want {
			t.Errorf("%s = %.4g, want %.4g within %.0f%%", what, got, want, 100*tol)
		}
	}
	within("vertices", float64(cst.Vertices), 174e3, 0.03)
	within("edges", float64(cst.Edges), 3.8e6, 0.03)
	t.Logf("scale 18: %d vertices, %d edges, %d self-loops, %d duplicates",
		cst.Vertices, cst.Edges, cst.SelfLoops, cst.Duplicates)
	if testing.Short() {
		return
	}
	start := time.Now()
	tri := testgraphs.MarkTriangles(fwd)
	t.Logf("counted in %v", time.Since(start))
	t.Logf("scale 18: %d triangles", tri)
	within("triangles", float64(tri), 8.2e7, 0.05)
}

// BenchmarkRMAT reports generated edges per second.
func BenchmarkRMAT(b *testing.B) {
	for _, scale := range []int{18, 20} {
		b.Run(fmt.Sprintf("scale%d", scale), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := RMAT(scale, 16, uint64(i), 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(int64(16)<<scale)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}
