package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/storage"
)

// layoutBounds returns range starts of several shapes for n ids in r
// ranges: even, quadratic (empty ranges at the front when n is small),
// everything in one middle range (the others empty), and random cuts.
func layoutBounds(n int64, r int, seed uint64) map[string][]uint64 {
	mk := func(f func(k int) uint64) []uint64 {
		b := make([]uint64, r+1)
		for k := 1; k < r; k++ {
			b[k] = f(k)
		}
		b[r] = uint64(n)
		return b
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	random := make([]uint64, r+1)
	for k := 1; k < r; k++ {
		random[k] = uint64(rng.Int64N(n + 1))
	}
	random[r] = uint64(n)
	slices.Sort(random)
	return map[string][]uint64{
		"even":      mk(func(k int) uint64 { return uint64(n * int64(k) / int64(r)) }),
		"quadratic": mk(func(k int) uint64 { return uint64(n * int64(k*k) / int64(r*r)) }),
		"one":       mk(func(k int) uint64 { return uint64(n) * uint64(min(1, max(0, 2*k-r+1))) }),
		"random":    random,
	}
}

// TestFoldedLayoutRoundTrip checks Group, Local, Locate and Global against
// each other and against the definition (range r of the bounds belongs to
// group storage.RangeGroup(r, P); local ids number a group's ids in rank
// order) for fold*P ranges, empty ranges and n below fold*P included, and
// that a manifest carrying the layout validates and rebuilds it.
func TestFoldedLayoutRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, 2, 3, 5, 7, 37, 200} {
		for _, p := range append(slices.Clone(testPs), 16) {
			for _, fold := range []int{1, 2, 3, 4} {
				r := fold * p
				for shape, bounds := range layoutBounds(n, r, uint64(n)*131+uint64(r)) {
					name := fmt.Sprintf("n%d/P%d/fold%d/%s", n, p, fold, shape)
					l, err := NewFoldedLayout(n, p, fold, bounds)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					checkLayout(t, name, l, bounds)
				}
			}
		}
	}
}

func checkLayout(t *testing.T, name string, l *Layout, bounds []uint64) {
	t.Helper()
	p, n := l.P, l.N
	next := make([]uint32, p) // next local id expected per group
	rangeOf := 0
	for v := uint32(0); int64(v) < n; v++ {
		for bounds[rangeOf+1] <= uint64(v) {
			rangeOf++
		}
		want := storage.RangeGroup(rangeOf, p)
		g, lv := l.Locate(v)
		if g != want || l.Group(v) != g {
			t.Fatalf("%s: vertex %d in range %d: Locate group %d, Group %d, want %d", name, v, rangeOf, g, l.Group(v), want)
		}
		// Ids are visited in rank order, so a group's local ids must come
		// out as 0, 1, 2, ...: rank order kept, no gaps, no repeats.
		if lv != next[g] || l.Local(v, g) != lv {
			t.Fatalf("%s: vertex %d: local %d (Local %d), want %d", name, v, lv, l.Local(v, g), next[g])
		}
		next[g]++
		if got := l.Global(g, lv); got != v {
			t.Fatalf("%s: Global(%d, %d) = %d, want %d", name, g, lv, got, v)
		}
	}
	var sum int64
	for g := range p {
		if int64(next[g]) != l.GroupSize(g) {
			t.Fatalf("%s: group %d holds %d ids, GroupSize says %d", name, g, next[g], l.GroupSize(g))
		}
		sum += l.GroupSize(g)
	}
	if sum != n {
		t.Fatalf("%s: group sizes add to %d, want %d", name, sum, n)
	}
	m := &storage.Manifest{Format: storage.ManifestFormat, Scheme: storage.SchemeRange, P: p, PartitionID: 1,
		Graph: storage.GraphStats{Vertices: n}, Boundaries: l.Bounds, GroupSizes: l.GroupSizes()}
	if l.Fold > 1 {
		m.Fold = l.Fold
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("%s: manifest of the layout: %v", name, err)
	}
	back, err := ManifestLayout(m)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if back.Fold != l.Fold || !slices.Equal(back.Bounds, l.Bounds) || !slices.Equal(back.GroupSizes(), l.GroupSizes()) {
		t.Fatalf("%s: layout from the manifest differs: fold %d bounds %v sizes %v", name, back.Fold, back.Bounds, back.GroupSizes())
	}
}

func TestFoldedLayoutRejects(t *testing.T) {
	tests := []struct {
		name    string
		n       int64
		p, fold int
		bounds  []uint64
	}{
		{"fold 0", 4, 2, 0, []uint64{0, 4}},
		{"fold too big", 4, 1, storage.MaxFold + 1, make([]uint64, storage.MaxFold+2)},
		{"too few bounds", 4, 2, 2, []uint64{0, 1, 2, 4}},
		{"too many bounds", 4, 2, 1, []uint64{0, 1, 2, 4}},
		{"not from 0", 4, 2, 1, []uint64{1, 2, 4}},
		{"not to n", 4, 2, 1, []uint64{0, 2, 3}},
		{"decreasing", 4, 2, 2, []uint64{0, 3, 2, 3, 4}},
	}
	for _, tc := range tests {
		if _, err := NewFoldedLayout(tc.n, tc.p, tc.fold, tc.bounds); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestRangeSearchFolds checks that the search on a real grid returns
// usable bounds: fold*P+1 non-decreasing starts from 0 to n, a fold in
// 2..searchFolds for P > 1 and 1 for P = 1, and the same answer twice.
func TestRangeSearchFolds(t *testing.T) {
	t.Parallel()
	fwd := refForward(rmatEdges(11, 8, 5))
	for _, p := range testPs {
		b, fold, err := RangeBounds(fwd, p, 2)
		if err != nil {
			t.Fatal(err)
		}
		if p == 1 && fold != 1 || p > 1 && (fold < 2 || fold > searchFolds) {
			t.Fatalf("P=%d: fold %d", p, fold)
		}
		if len(b) != fold*p+1 || b[0] != 0 || b[len(b)-1] != uint64(fwd.NumRows()) || !slices.IsSorted(b) {
			t.Fatalf("P=%d fold %d: bounds %v", p, fold, b)
		}
		again, fold2, _ := RangeBounds(fwd, p, 1)
		if fold2 != fold || !slices.Equal(again, b) {
			t.Fatalf("P=%d: second search gave fold %d bounds %v, first fold %d %v", p, fold2, again, fold, b)
		}
	}
}

// TestFoldedLayoutWideSlots covers ids past the lookup table's resolution
// (several ids per slot), with ranges narrower than a slot at the top of
// the rank order as degree order gives them.
func TestFoldedLayoutWideSlots(t *testing.T) {
	const n = 1<<18 + 3
	bounds := []uint64{0, 200000, 250000, 261000, 262000, 262100, 262101, 262140, n}
	l, err := NewFoldedLayout(n, 4, 2, bounds)
	if err != nil {
		t.Fatal(err)
	}
	if l.slotShift == 0 {
		t.Fatal("the table resolves every id; the test needs wider slots")
	}
	checkLayout(t, "wide", l, bounds)
}
