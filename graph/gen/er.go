package gen

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/trigrid/trigrid/graph"
)

// ER draws m edges uniformly at random between n vertices (ids 0..n-1),
// each endpoint independently: raw output, so self-loops and duplicates
// are possible. The same (n, m, seed) gives the same edges whatever
// workers is (0 means GOMAXPROCS).
func ER(n, m uint64, seed uint64, workers int) ([]graph.Edge, error) {
	s, err := ERSource(n, m, seed)
	if err != nil {
		return nil, err
	}
	return s.materialize(fmt.Sprintf("er: %d edges", m), workers)
}

// ERSource is ER as a Source: the same edges, chunk by chunk, without
// holding them.
func ERSource(n, m uint64, seed uint64) (*Source, error) {
	if n < 1 {
		return nil, fmt.Errorf("gen: er: %d vertices, want >= 1", n)
	}
	if m > math.MaxInt64 {
		return nil, fmt.Errorf("gen: er: %d edges, more than a list can count (2^63-1), let alone hold in memory", m)
	}
	fill := func(c int, dst []graph.Edge) {
		r := chunkStream(seed, purposeER, c)
		for i := range dst {
			u := bounded(&r, n)
			dst[i] = graph.Edge{U: u, V: bounded(&r, n)}
		}
	}
	return &Source{edges: m, maxID: n - 1, fill: fill}, nil
}

// bounded returns a uniform value in [0, n) by Lemire's multiply-shift with
// rejection, which is exact for every n (no modulo bias even near 2^64).
func bounded(r *splitmix64, n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}
