package kernels

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// forward builds the degree-ordered forward CSR of an undirected edge list
// over vertices 0..n-1 the way the pipeline does: symmetrize, drop loops
// and duplicates, rank by (degree, id), orient low rank -> high rank.
func forward(n int, edges [][2]uint32) *graph.CSR {
	keys := make([]uint64, 0, len(edges))
	for _, e := range edges {
		a, b := min(e[0], e[1]), max(e[0], e[1])
		if a != b {
			keys = append(keys, uint64(a)<<32|uint64(b))
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	deg := make([]uint32, n)
	for _, k := range keys {
		deg[k>>32]++
		deg[uint32(k)]++
	}
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(x, y uint32) int {
		return cmp.Or(cmp.Compare(deg[x], deg[y]), cmp.Compare(x, y))
	})
	rank := make([]uint32, n)
	for r, v := range order {
		rank[v] = uint32(r)
	}
	oriented := make([][2]uint32, len(keys))
	for i, k := range keys {
		a, b := rank[k>>32], rank[uint32(k)]
		oriented[i] = [2]uint32{min(a, b), max(a, b)}
	}
	return csrOf(n, n, oriented)
}

// csrOf builds a CSR with rows rows and cols columns from directed edges
// (row, col), sorting each row. Duplicates are the caller's problem.
func csrOf(rows, cols int, edges [][2]uint32) *graph.CSR {
	g := &graph.CSR{Offsets: make([]uint64, rows+1), Cols: make([]uint32, len(edges)), NCols: int64(cols)}
	for _, e := range edges {
		g.Offsets[e[0]+1]++
	}
	for r := range rows {
		g.Offsets[r+1] += g.Offsets[r]
	}
	next := slices.Clone(g.Offsets[:rows])
	for _, e := range edges {
		g.Cols[next[e[0]]] = e[1]
		next[e[0]]++
	}
	for r := range int64(rows) {
		slices.Sort(g.Row(r))
	}
	return g
}

// bruteForce counts triangles with a triple loop over an adjacency matrix:
// independent of CSRs, orientation and every kernel.
func bruteForce(n int, edges [][2]uint32) uint64 {
	adj := make([][]bool, n)
	for i := range adj {
		adj[i] = make([]bool, n)
	}
	for _, e := range edges {
		if e[0] != e[1] {
			adj[e[0]][e[1]], adj[e[1]][e[0]] = true, true
		}
	}
	var t uint64
	for a := range n {
		for b := a + 1; b < n; b++ {
			if !adj[a][b] {
				continue
			}
			for c := b + 1; c < n; c++ {
				if adj[a][c] && adj[b][c] {
					t++
				}
			}
		}
	}
	return t
}

// testCounters returns every CPU kernel in a few worker configurations.
func testCounters(t testing.TB) []Counter {
	t.Helper()
	var cs []Counter
	for _, name := range CPUKernelNames() {
		for _, w := range []int{1, 3} {
			c, err := NewCPU(name, CPUOptions{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
			if name == "reference" {
				break
			}
		}
	}
	return cs
}

// countWith runs c on s and fails the test on error.
func countWith(t testing.TB, c Counter, s Subtask) uint64 {
	t.Helper()
	res, err := c.Count(context.Background(), s)
	if err != nil {
		t.Fatalf("%s: %v", c.Name(), err)
	}
	return res.Triangles
}

// mustReference is Reference that fails the test on error.
func mustReference(t testing.TB, s Subtask) uint64 {
	t.Helper()
	n, err := Reference(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
