package kernels

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// bruteLocal returns the per-vertex triangle counts and the support of
// every edge {x, y} (keyed x<<32|y, x < y) of the undirected graph behind a
// forward CSR, from an adjacency matrix and a triple loop: independent of
// every kernel.
func bruteLocal(g *graph.CSR) ([]uint64, map[uint64]uint64) {
	n := int(g.NumRows())
	adj := make([][]bool, n)
	for i := range adj {
		adj[i] = make([]bool, n)
	}
	for u := range g.NumRows() {
		for _, v := range g.Row(u) {
			adj[u][v], adj[v][u] = true, true
		}
	}
	tv := make([]uint64, n)
	sup := map[uint64]uint64{}
	key := func(x, y int) uint64 { return uint64(min(x, y))<<32 | uint64(max(x, y)) }
	for a := range n {
		for b := a + 1; b < n; b++ {
			if !adj[a][b] {
				continue
			}
			sup[key(a, b)] += 0
			for c := b + 1; c < n; c++ {
				if adj[a][c] && adj[b][c] {
					tv[a]++
					tv[b]++
					tv[c]++
					sup[key(a, b)]++
					sup[key(a, c)]++
					sup[key(b, c)]++
				}
			}
		}
	}
	return tv, sup
}

func localGraphs() []struct {
	name string
	g    *graph.CSR
} {
	rng := rand.New(rand.NewPCG(13, 13))
	return []struct {
		name string
		g    *graph.CSR
	}{
		{"rmat9", rmat(9, 8)},
		{"gnp", forward(150, gnp(rng, 150, 0.12))},
		{"K10", forward(10, clique(10))},
		{"triangle", forward(3, clique(3))},
		{"single edge", forward(2, [][2]uint32{{0, 1}})},
		{"hub", hubGraph(rng, 300, 700)},
	}
}

func localCounters(t *testing.T) []LocalCounter {
	var cs []LocalCounter
	for _, name := range []string{"local", "auto"} {
		// 5 workers take the atomic path for per-edge support.
		for _, w := range []int{1, 3, 5} {
			c, err := NewCPU(name, CPUOptions{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c.(LocalCounter))
		}
	}
	return cs
}

func TestCountLocalWhole(t *testing.T) {
	for _, gr := range localGraphs() {
		wantV, wantE := bruteLocal(gr.g)
		total := mustReference(t, Whole(gr.g))
		for _, c := range localCounters(t) {
			for _, perEdge := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/edges=%v", gr.name, c.Name(), perEdge), func(t *testing.T) {
					n := gr.g.NumRows()
					vs := make([]uint64, n)
					acc := &Local{VI: vs, VJ: vs, VK: vs}
					var es []uint64
					if perEdge {
						es = make([]uint64, gr.g.NumEdges())
						acc.EIJ, acc.EIK, acc.EJK = es, es, es
					}
					res, err := c.CountLocal(context.Background(), Whole(gr.g), acc)
					if err != nil {
						t.Fatal(err)
					}
					if res.Triangles != total {
						t.Fatalf("total %d, reference %d", res.Triangles, total)
					}
					checkVertices(t, vs, wantV, total)
					if perEdge {
						checkEdges(t, gr.g, func(u int64, p uint64, v uint32) (uint64, uint64, uint64) {
							return uint64(u), uint64(v), es[p]
						}, wantE, total)
					}
				})
			}
		}
	}
}

func checkVertices(t *testing.T, got, want []uint64, total uint64) {
	t.Helper()
	var sum uint64
	for x := range want {
		if got[x] != want[x] {
			t.Fatalf("vertex %d: %d triangles, brute force %d", x, got[x], want[x])
		}
		sum += got[x]
	}
	if sum != 3*total {
		t.Fatalf("per-vertex counts sum to %d, 3 x total is %d", sum, 3*total)
	}
}

// checkEdges walks every forward edge (u, v) at position p of g and
// compares the support at returns (global x, y, support) with want.
func checkEdges(t *testing.T, g *graph.CSR, at func(u int64, p uint64, v uint32) (uint64, uint64, uint64), want map[uint64]uint64, total uint64) {
	t.Helper()
	var sum uint64
	seen := 0
	for u := range g.NumRows() {
		for p := g.Offsets[u]; p < g.Offsets[u+1]; p++ {
			x, y, s := at(u, p, g.Cols[p])
			w, ok := want[min(x, y)<<32|max(x, y)]
			if !ok {
				t.Fatalf("edge (%d,%d) is not in the graph", x, y)
			}
			if s != w {
				t.Fatalf("edge (%d,%d): support %d, brute force %d", x, y, s, w)
			}
			sum += s
			seen++
		}
	}
	if seen != len(want) {
		t.Fatalf("%d edges checked, the graph has %d", seen, len(want))
	}
	if sum != 3*total {
		t.Fatalf("per-edge support sums to %d, 3 x total is %d", sum, 3*total)
	}
}

