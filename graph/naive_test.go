package graph

import (
	"math/rand/v2"
	"slices"
	"sort"
)

// Naive, map-based reference implementations of cleaning and orientation.
// They follow the documented contracts literally and share no code with
// the real ones.

type naiveGraph struct {
	stats  CleanStats
	orig   []uint64   // compact id -> original id, ascending
	nbr    [][]uint32 // sorted neighbour lists over compact ids
	degree []int
}

func naiveClean(edges []Edge) naiveGraph {
	var g naiveGraph
	g.stats.InputEdges = uint64(len(edges))
	loopIDs := map[uint64]bool{}
	active := map[uint64]bool{}
	seen := map[[2]uint64]bool{}
	for _, e := range edges {
		if e.U == e.V {
			g.stats.SelfLoops++
			loopIDs[e.U] = true
			continue
		}
		active[e.U], active[e.V] = true, true
		k := [2]uint64{min(e.U, e.V), max(e.U, e.V)}
		if seen[k] {
			g.stats.Duplicates++
		}
		seen[k] = true
	}
	for id := range loopIDs {
		if !active[id] {
			g.stats.IsolatedIDs++
		}
	}
	for id := range active {
		g.orig = append(g.orig, id)
	}
	slices.Sort(g.orig)
	idx := map[uint64]uint32{}
	for i, id := range g.orig {
		idx[id] = uint32(i)
	}
	g.nbr = make([][]uint32, len(g.orig))
	for k := range seen {
		a, b := idx[k[0]], idx[k[1]]
		g.nbr[a] = append(g.nbr[a], b)
		g.nbr[b] = append(g.nbr[b], a)
	}
	g.degree = make([]int, len(g.orig))
	for i := range g.nbr {
		slices.Sort(g.nbr[i])
		g.degree[i] = len(g.nbr[i])
	}
	g.stats.Vertices = int64(len(g.orig))
	g.stats.Edges = int64(len(seen))
	return g
}

// naiveDegreeRank sorts ids by (degree, id).
func naiveDegreeRank(g naiveGraph) []uint32 {
	ids := make([]int, len(g.nbr))
	for i := range ids {
		ids[i] = i
	}
	sort.Slice(ids, func(a, b int) bool {
		da, db := g.degree[ids[a]], g.degree[ids[b]]
		if da != db {
			return da < db
		}
		return ids[a] < ids[b]
	})
	rank := make([]uint32, len(ids))
	for r, v := range ids {
		rank[v] = uint32(r)
	}
	return rank
}

// naivePeelRank is degeneracyRank's definition executed literally, in
// O(n^2): remove the vertex with the smallest (max(remaining degree, L),
// id), then raise L to that key.
func naivePeelRank(g naiveGraph) (rank []uint32, level int) {
	n := len(g.nbr)
	rem := slices.Clone(g.degree)
	gone := make([]bool, n)
	rank = make([]uint32, n)
	for r := 0; r < n; r++ {
		best, bestKey := -1, 0
		for v := 0; v < n; v++ {
			if gone[v] {
				continue
			}
			if k := max(rem[v], level); best < 0 || k < bestKey {
				best, bestKey = v, k
			}
		}
		gone[best] = true
		rank[best] = uint32(r)
		level = bestKey
		for _, x := range g.nbr[best] {
			rem[x]--
		}
	}
	return rank, level
}

// naiveDegeneracy is the largest k whose k-core (what is left after
// repeatedly deleting vertices of degree < k) is not empty.
func naiveDegeneracy(g naiveGraph) int {
	for k := 1; ; k++ {
		alive := make([]bool, len(g.nbr))
		for i := range alive {
			alive[i] = true
		}
		deg := slices.Clone(g.degree)
		for changed := true; changed; {
			changed = false
			for v := range alive {
				if alive[v] && deg[v] < k {
					alive[v], changed = false, true
					for _, x := range g.nbr[v] {
						deg[x]--
					}
				}
			}
		}
		if !slices.Contains(alive, true) {
			return k - 1
		}
	}
}

