package gpu

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// bruteLocal counts the triangles of forward graph g per vertex and per
// forward edge (by its position in g.Cols) from an adjacency matrix, with
// no intersection code shared with any kernel.
func bruteLocal(g *graph.CSR) (tri uint64, vert, edge []uint64) {
	n := int(g.NumRows())
	adj := make([][]bool, n)
	for i := range adj {
		adj[i] = make([]bool, n)
	}
	pos := map[[2]int]int{}
	for u := 0; u < n; u++ {
		for i, v := range g.Row(int64(u)) {
			adj[u][v], adj[v][u] = true, true
			p := int(g.Offsets[u]) + i
			pos[[2]int{u, int(v)}], pos[[2]int{int(v), u}] = p, p
		}
	}
	vert, edge = make([]uint64, n), make([]uint64, len(g.Cols))
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if !adj[a][b] {
				continue
			}
			for c := b + 1; c < n; c++ {
				if adj[a][c] && adj[b][c] {
					tri++
					vert[a]++
					vert[b]++
					vert[c]++
					edge[pos[[2]int{a, b}]]++
					edge[pos[[2]int{a, c}]]++
					edge[pos[[2]int{b, c}]]++
				}
			}
		}
	}
	return tri, vert, edge
}

// localSubtask is one subtask of a P x P partition with the global ids of
// its three index spaces (ids[x] of local id x) and the global positions of
// its blocks' edges.
type localSubtask struct {
	kernels.Subtask
	ii, jj, kk    []int64
	pij, pik, pjk []int
}

// addTo adds the subtask's counts in acc, in its blocks' local index
// spaces, to the whole graph's vertex and edge counts.
func (s localSubtask) addTo(acc kernels.Local, vert, edge []uint64) {
	for x, c := range acc.VI {
		vert[s.ii[x]] += c
	}
	for x, c := range acc.VJ {
		vert[s.jj[x]] += c
	}
	for x, c := range acc.VK[:len(s.kk)] {
		vert[s.kk[x]] += c
	}
	for x, c := range acc.EIJ {
		edge[s.pij[x]] += c
	}
	for x, c := range acc.EIK {
		edge[s.pik[x]] += c
	}
	for x, c := range acc.EJK {
		edge[s.pjk[x]] += c
	}
}

// localPartitioned is partitioned() with the maps back to g's ids and
// edge positions. P = 1 is the whole graph (one block as all three).
func localPartitioned(g *graph.CSR, p int, scheme string) []localSubtask {
	n := g.NumRows()
	if p == 1 {
		ids := make([]int64, n)
		pos := make([]int, len(g.Cols))
		for i := range ids {
			ids[i] = int64(i)
		}
		for i := range pos {
			pos[i] = i
		}
		return []localSubtask{{Subtask: kernels.Whole(g), ii: ids, jj: ids, kk: ids, pij: pos, pik: pos, pjk: pos}}
	}
	group := make([][]int64, p)
	for x := int64(0); x < n; x++ {
		gi := int(x % int64(p))
		if scheme == "range" {
			gi = int(x * int64(p) / n)
			for gi+1 < p && x >= n*int64(gi+1)/int64(p) {
				gi++
			}
			for gi > 0 && x < n*int64(gi)/int64(p) {
				gi--
			}
		}
		group[gi] = append(group[gi], x)
	}
	posOf := map[[2]int64]int{}
	for u := int64(0); u < n; u++ {
		for i, v := range g.Row(u) {
			posOf[[2]int64{u, int64(v)}] = int(g.Offsets[u]) + i
		}
	}
	ts := partitioned(g, p, scheme)
	out := make([]localSubtask, 0, len(ts))
	at := 0
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			for k := 0; k < p; k++ {
				s := ts[at]
				at++
				edges := func(b *graph.CSR, rows, cols []int64) []int {
					pos := make([]int, 0, len(b.Cols))
					for r := int64(0); r < b.NumRows(); r++ {
						for _, c := range b.Row(r) {
							pos = append(pos, posOf[[2]int64{rows[r], cols[c]}])
						}
					}
					return pos
				}
				out = append(out, localSubtask{Subtask: s, ii: group[i], jj: group[j], kk: group[k],
					pij: edges(s.IJ, group[i], group[j]), pik: edges(s.IK, group[i], group[k]), pjk: edges(s.JK, group[j], group[k])})
			}
		}
	}
	return out
}

