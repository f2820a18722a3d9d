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
	s, err := RMATSource(scale, edgeFactor, seed)
	if err != nil {
		return nil, err
	}
	return s.materialize(fmt.Sprintf("rmat: scale %d edge factor %d", scale, edgeFactor), workers)
}

// RMATSource is RMAT as a Source: the same edges, chunk by chunk, without
// holding them.
func RMATSource(scale, edgeFactor int, seed uint64) (*Source, error) {
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
	perm := newScrambler(scale, seed)
	k := newRMATKernel(scale)
	fill := func(c int, dst []graph.Edge) {
		r := chunkStream(seed, purposeRMATEdges, c)
		k.fill(&r, &perm, dst)
	}
	return &Source{edges: m, maxID: 1<<scale - 1, fill: fill}, nil
}

// rmatKernel draws edges: scale levels of the Kronecker recursion, two
// per 64-bit draw (the low 32 bits first), in two groups of levels that
// each fit a 64-bit word of interleaved bits: first (at most 32, and even
// when a second group follows, so that no draw is split between groups)
// and second.
type rmatKernel struct {
	first, second int
}

func newRMATKernel(scale int) rmatKernel {
	first := min(scale, 32)
	return rmatKernel{first: first, second: scale - first}
}

// fill draws len(dst) edges from r, labels permuted by perm.
func (k rmatKernel) fill(r *splitmix64, perm *scrambler, dst []graph.Edge) {
	if k.second == 0 {
		r.s = k.fillOne(r.s, perm, dst)
		return
	}
	for i := range dst {
		u, v := rmatLevels(r, k.first)
		u2, v2 := rmatLevels(r, k.second)
		dst[i] = graph.Edge{U: perm.apply(u<<k.second | u2), V: perm.apply(v<<k.second | v2)}
	}
}

// fillOne is fill for scales up to 32 (one group of levels) from stream
// state st, which it returns advanced. Each level's quadrant q (0 a, 1 b,
// 2 c, 3 d: the number of thresholds at or below the draw) is looked up by
// the draw's top bits (quadTable), branch-free, as the four quadrants are
// too evenly likely for the branch predictor; q's two bits (the level's
// bits of u and of v) are gathered interleaved in one word and separated
// at the end. The few edges with a draw in a slice that holds a threshold
// are noted and drawn again exactly (rmatLevels) after their batch of
// fixBatch, so that the loops call nothing and keep their values in
// registers.
func (k rmatKernel) fillOne(st uint64, perm *scrambler, dst []graph.Edge) uint64 {
	draws := uint64(k.first+1) >> 1
	var zs [fixBatch]uint64
	var redo [fixBatch]int32
	for b0 := 0; b0 < len(dst); b0 += fixBatch {
		part := dst[b0:min(b0+fixBatch, len(dst))]
		st0 := st
		var n int
		if k.first&1 == 0 {
			st, n = rmatWords(st, k.first>>1, zs[:len(part)], &redo)
		} else {
			st, n = rmatWordsOdd(st, k.first>>1, zs[:len(part)], &redo)
		}
		rmatPlace(perm, zs[:len(part)], part)
		for _, i := range redo[:n] {
			r := splitmix64{s: st0 + uint64(i)*draws*golden}
			u, v := rmatLevels(&r, k.first)
			part[i] = graph.Edge{U: perm.apply(u), V: perm.apply(v)}
		}
	}
	return st
}

// rmatPlace separates the interleaved words zs into the edges of part,
// labels permuted by perm.
func rmatPlace(perm *scrambler, zs []uint64, part []graph.Edge) {
	part = part[:len(zs)]
	for i, z := range zs {
		part[i] = graph.Edge{U: perm.apply(compactBits(z >> 1)), V: perm.apply(compactBits(z))}
	}
}