// TestCountLocalSubtasks counts every subtask of P x P blocks into
// separate local slices, maps them to global ids and compares the sums
// with brute force, with and without the clip.
func TestCountLocalSubtasks(t *testing.T) {
	for _, gr := range localGraphs() {
		wantV, wantE := bruteLocal(gr.g)
		total := mustReference(t, Whole(gr.g))
		n := int(gr.g.NumRows())
		for _, p := range []int{2, 3, 4} {
			for _, s := range []scheme{hashScheme(n, p), rangeScheme(gr.g, p)} {
				for _, clip := range []bool{false, true} {
					workers := 2
					if clip {
						workers = 6 // the atomic path
					}
					c, err := NewCPU("local", CPUOptions{Workers: workers})
					if err != nil {
						t.Fatal(err)
					}
					lc := c.(LocalCounter)
					t.Run(fmt.Sprintf("%s/P=%d/%s/clip=%v", gr.name, p, s.name, clip), func(t *testing.T) {
						b := split(gr.g, p, s, true)
						global := make([][]uint64, p)
						for x := range n {
							g, l := s.group(uint32(x)), int(s.local(uint32(x)))
							for len(global[g]) <= l {
								global[g] = append(global[g], 0)
							}
							global[g][l] = uint64(x)
						}
						sup := make([][][]uint64, p)
						for i := range p {
							sup[i] = make([][]uint64, p)
							for j := range p {
								sup[i][j] = make([]uint64, b[i][j].NumEdges())
							}
						}
						tv := make([]uint64, n)
						var sum uint64
						for i := range p {
							for j := range p {
								for k := range p {
									st := Subtask{IJ: b[i][j], IK: b[i][k], JK: b[j][k], Clip: clip, TailOffset: s.offset(j, k)}
									acc := &Local{
										VI: make([]uint64, max(st.IJ.NumRows(), int64(s.size(i)))),
										VJ: make([]uint64, max(st.JK.NumRows(), int64(s.size(j)))),
										VK: make([]uint64, max(kColumns(st), int64(s.size(k)))),
										// Separate slices even where blocks coincide,
										// as a remote worker returns them.
										EIJ: make([]uint64, st.IJ.NumEdges()),
										EIK: make([]uint64, st.IK.NumEdges()),
										EJK: make([]uint64, st.JK.NumEdges()),
									}
									res, err := lc.CountLocal(context.Background(), st, acc)
									if err != nil {
										t.Fatalf("subtask (%d,%d,%d): %v", i, j, k, err)
									}
									sum += res.Triangles
									for g, vs := range [3][]uint64{acc.VI, acc.VJ, acc.VK} {
										grp := [3]int{i, j, k}[g]
										for l, x := range vs[:s.size(grp)] {
											tv[global[grp][l]] += x
										}
									}
									for e, blk := range [3][2]int{{i, j}, {i, k}, {j, k}} {
										es := [3][]uint64{acc.EIJ, acc.EIK, acc.EJK}[e]
										for q, x := range es {
											sup[blk[0]][blk[1]][q] += x
										}
									}
								}
							}
						}
						if sum != total {
							t.Fatalf("subtasks sum to %d triangles, whole %d", sum, total)
						}
						checkVertices(t, tv, wantV, total)
						var esum uint64
						seen := 0
						for i := range p {
							for j := range p {
								blk := b[i][j]
								for u := range blk.NumRows() {
									for q := blk.Offsets[u]; q < blk.Offsets[u+1]; q++ {
										x, y := global[i][u], global[j][blk.Cols[q]]
										if w := wantE[min(x, y)<<32|max(x, y)]; sup[i][j][q] != w {
											t.Fatalf("edge (%d,%d): support %d, brute force %d", x, y, sup[i][j][q], w)
										}
										esum += sup[i][j][q]
										seen++
									}
								}
							}
						}
						if seen != len(wantE) || esum != 3*total {
							t.Fatalf("%d edges with support %d; want %d edges, support 3 x %d", seen, esum, len(wantE), total)
						}
					})
				}
			}
		}
	}
}

func TestCountLocalErrors(t *testing.T) {
	g := forward(10, clique(10))
	c := &localCounter{}
	if _, err := c.CountLocal(context.Background(), Whole(g), &Local{VI: make([]uint64, 3)}); err == nil {
		t.Fatal("short VI: no error")
	}
	vs := make([]uint64, 10)
	if _, err := c.CountLocal(context.Background(), Whole(g), &Local{VI: vs, VJ: vs, VK: vs, EIJ: make([]uint64, 2)}); err == nil {
		t.Fatal("short EIJ: no error")
	}
	if _, err := c.CountLocal(context.Background(), Whole(g), nil); err == nil {
		t.Fatal("nil Local: no error")
	}
}

type modeCounter struct {
	LocalCounter
	mode bool
}

func (m modeCounter) HasLocalMode() bool { return m.mode }

func TestHasLocalMode(t *testing.T) {
	local, err := NewCPU("local", CPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := NewCPU("hash", CPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lc := local.(LocalCounter)
	for _, c := range []struct {
		c    Counter
		want bool
	}{{local, true}, {hash, false}, {modeCounter{lc, true}, true}, {modeCounter{lc, false}, false}} {
		if got := HasLocalMode(c.c); got != c.want {
			t.Errorf("HasLocalMode(%T %v) = %v, want %v", c.c, c.c.Name(), got, c.want)
		}
	}
}