// countLocalAll counts every subtask per vertex (and per edge) with lc,
// each into fresh arrays as a worker does (the whole graph into one vertex
// and one edge array, as counts.CountWhole does), and sums them in g's ids.
func countLocalAll(t *testing.T, lc kernels.LocalCounter, g *graph.CSR, ts []localSubtask, perEdge bool) (tri uint64, vert, edge []uint64) {
	t.Helper()
	vert, edge = make([]uint64, g.NumRows()), make([]uint64, len(g.Cols))
	for _, s := range ts {
		var acc kernels.Local
		whole := s.IJ == s.IK && s.IK == s.JK
		if whole {
			v := make([]uint64, s.IJ.NumRows())
			acc = kernels.Local{VI: v, VJ: v, VK: v}
			if perEdge {
				e := make([]uint64, s.IJ.NumEdges())
				acc.EIJ, acc.EIK, acc.EJK = e, e, e
			}
		} else {
			acc = kernels.Local{VI: make([]uint64, s.IJ.NumRows()), VJ: make([]uint64, s.JK.NumRows()), VK: make([]uint64, max(s.IK.NCols, s.JK.NCols))}
			if perEdge {
				acc.EIJ, acc.EIK, acc.EJK = make([]uint64, s.IJ.NumEdges()), make([]uint64, s.IK.NumEdges()), make([]uint64, s.JK.NumEdges())
			}
		}
		res, err := lc.CountLocal(context.Background(), s.Subtask, &acc)
		if err != nil {
			t.Fatalf("%s: %v", lc.Name(), err)
		}
		tri += res.Triangles
		if whole {
			for x, c := range acc.VI {
				vert[s.ii[x]] += c
			}
			for x, c := range acc.EIJ {
				edge[s.pij[x]] += c
			}
			continue
		}
		s.addTo(acc, vert, edge)
	}
	return tri, vert, edge
}

// checkLocalCounts compares lc's per-vertex and per-edge counts of g at
// each P of ps (1: whole; else both schemes) with want, wantV and wantE.
func checkLocalCounts(t *testing.T, lc kernels.LocalCounter, name string, g *graph.CSR, want uint64, wantV, wantE []uint64, ps []int) {
	t.Helper()
	for _, p := range ps {
		for _, scheme := range []string{"hash", "range"} {
			if p == 1 && scheme == "range" {
				continue
			}
			ts := localPartitioned(g, p, scheme)
			for _, perEdge := range []bool{false, true} {
				what := fmt.Sprintf("%s/%s P=%d %s per-edge=%v", name, lc.Name(), p, scheme, perEdge)
				tri, vert, edge := countLocalAll(t, lc, g, ts, perEdge)
				if tri != want {
					t.Errorf("%s: %d triangles, want %d", what, tri, want)
				}
				var sv, se uint64
				for x := range vert {
					sv += vert[x]
					if vert[x] != wantV[x] {
						t.Errorf("%s: vertex %d: %d triangles, want %d", what, x, vert[x], wantV[x])
						break
					}
				}
				if sv != 3*want {
					t.Errorf("%s: per-vertex sum %d, want 3 x %d", what, sv, want)
				}
				if !perEdge {
					continue
				}
				for x := range edge {
					se += edge[x]
					if edge[x] != wantE[x] {
						t.Errorf("%s: edge %d: support %d, want %d", what, x, edge[x], wantE[x])
						break
					}
				}
				if se != 3*want {
					t.Errorf("%s: per-edge sum %d, want 3 x %d", what, se, want)
				}
			}
		}
	}
}

