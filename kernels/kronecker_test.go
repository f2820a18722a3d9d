package kernels

import (
	"math/rand/v2"
	"sync"

	"github.com/trigrid/trigrid/graph"
)

// kronecker generates a Graph500 Kronecker (rmat) edge list with
// 2^scale vertices and edgeFactor*2^scale edges, deterministic in seed:
// each edge descends scale levels choosing a quadrant with probabilities
// a=0.57, b=0.19, c=0.19, d=0.05, and vertex ids are then permuted so that
// id carries no degree information. The result still has loops and
// duplicates; forward cleans them.
func kronecker(scale, edgeFactor int, seed uint64) (int, [][2]uint32) {
	const a, b, c = 0.57, 0.19, 0.19
	n := 1 << scale
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	edges := make([][2]uint32, edgeFactor*n)
	for i := range edges {
		var u, v uint32
		for bit := range scale {
			r := rng.Float64()
			switch {
			case r < a:
			case r < a+b:
				v |= 1 << bit
			case r < a+b+c:
				u |= 1 << bit
			default:
				u |= 1 << bit
				v |= 1 << bit
			}
		}
		edges[i] = [2]uint32{u, v}
	}
	perm := rng.Perm(n)
	for i := range edges {
		edges[i] = [2]uint32{uint32(perm[edges[i][0]]), uint32(perm[edges[i][1]])}
	}
	return n, edges
}

var (
	rmatMu    sync.Mutex
	rmatCache = map[[2]int]*graph.CSR{}
)

// rmat returns the cached degree-ordered forward graph of kronecker(scale,
// edgeFactor, 1). Benchmarks at scale 20 take seconds to build one.
func rmat(scale, edgeFactor int) *graph.CSR {
	rmatMu.Lock()
	defer rmatMu.Unlock()
	key := [2]int{scale, edgeFactor}
	if g, ok := rmatCache[key]; ok {
		return g
	}
	g := forward(kronecker(scale, edgeFactor, 1))
	rmatCache[key] = g
	return g
}
