package partition

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
)

// rmatEdges draws scale-free edges with the Graph500 R-MAT parameters
// (0.57, 0.19, 0.19, 0.05); duplicates and self-loops are kept, as a
// generator emits them.
func rmatEdges(scale, edgeFactor int, seed uint64) []graph.Edge {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	m := edgeFactor << scale
	out := make([]graph.Edge, m)
	for e := range out {
		var u, v uint64
		for range scale {
			x := r.Float64()
			u <<= 1
			v <<= 1
			switch {
			case x < 0.57:
			case x < 0.76:
				v |= 1
			case x < 0.95:
				u |= 1
			default:
				u |= 1
				v |= 1
			}
		}
		out[e] = graph.Edge{U: u, V: v}
	}
	return out
}

// refForward is an independent, obviously correct version of clean +
// degree-order orientation: map-based dedupe, compact ids by ascending
// original id, rank by (degree, compact id).
func refForward(edges []graph.Edge) *graph.CSR {
	type pair struct{ a, b uint64 }
	seen := map[pair]bool{}
	var ids []uint64
	for _, e := range edges {
		if e.U == e.V {
			continue
		}
		a, b := min(e.U, e.V), max(e.U, e.V)
		if !seen[pair{a, b}] {
			seen[pair{a, b}] = true
			ids = append(ids, a, b)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	compact := make(map[uint64]uint32, len(ids))
	for i, id := range ids {
		compact[id] = uint32(i)
	}
	n := len(ids)
	deg := make([]int, n)
	for p := range seen {
		deg[compact[p.a]]++
		deg[compact[p.b]]++
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		if deg[x] != deg[y] {
			return deg[x] - deg[y]
		}
		return x - y
	})
	rank := make([]uint32, n)
	for r, c := range order {
		rank[c] = uint32(r)
	}
	adj := make([][]uint32, n)
	for p := range seen {
		u, v := rank[compact[p.a]], rank[compact[p.b]]
		if u > v {
			u, v = v, u
		}
		adj[u] = append(adj[u], v)
	}
	c := &graph.CSR{Offsets: make([]uint64, n+1), NCols: int64(n)}
	for u := range adj {
		slices.Sort(adj[u])
		c.Cols = append(c.Cols, adj[u]...)
		c.Offsets[u+1] = uint64(len(c.Cols))
	}
	return c
}

// intersect counts common elements of two sorted lists.
func intersect(a, b []uint32) uint64 {
	var n uint64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// countBlocks counts one subtask by merge intersection.
func countBlocks(ij, ik, jk *graph.CSR) uint64 {
	var n uint64
	for u := int64(0); u < ij.NumRows(); u++ {
		for _, v := range ij.Row(u) {
			n += intersect(ik.Row(u), jk.Row(int64(v)))
		}
	}
	return n
}

// bruteCount counts triangles of a forward graph by an O(n^3)-free but
// independent method: adjacency sets and every wedge.
func bruteCount(fwd *graph.CSR) uint64 {
	set := map[[2]uint32]bool{}
	for u := int64(0); u < fwd.NumRows(); u++ {
		for _, v := range fwd.Row(u) {
			set[[2]uint32{uint32(u), v}] = true
		}
	}
	var n uint64
	for u := int64(0); u < fwd.NumRows(); u++ {
		row := fwd.Row(u)
		for a := range row {
			for b := a + 1; b < len(row); b++ {
				if set[[2]uint32{row[a], row[b]}] {
					n++
				}
			}
		}
	}
	return n
}

// readEdgeList reads a dataset with the shared test reader.
func readEdgeList(t testing.TB, path string) []graph.Edge {
	t.Helper()
	pairs := testgraphs.ReadEdges(t, path)
	out := make([]graph.Edge, len(pairs))
	for i, p := range pairs {
		out[i] = graph.Edge{U: p[0], V: p[1]}
	}
	return out
}