// Per-vertex and per-edge counts through the loader and the reference
// library equal the brute force, whole and at P = 2, 3, 4 with both
// schemes, for every kernel with a per-vertex mode.
func TestCountLocalReference(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	graphs := map[string]*graph.CSR{
		"random": forward(t, randomEdges(120, 1500, 2)),
		"hub":    forward(t, hubEdges(150)),
		"single": forward(t, []graph.Edge{{U: 0, V: 1}}),
	}
	for _, k := range LocalKernels() {
		c, err := lib.NewCounter(k)
		if err != nil {
			t.Fatal(err)
		}
		for name, g := range graphs {
			want, wantV, wantE := bruteLocal(g)
			checkLocalCounts(t, c, name, g, want, wantV, wantE, []int{1, 2, 3, 4})
		}
		c.Close()
	}
}

// A kernel without a per-vertex mode says so and names those with one.
func TestCountLocalNoMode(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	g := forward(t, randomEdges(50, 300, 3))
	for _, k := range Kernels() {
		c, err := lib.NewCounter(k)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]uint64, g.NumRows())
		_, err = c.CountLocal(context.Background(), kernels.Whole(g), &kernels.Local{VI: v, VJ: v, VK: v})
		c.Close()
		if HasLocal(k) != (err == nil) {
			t.Errorf("%s: CountLocal = %v, HasLocal %v", k, err, HasLocal(k))
		}
		if err != nil && (!errors.Is(err, ErrNoLocalMode) || !containsAll(err.Error(), "auto", "polak", "wetric")) {
			t.Errorf("%s: %v, want ErrNoLocalMode naming auto, polak and wetric", k, err)
		}
	}
	// Short arrays are refused before the library is called.
	c, err := lib.NewCounter("polak")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v := make([]uint64, g.NumRows()-1)
	if _, err := c.CountLocal(context.Background(), kernels.Whole(g), &kernels.Local{VI: v, VJ: v, VK: v}); err == nil {
		t.Error("CountLocal with short vertex arrays succeeded")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// Under memory caps the per-vertex mode counts the rows that fit and adds
// their counts at the right offsets: every cap it counts under gives the
// brute force's counts, and lowering the cap reaches row ranges before it
// runs out of memory.
func TestCountLocalUnderMemoryCaps(t *testing.T) {
	good, _ := refLibs(t)
	g := forward(t, append(hubEdges(200), randomEdges(200, 1500, 12)...))
	want, wantV, wantE := bruteLocal(g)
	ts := localPartitioned(g, 2, "hash")
	split := false
	for limit := int64(1 << 17); limit > 4096; limit -= limit / 8 {
		lib, err := Open(Options{Path: good, MemLimit: uint64(limit)})
		if err != nil {
			t.Fatal(err)
		}
		c, err := lib.NewCounter("auto")
		if err != nil {
			t.Fatal(err)
		}
		var tri uint64
		vert, edge := make([]uint64, g.NumRows()), make([]uint64, len(g.Cols))
		var failed error
		for _, s := range ts {
			acc := kernels.Local{VI: make([]uint64, s.IJ.NumRows()), VJ: make([]uint64, s.JK.NumRows()), VK: make([]uint64, max(s.IK.NCols, s.JK.NCols)),
				EIJ: make([]uint64, s.IJ.NumEdges()), EIK: make([]uint64, s.IK.NumEdges()), EJK: make([]uint64, s.JK.NumEdges())}
			res, err := c.CountLocal(context.Background(), s.Subtask, &acc)
			if err != nil {
				failed = err
				break
			}
			tri += res.Triangles
			s.addTo(acc, vert, edge)
		}
		splits := c.DeviceStats().Splits
		c.Close()
		if failed != nil {
			if !errors.Is(failed, ErrOutOfMemory) {
				t.Fatalf("limit %d: %v, want out of memory", limit, failed)
			}
			break
		}
		split = split || splits > 0
		if tri != want {
			t.Errorf("limit %d: %d triangles, want %d", limit, tri, want)
		}
		for x := range vert {
			if vert[x] != wantV[x] {
				t.Fatalf("limit %d: vertex %d: %d, want %d", limit, x, vert[x], wantV[x])
			}
		}
		for x := range edge {
			if edge[x] != wantE[x] {
				t.Fatalf("limit %d: edge %d: %d, want %d", limit, x, edge[x], wantE[x])
			}
		}
	}
	if !split {
		t.Error("no cap made the per-vertex count split its rows")
	}
}
