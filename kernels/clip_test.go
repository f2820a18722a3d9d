package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/internal/testlong"
)

// clipSchemes returns both schemes for g cut P ways.
func clipSchemes(g *graph.CSR, p int) []scheme {
	return []scheme{hashScheme(int(g.NumRows()), p), rangeScheme(g, p)}
}

// forEachSubtask calls f for every subtask of blocks b cut by s, clipped
// with s's offsets.
func forEachSubtask(b [][]*graph.CSR, s scheme, f func(i, j, k int, st Subtask)) {
	p := len(b)
	for i := range p {
		for j := range p {
			for k := range p {
				f(i, j, k, Subtask{IJ: b[i][j], IK: b[i][k], JK: b[j][k], Clip: true, TailOffset: s.offset(j, k)})
			}
		}
	}
}

// TestClipAnyOffset checks that every kernel computes the clipped count as
// defined (the reference's literal reading), whatever the offset, right or
// wrong, on every subtask: the kernels' clip code must not lean on the
// offset being the scheme's.
func TestClipAnyOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	graphs := []struct {
		name string
		g    *graph.CSR
	}{
		{"rmat10", rmat(10, 8)},
		{"hub", hubGraph(rng, 600, 900)},
		{"K12", forward(12, clique(12))},
	}
	offsets := []int64{math.MinInt64, -1 << 32, -3, -1, 0, 1, 2, 3, 50, 1 << 32, math.MaxInt64}
	counters := testCounters(t)
	ps := []int{1, 3}
	if testlong.Enabled() {
		ps = append(ps, 4)
	}
	for _, gr := range graphs {
		for _, p := range ps {
			for _, s := range clipSchemes(gr.g, p) {
				t.Run(fmt.Sprintf("%s/P=%d/%s", gr.name, p, s.name), func(t *testing.T) {
					forEachSubtask(split(gr.g, p, s, false), s, func(i, j, k int, st Subtask) {
						for _, off := range append(offsets, st.TailOffset+1, st.TailOffset-1) {
							st.TailOffset = off
							ref := mustReference(t, st)
							for _, c := range counters {
								if got := countWith(t, c, st); got != ref {
									t.Fatalf("subtask (%d,%d,%d) offset %d: %s = %d, reference %d", i, j, k, off, c.Name(), got, ref)
								}
							}
						}
					})
				})
			}
		}
	}
}

// TestClipOffByOneLoses checks that the tests can fail: the schemes'
// offsets plus one drop the triangles whose two upper corners have
// adjacent global ids, in every kernel.
func TestClipOffByOneLoses(t *testing.T) {
	g := rmat(10, 8)
	whole := mustReference(t, Whole(g))
	for _, p := range []int{1, 2, 4} {
		for _, s := range clipSchemes(g, p) {
			b := split(g, p, s, false)
			for _, c := range testCounters(t) {
				var right, wrong uint64
				forEachSubtask(b, s, func(i, j, k int, st Subtask) {
					right += countWith(t, c, st)
					st.TailOffset++
					wrong += countWith(t, c, st)
				})
				if right != whole || wrong >= whole {
					t.Errorf("P=%d %s %s: right offsets %d, off by one %d, whole graph %d", p, s.name, c.Name(), right, wrong, whole)
				}
			}
		}
	}
}

// TestClipDatasets counts the real datasets through clipped subtasks of
// both schemes with every kernel.
func TestClipDatasets(t *testing.T) {
	for _, d := range testgraphs.Datasets(t) {
		t.Run(d.Name, func(t *testing.T) {
			testgraphs.SkipSweep(t, d)
			g := forward(readEdgeList(t, d.Path))
			counters := testCounters(t)
			for _, p := range sweepPs() {
				for _, s := range clipSchemes(g, p) {
					sums := make([]uint64, len(counters))
					forEachSubtask(split(g, p, s, true), s, func(i, j, k int, st Subtask) {
						for ci, c := range counters {
							sums[ci] += countWith(t, c, st)
						}
					})
					for ci, c := range counters {
						if sums[ci] != d.Triangles {
							t.Errorf("P=%d %s: %s over clipped subtasks = %d, MANIFEST says %d", p, s.name, c.Name(), sums[ci], d.Triangles)
						}
					}
				}
			}
		})
	}
}
