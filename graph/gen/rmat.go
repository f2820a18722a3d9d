package gen

import (
	"fmt"
	"math"

	"github.com/trigrid/trigrid/graph"
)

// Graph500 Kronecker initiator probabilities.
const (
	rmatA = 0.57
	rmatB = 0.19
	rmatC = 0.19
)

// Stream purposes: the same seed drives independent streams for each use.
const (
	purposeRMATEdges = 1
	purposeRMATPerm  = 2
	purposeER        = 3
)

// RMAT is the Graph500 Kronecker generator: a=0.57, b=0.19, c=0.19,
// d=0.05, 2^scale vertices, edgeFactor*2^scale raw edges (duplicates and
// self-loops kept, as Graph500 does), vertex labels randomly permuted
// (deterministic from seed). The same (scale, edgeFactor, seed) gives the
// same edges whatever workers is (0 means GOMAXPROCS).
func RMAT(scale, edgeFactor int, seed uint64, workers int) ([]graph.Edge, error) {
	if scale < 1 || scale > 40 {
		return nil, fmt.Errorf("gen: rmat: scale %d out of range 1..40", scale)
	}
	if edgeFactor < 1 {
		return nil, fmt.Errorf("gen: rmat: edge factor %d, want >= 1", edgeFactor)
	}
	if uint64(edgeFactor) > math.MaxUint64>>scale {
		return nil, fmt.Errorf("gen: rmat: scale %d with edge factor %d overflows the edge count", scale, edgeFactor)
	}
	m := uint64(edgeFactor) << scale
	if err := checkEdgeCount(fmt.Sprintf("rmat: scale %d edge factor %d", scale, edgeFactor), m); err != nil {
		return nil, err
	}
	out := make([]graph.Edge, m)
	perm := newScrambler(scale, seed)
	// Thresholds on a 32-bit uniform draw: quadrant a below ta, b below
	// tab, c below tabc, d above.
	ta := uint64(math.Round(rmatA * (1 << 32)))
	tab := uint64(math.Round((rmatA + rmatB) * (1 << 32)))
	tabc := uint64(math.Round((rmatA + rmatB + rmatC) * (1 << 32)))
	fillChunks(out, workers, func(c int, dst []graph.Edge) {
		r := chunkStream(seed, purposeRMATEdges, c)
		for i := range dst {
			var u, v uint64
			for lvl := 0; lvl < scale; lvl += 2 {
				x := r.next()
				u, v = rmatLevel(u, v, x&math.MaxUint32, ta, tab, tabc)
				if lvl+1 < scale {
					u, v = rmatLevel(u, v, x>>32, ta, tab, tabc)
				}
			}
			dst[i] = graph.Edge{U: perm.apply(u), V: perm.apply(v)}
		}
	})
	return out, nil
}

// rmatLevel descends one level of the Kronecker recursion with the 32-bit
// draw x. It is branch-free: the four quadrants are too evenly likely for
// the branch predictor, and mispredictions would dominate the generator.
func rmatLevel(u, v, x, ta, tab, tabc uint64) (uint64, uint64) {
	ub := geq(x, tab)                             // quadrants c and d
	vb := geq(x, ta) - geq(x, tab) + geq(x, tabc) // quadrants b and d
	return u<<1 | ub, v<<1 | vb
}

// geq is 1 when x >= t, for x < 2^32 and 1 <= t <= 2^32.
func geq(x, t uint64) uint64 { return (t - 1 - x) >> 63 }

// scrambler is a keyed bijection on [0, 2^bits): vertex labels are
// permuted without a 2^scale table, so it costs nothing in memory and is
// evaluated independently by every worker. Each round (odd multiply,
// xorshift, add) is invertible modulo 2^bits.
type scrambler struct {
	mask  uint64
	shift uint
	mul   [3]uint64
	add   [3]uint64
}

func newScrambler(bits int, seed uint64) scrambler {
	s := scrambler{mask: 1<<bits - 1, shift: uint(bits/2 + 1)}
	r := chunkStream(seed, purposeRMATPerm, 0)
	for i := range s.mul {
		s.mul[i] = r.next() | 1
		s.add[i] = r.next()
	}
	return s
}

func (s scrambler) apply(x uint64) uint64 {
	for i := range s.mul {
		x = (x*s.mul[i] + s.add[i]) & s.mask
		x ^= x >> s.shift
	}
	return x
}
