package storage

import (
	"math/rand/v2"
	"slices"

	"github.com/trigrid/trigrid/graph"
)

// rmatForward builds the forward graph of a Graph500 Kronecker graph
// (a=.57 b=.19 c=.19 d=.05, 2^scale vertices, edgeFactor*2^scale generated
// edges): labels permuted, symmetrized, self-loops and duplicates dropped,
// isolated vertices dropped, ranked by (degree, id) and oriented from low
// to high rank. It lives here, not in graph/gen, so the codec is measured
// on a fixed, known generator.
func rmatForward(scale, edgeFactor int, seed uint64) *graph.CSR {
	n := 1 << scale
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	perm := rng.Perm(n)
	m := edgeFactor * n
	keys := make([]uint64, 0, m)
	for e := 0; e < m; e++ {
		var u, v int
		for bit := 0; bit < scale; bit++ {
			x := rng.Float64()
			switch {
			case x < 0.57:
			case x < 0.76:
				v |= 1 << bit
			case x < 0.95:
				u |= 1 << bit
			default:
				u |= 1 << bit
				v |= 1 << bit
			}
		}
		a, b := uint64(perm[u]), uint64(perm[v])
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		keys = append(keys, a<<32|b)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)

	deg := make([]uint64, n)
	for _, k := range keys {
		deg[k>>32]++
		deg[k&0xffffffff]++
	}
	order := make([]uint32, 0, n)
	for v := range n {
		if deg[v] > 0 {
			order = append(order, uint32(v))
		}
	}
	slices.SortFunc(order, func(x, y uint32) int {
		if deg[x] != deg[y] {
			if deg[x] < deg[y] {
				return -1
			}
			return 1
		}
		return int(x) - int(y)
	})
	rank := make([]uint32, n)
	for r, v := range order {
		rank[v] = uint32(r)
	}
	return forwardCSR(len(order), keys, rank)
}

// forwardCSR builds the CSR of edges a<<32|b relabelled by rank and
// oriented low -> high.
func forwardCSR(nv int, keys []uint64, rank []uint32) *graph.CSR {
	offs := make([]uint64, nv+1)
	for _, k := range keys {
		u, v := rank[k>>32], rank[k&0xffffffff]
		offs[min(u, v)+1]++
	}
	for r := 1; r <= nv; r++ {
		offs[r] += offs[r-1]
	}
	cols := make([]uint32, len(keys))
	next := slices.Clone(offs[:nv])
	for _, k := range keys {
		u, v := rank[k>>32], rank[k&0xffffffff]
		lo, hi := min(u, v), max(u, v)
		cols[next[lo]] = hi
		next[lo]++
	}
	g := &graph.CSR{Offsets: offs, Cols: cols, NCols: int64(nv)}
	for r := range int64(nv) {
		slices.Sort(g.Row(r))
	}
	return g
}

// hashBlocks cuts g into P x P blocks with the hash scheme: group x mod P,
// local id x div P.
func hashBlocks(g *graph.CSR, p int) [][]*graph.CSR {
	n := g.NumRows()
	size := func(grp int) int64 { return (n - int64(grp) + int64(p) - 1) / int64(p) }
	blocks := make([][]*graph.CSR, p)
	for i := range p {
		blocks[i] = make([]*graph.CSR, p)
		for j := range p {
			blocks[i][j] = &graph.CSR{Offsets: make([]uint64, size(i)+1), NCols: size(j)}
		}
	}
	for u := range n {
		i := int(u) % p
		for _, v := range g.Row(u) {
			b := blocks[i][int(v)%p]
			b.Cols = append(b.Cols, v/uint32(p))
			b.Offsets[u/int64(p)+1]++
		}
	}
	for i := range p {
		for j := range p {
			o := blocks[i][j].Offsets
			for r := 1; r < len(o); r++ {
				o[r] += o[r-1]
			}
		}
	}
	return blocks
}

// rawCSRBytes is the size of a block as plain arrays: u64 offsets and u32
// columns, the baseline the compression ratio is measured against.
func rawCSRBytes(b *graph.CSR) int64 { return 8*(b.NumRows()+1) + 4*b.NumEdges() }

// countForward counts the triangles of a forward graph by merging sorted
// rows: the whole-graph baseline that decoding cost is compared with.
func countForward(g *graph.CSR) uint64 {
	var t uint64
	for u := range g.NumRows() {
		nu := g.Row(u)
		for _, v := range nu {
			nv := g.Row(int64(v))
			i, j := 0, 0
			for i < len(nu) && j < len(nv) {
				switch {
				case nu[i] < nv[j]:
					i++
				case nu[i] > nv[j]:
					j++
				default:
					t++
					i++
					j++
				}
			}
		}
	}
	return t
}
