package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// scheme maps a global vertex id to its group and its local id.
type scheme struct {
	name  string
	group func(x uint32) int
	local func(x uint32) uint32
	size  func(group int) int
	// offset is the tail offset of subtask (I, J, K) (Subtask.Clip),
	// derived here from the id maps independently of partition's.
	offset func(j, k int) int64
}

// hashScheme is TRUST's: group x mod P, local x div P.
func hashScheme(n, p int) scheme {
	return scheme{
		name:  "hash",
		group: func(x uint32) int { return int(x) % p },
		local: func(x uint32) uint32 { return x / uint32(p) },
		size:  func(i int) int { return (n - i + p - 1) / p },
		// k + P*lw > j + P*lv with |j-k| < P: lw > lv if k <= j, lw >= lv if k > j.
		offset: func(j, k int) int64 {
			if k <= j {
				return 1
			}
			return 0
		},
	}
}

// rangeScheme is TriX's: contiguous id ranges holding similar numbers of
// forward edges, so that hub-heavy ranges are short (and some may be
// empty on tiny graphs).
func rangeScheme(g *graph.CSR, p int) scheme {
	n := int(g.NumRows())
	start := make([]int, p+1)
	for i, v := 1, 0; i < p; i++ {
		for v < n && g.Offsets[v] < uint64(i)*uint64(g.NumEdges())/uint64(p) {
			v++
		}
		start[i] = v
	}
	start[p] = n
	groupOf := make([]int, n)
	for i := range p {
		for x := start[i]; x < start[i+1]; x++ {
			groupOf[x] = i
		}
	}
	return scheme{
		name:  "range",
		group: func(x uint32) int { return groupOf[x] },
		local: func(x uint32) uint32 { return x - uint32(start[groupOf[x]]) },
		size:  func(i int) int { return start[i+1] - start[i] },
		offset: func(j, k int) int64 {
			switch {
			case k > j:
				return math.MinInt64 // every id of K is above J's
			case k == j:
				return 1
			default:
				return math.MaxInt64 // none
			}
		},
	}
}

// split cuts a forward graph into the P x P blocks of s. With zeroEmpty,
// blocks without edges become zero-value CSRs (no rows at all), as a
// partitioner may store them.
func split(g *graph.CSR, p int, s scheme, zeroEmpty bool) [][]*graph.CSR {
	parts := make([][][][2]uint32, p)
	for i := range parts {
		parts[i] = make([][][2]uint32, p)
	}
	for u := range g.NumRows() {
		for _, v := range g.Row(u) {
			i, j := s.group(uint32(u)), s.group(v)
			parts[i][j] = append(parts[i][j], [2]uint32{s.local(uint32(u)), s.local(v)})
		}
	}
	b := make([][]*graph.CSR, p)
	for i := range p {
		b[i] = make([]*graph.CSR, p)
		for j := range p {
			if zeroEmpty && len(parts[i][j]) == 0 {
				b[i][j] = &graph.CSR{}
				continue
			}
			b[i][j] = csrOf(s.size(i), s.size(j), parts[i][j])
		}
	}
	return b
}

func TestSubtasksSumToWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	graphs := []struct {
		name string
		g    *graph.CSR
	}{
		{"rmat10", rmat(10, 8)},
		{"gnp", forward(200, gnp(rng, 200, 0.1))},
		{"K12", forward(12, clique(12))},
		{"triangle", forward(3, clique(3))},
		{"single edge", forward(2, [][2]uint32{{0, 1}})},
		{"hub", hubGraph(rng, 600, 900)},
	}
	counters := testCounters(t)
	for _, gr := range graphs {
		whole := mustReference(t, Whole(gr.g))
		for _, p := range sweepPs() {
			for _, s := range []scheme{hashScheme(int(gr.g.NumRows()), p), rangeScheme(gr.g, p)} {
				for _, zero := range []bool{false, true} {
					name := fmt.Sprintf("%s/P=%d/%s/zeroEmpty=%v", gr.name, p, s.name, zero)
					t.Run(name, func(t *testing.T) {
						b := split(gr.g, p, s, zero)
						sums := make([]uint64, len(counters))
						var refSum uint64
						for i := range p {
							for j := range p {
								for k := range p {
									st := Subtask{IJ: b[i][j], IK: b[i][k], JK: b[j][k]}
									ref := mustReference(t, st)
									refSum += ref
									clipped := st
									clipped.Clip, clipped.TailOffset = true, s.offset(j, k)
									if r := mustReference(t, clipped); r != ref {
										t.Fatalf("subtask (%d,%d,%d): reference with clip %d = %d, without %d", i, j, k, clipped.TailOffset, r, ref)
									}
									for ci, c := range counters {
										for _, st := range []Subtask{st, clipped} {
											got := countWith(t, c, st)
											if got != ref {
												t.Fatalf("subtask (%d,%d,%d) clip=%v: %s = %d, reference %d", i, j, k, st.Clip, c.Name(), got, ref)
											}
										}
										sums[ci] += ref
									}
								}
							}
						}
						if refSum != whole {
							t.Fatalf("reference over subtasks = %d, whole graph %d", refSum, whole)
						}
						for ci, c := range counters {
							if sums[ci] != whole {
								t.Errorf("%s over subtasks = %d, whole graph %d", c.Name(), sums[ci], whole)
							}
						}
					})
				}
			}
		}
	}
}
