package gen

import (
	"math"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// rmatOneLevelAtATime is the generator as first written: one level a
// step, u's and v's bits shifted in as each level is drawn. The faster
// kernel must give exactly its edges, so that a seed's graph (and every
// count quoted for it) stays the same.
func rmatOneLevelAtATime(scale int, seed uint64, c int, n int) []graph.Edge {
	ta := uint64(math.Round(rmatA * (1 << 32)))
	tab := uint64(math.Round((rmatA + rmatB) * (1 << 32)))
	tabc := uint64(math.Round((rmatA + rmatB + rmatC) * (1 << 32)))
	ge := func(x, t uint64) uint64 {
		if x >= t {
			return 1
		}
		return 0
	}
	level := func(u, v, x uint64) (uint64, uint64) {
		ub := ge(x, tab)
		vb := ge(x, ta) - ge(x, tab) + ge(x, tabc)
		return u<<1 | ub, v<<1 | vb
	}
	perm := newScrambler(scale, seed)
	r := chunkStream(seed, purposeRMATEdges, c)
	out := make([]graph.Edge, n)
	for i := range out {
		var u, v uint64
		for lvl := 0; lvl < scale; lvl += 2 {
			x := r.next()
			u, v = level(u, v, x&math.MaxUint32)
			if lvl+1 < scale {
				u, v = level(u, v, x>>32)
			}
		}
		out[i] = graph.Edge{U: perm.apply(u), V: perm.apply(v)}
	}
	return out
}

func TestRMATMatchesOneLevelAtATime(t *testing.T) {
	for _, scale := range []int{1, 2, 3, 8, 13, 28, 31, 32, 33, 36, 39, 40} {
		for _, seed := range []uint64{1, 77} {
			s, err := RMATSource(scale, 1, seed)
			if err != nil {
				t.Fatal(err)
			}
			chunks := []int{0}
			if s.Len() > int64(s.ChunkLen()) {
				chunks = append(chunks, 3)
			}
			buf := make([]graph.Edge, s.ChunkLen())
			for _, c := range chunks {
				got := s.Chunk(c, buf)
				want := rmatOneLevelAtATime(scale, seed, c, len(got))
				if len(got) > 4096 {
					got, want = got[:4096], want[:4096]
				}
				if !slices.Equal(got, want) {
					t.Fatalf("scale %d seed %d chunk %d: edges differ from one level at a time", scale, seed, c)
				}
			}
		}
	}
}

// TestSourceChunksAreTheList checks that a Source's chunks, filled in any
// order, concatenate to the list RMAT and ER return.
func TestSourceChunksAreTheList(t *testing.T) {
	rs, err := RMATSource(12, 40, 3)
	if err != nil {
		t.Fatal(err)
	}
	es, err := ERSource(1000, 5*chunkEdges/2, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src  *Source
		list func() ([]graph.Edge, error)
	}{
		{rs, func() ([]graph.Edge, error) { return RMAT(12, 40, 3, 2) }},
		{es, func() ([]graph.Edge, error) { return ER(1000, 5*chunkEdges/2, 3, 2) }},
	} {
		want, err := tc.list()
		if err != nil {
			t.Fatal(err)
		}
		if tc.src.Len() != int64(len(want)) {
			t.Fatalf("Len %d, list %d", tc.src.Len(), len(want))
		}
		n := (len(want) + tc.src.ChunkLen() - 1) / tc.src.ChunkLen()
		got := make([]graph.Edge, len(want))
		buf := make([]graph.Edge, tc.src.ChunkLen())
		var top uint64
		for c := n - 1; c >= 0; c-- {
			part := tc.src.Chunk(c, buf)
			copy(got[c*tc.src.ChunkLen():], part)
			for _, e := range part {
				top = max(top, e.U, e.V)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatal("chunks differ from the list")
		}
		if top > tc.src.MaxIDBound() {
			t.Fatalf("id %d above the bound %d", top, tc.src.MaxIDBound())
		}
	}
}

func TestRMATThresholds(t *testing.T) {
	for _, c := range []struct {
		got uint64
		p   float64
	}{{rmatTA, rmatA}, {rmatTAB, rmatA + rmatB}, {rmatTABC, rmatA + rmatB + rmatC}} {
		if want := uint64(math.Round(c.p * (1 << 32))); c.got != want {
			t.Errorf("threshold of %v: %d, want round(%v * 2^32) = %d", c.p, c.got, c.p, want)
		}
	}
	// The table is exact wherever it does not defer to the computation.
	for x := uint64(0); x < 1<<32; x += 1<<20 - 3 {
		if q := quadTable[x>>(32-qBits)]; q != 4 && uint64(q) != quadrant(x) {
			t.Fatalf("quadTable says %d for %d, the thresholds %d", q, x, quadrant(x))
		}
	}
}