// rmatWords draws the interleaved words of len(zs) edges of 2 pairs
// levels each into zs, notes in redo the edges to draw again and returns
// the stream state and their number. It calls nothing and holds few
// values, so that they stay in registers.
func rmatWords(st uint64, pairs int, zs []uint64, redo *[fixBatch]int32) (uint64, int) {
	nredo := 0
	for i := range zs {
		var z, amb uint64
		for j := pairs; j > 0; j-- {
			st += golden
			x := mix64(st)
			qlo, qhi := uint64(quadTable[(x>>(32-qBits))&(1<<qBits-1)]), uint64(quadTable[x>>(64-qBits)])
			amb |= qlo | qhi
			z = z<<4 | qlo<<2 | qhi
		}
		zs[i] = z
		redo[nredo&(fixBatch-1)] = int32(i) // nredo <= i < fixBatch
		nredo += int(amb >> 2)
	}
	return st, nredo
}

// rmatWordsOdd is rmatWords with one more level, from the low half of one
// more draw.
func rmatWordsOdd(st uint64, pairs int, zs []uint64, redo *[fixBatch]int32) (uint64, int) {
	nredo := 0
	for i := range zs {
		var z, amb uint64
		for j := pairs; j > 0; j-- {
			st += golden
			x := mix64(st)
			qlo, qhi := uint64(quadTable[(x>>(32-qBits))&(1<<qBits-1)]), uint64(quadTable[x>>(64-qBits)])
			amb |= qlo | qhi
			z = z<<4 | qlo<<2 | qhi
		}
		st += golden
		q := uint64(quadTable[(mix64(st)>>(32-qBits))&(1<<qBits-1)])
		zs[i] = z<<2 | q
		redo[nredo&(fixBatch-1)] = int32(i) // nredo <= i < fixBatch
		nredo += int((amb | q) >> 2)
	}
	return st, nredo
}

// fixBatch is the number of edges after which fillOne draws its noted
// edges again (a power of two).
const fixBatch = 1024

// qBits is the number of top bits of a 32-bit draw that index quadTable.
const qBits = 12

// quadTable maps the top qBits bits of a 32-bit draw to its quadrant, or
// to 4 where a threshold lies inside the slice of draws those bits name.
var quadTable = func() (t [1 << qBits]uint8) {
	for i := range t {
		lo := uint64(i) << (32 - qBits)
		hi := lo + 1<<(32-qBits) - 1
		if q := quadrant(lo); q == quadrant(hi) {
			t[i] = uint8(q)
		} else {
			t[i] = 4
		}
	}
	return t
}()

// The thresholds on a 32-bit uniform draw, round(p * 2^32) for the
// cumulative initiator probabilities a, a+b and a+b+c, as constants
// (TestRMATThresholds holds them to rmatA, rmatB and rmatC).
const (
	rmatTA   = 2448131359
	rmatTAB  = 3264175145
	rmatTABC = 4080218931
)

// quadrant is the number of thresholds at or below x (x < 2^32): x >= t
// is (t-1 - x) >> 63.
func quadrant(x uint64) uint64 {
	return (rmatTA-1-x)>>63 + (rmatTAB-1-x)>>63 + (rmatTABC-1-x)>>63
}

// rmatLevels draws n <= 32 levels from r as fillOne does.
func rmatLevels(r *splitmix64, n int) (uint64, uint64) {
	var z uint64
	for j := n >> 1; j > 0; j-- {
		x := r.next()
		z = z<<4 | quadrant(x&math.MaxUint32)<<2 | quadrant(x>>32)
	}
	if n&1 == 1 {
		z = z<<2 | quadrant(r.next()&math.MaxUint32)
	}
	return compactBits(z >> 1), compactBits(z)
}

// compactBits gathers the even bits of x (bits 0, 2, 4, ...) into the low
// 32 bits: the inverse of a Morton interleave.
func compactBits(x uint64) uint64 {
	x &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0f0f0f0f0f0f0f0f
	x = (x | x>>4) & 0x00ff00ff00ff00ff
	x = (x | x>>8) & 0x0000ffff0000ffff
	return (x | x>>16) & 0x00000000ffffffff
}

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

func (s *scrambler) apply(x uint64) uint64 {
	x = (x*s.mul[0] + s.add[0]) & s.mask
	x ^= x >> s.shift
	x = (x*s.mul[1] + s.add[1]) & s.mask
	x ^= x >> s.shift
	x = (x*s.mul[2] + s.add[2]) & s.mask
	return x ^ x>>s.shift
}