// naiveForward builds the forward lists over new ids from a rank.
func naiveForward(g naiveGraph, rank []uint32) [][]uint32 {
	fwd := make([][]uint32, len(g.nbr))
	for v, ns := range g.nbr {
		for _, x := range ns {
			if rank[x] > rank[v] {
				fwd[rank[v]] = append(fwd[rank[v]], rank[x])
			}
		}
	}
	for i := range fwd {
		slices.Sort(fwd[i])
	}
	return fwd
}

// Random edge lists with the defects real files have.

type edgeShape struct {
	name string
	make func(r *rand.Rand) []Edge
}

// idSpace maps small ids into a sparse or huge id space, keeping order so
// that tests can also check the ascending-id contract on sparse inputs.
func spreadIDs(edges []Edge, r *rand.Rand, huge bool) []Edge {
	ids := map[uint64]bool{}
	for _, e := range edges {
		ids[e.U], ids[e.V] = true, true
	}
	sorted := make([]uint64, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	slices.Sort(sorted)
	mapped := map[uint64]uint64{}
	next := uint64(0)
	for i, id := range sorted {
		if huge && i == len(sorted)-1 {
			next = ^uint64(0) // the largest id there is
		} else if huge {
			next += 1 + r.Uint64N(1<<58)
		} else {
			next += 1 + r.Uint64N(1000)
		}
		mapped[id] = next
	}
	out := make([]Edge, len(edges))
	for i, e := range edges {
		out[i] = Edge{mapped[e.U], mapped[e.V]}
	}
	return out
}

func randomEdges(r *rand.Rand, n, m int) []Edge {
	es := make([]Edge, m)
	for i := range es {
		es[i] = Edge{r.Uint64N(uint64(n)), r.Uint64N(uint64(n))}
	}
	return es
}

func cliqueEdges(k int) []Edge {
	var es []Edge
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			es = append(es, Edge{uint64(i), uint64(j)})
		}
	}
	return es
}

func shuffled(r *rand.Rand, es []Edge) []Edge {
	es = slices.Clone(es)
	r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	return es
}

func edgeShapes() []edgeShape {
	return []edgeShape{
		{"empty", func(*rand.Rand) []Edge { return nil }},
		{"only-loops", func(r *rand.Rand) []Edge {
			return []Edge{{3, 3}, {3, 3}, {7, 7}}
		}},
		{"single-edge", func(*rand.Rand) []Edge { return []Edge{{5, 2}} }},
		{"clique", func(r *rand.Rand) []Edge { return shuffled(r, cliqueEdges(2+r.IntN(12))) }},
		{"clique-both-directions", func(r *rand.Rand) []Edge {
			es := cliqueEdges(2 + r.IntN(10))
			for _, e := range slices.Clone(es) {
				es = append(es, Edge{e.V, e.U})
			}
			return shuffled(r, es)
		}},
		{"star", func(r *rand.Rand) []Edge {
			k := 1 + r.IntN(50)
			var es []Edge
			for i := 1; i <= k; i++ {
				es = append(es, Edge{0, uint64(i)})
			}
			return shuffled(r, es)
		}},
		{"duplicates-and-loops", func(r *rand.Rand) []Edge {
			es := randomEdges(r, 1+r.IntN(20), r.IntN(200))
			for i := 0; i < len(es)/4; i++ {
				v := r.Uint64N(30)
				es = append(es, Edge{v, v})
			}
			return shuffled(r, es)
		}},
		{"directed-sparse", func(r *rand.Rand) []Edge { return randomEdges(r, 5+r.IntN(200), r.IntN(300)) }},
		{"dense-random", func(r *rand.Rand) []Edge { return randomEdges(r, 2+r.IntN(25), r.IntN(400)) }},
		{"spread-ids", func(r *rand.Rand) []Edge {
			return spreadIDs(randomEdges(r, 2+r.IntN(60), r.IntN(200)), r, false)
		}},
		{"huge-ids", func(r *rand.Rand) []Edge {
			es := randomEdges(r, 2+r.IntN(60), r.IntN(200))
			es = append(es, Edge{1000, 1000}) // a loop-only id among huge ones
			return spreadIDs(es, r, true)
		}},
	}
}
