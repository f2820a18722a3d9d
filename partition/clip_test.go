package partition

import (
	"fmt"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/storage"
)

// testLayouts returns hash, one-range and folded range layouts of n ids
// for P groups; the range bounds are uneven and, for large P or small n,
// include empty ranges.
func testLayouts(t *testing.T, n int64, p int) []*Layout {
	t.Helper()
	hash, err := NewHashLayout(n, p)
	if err != nil {
		t.Fatal(err)
	}
	out := []*Layout{hash}
	for _, fold := range []int{1, 2, 3, 4} {
		r := fold * p
		for _, even := range []bool{false, true} {
			bounds := make([]uint64, r+1)
			for k := 1; k < r; k++ {
				if even {
					bounds[k] = uint64(n * int64(k) / int64(r))
				} else {
					bounds[k] = uint64(n * int64(k*k) / int64(r*r))
				}
			}
			bounds[r] = uint64(n)
			l, err := NewFoldedLayout(n, p, fold, bounds)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
	}
	return out
}

// TestTailOffsetMatchesGlobalOrder checks the clip offsets against the
// layouts' own id maps, pair by pair. Where TailOffset is exact, w in
// group K is above v in group J globally exactly when local(w) >=
// local(v) + TailOffset (offsets past ±2^32 meaning all or none).
// Elsewhere (folded ranges, j != k) it must keep every w above v; when
// every range holds two ids or more the test confirms that no constant
// offset would be exact there (with singleton or empty ranges one can be,
// by accident of the sizes, and keeping all is still correct).
func TestTailOffsetMatchesGlobalOrder(t *testing.T) {
	const n = 37
	for _, p := range testPs {
		for _, l := range testLayouts(t, n, p) {
			for j := range p {
				for k := range p {
					off := l.TailOffset(j, k)
					if off != TailOffset(l.Scheme, p, l.Fold, j, k) {
						t.Fatalf("%v P=%d (%d,%d): Layout.TailOffset %d, TailOffset %d", l.Scheme, p, j, k, off, TailOffset(l.Scheme, p, l.Fold, j, k))
					}
					exact := clipExact(l.Scheme, l.Fold, j, k)
					for lv := range l.GroupSize(j) {
						for lw := range l.GroupSize(k) {
							above := l.Global(k, uint32(lw)) > l.Global(j, uint32(lv))
							clip := lw-lv >= off
							if exact && clip != above || above && !clip {
								t.Fatalf("%v fold %d P=%d j=%d k=%d: lv=%d lw=%d offset %d keeps %v, globally above %v", l.Scheme, l.Fold, p, j, k, lv, lw, off, clip, above)
							}
						}
					}
					if !exact && minRange(l) >= 2 && constantOffsetExists(l, j, k) {
						t.Fatalf("fold %d P=%d (%d,%d): a constant offset is exact, TailOffset keeps all", l.Fold, p, j, k)
					}
				}
			}
		}
	}
}

// minRange is the fewest ids a range of l holds.
func minRange(l *Layout) uint64 {
	m := uint64(l.N)
	for r := 0; r+1 < len(l.Bounds); r++ {
		m = min(m, l.Bounds[r+1]-l.Bounds[r])
	}
	return m
}

// constantOffsetExists reports whether some offset o makes "local(w) >=
// local(v) + o" the same as "w above v" for all v in j and w in k.
func constantOffsetExists(l *Layout, j, k int) bool {
	nj, nk := l.GroupSize(j), l.GroupSize(k)
	for o := -nj - 1; o <= nk+1; o++ {
		ok := true
		for lv := int64(0); lv < nj && ok; lv++ {
			for lw := int64(0); lw < nk && ok; lw++ {
				ok = (lw-lv >= o) == (l.Global(k, uint32(lw)) > l.Global(j, uint32(lv)))
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestSubtasksCarryClip checks that both subtask lists, from memory and
// from a manifest, carry the scheme's clip, and that counting every
// subtask with its clip (only w >= v + offset) sums to the whole graph,
// while an offset one too high loses triangles.
func TestSubtasksCarryClip(t *testing.T) {
	fwd := refForward(rmatEdges(10, 8, 3))
	want := bruteCount(fwd)
	for _, sc := range schemes {
		for _, p := range testPs {
			t.Run(fmt.Sprintf("%v/P%d", sc, p), func(t *testing.T) {
				part, err := Split(fwd, sc, p, 2)
				if err != nil {
					t.Fatal(err)
				}
				tasks := part.Subtasks()
				m := &storage.Manifest{Scheme: sc, P: p, GroupSizes: part.Layout.GroupSizes()}
				if part.Layout.Fold > 1 {
					m.Fold = part.Layout.Fold
				}
				for i := range p {
					for j := range p {
						if b := part.Block(i, j); b.NumEdges() > 0 {
							m.Shards = append(m.Shards, storage.ShardInfo{I: i, J: j, Rows: uint64(b.NumRows()), Edges: uint64(b.NumEdges())})
						}
					}
				}
				fromManifest := Subtasks(m)
				if len(fromManifest) != len(tasks) {
					t.Fatalf("%d subtasks from the manifest, %d from memory", len(fromManifest), len(tasks))
				}
				var right, high uint64
				for x, s := range tasks {
					if !s.Clip || s.TailOffset != part.Layout.TailOffset(s.J, s.K) || fromManifest[x] != s {
						t.Fatalf("subtask %+v (manifest %+v): want clip offset %d", s, fromManifest[x], part.Layout.TailOffset(s.J, s.K))
					}
					ij, ik, jk := part.Block(s.I, s.J), part.Block(s.I, s.K), part.Block(s.J, s.K)
					right += clippedCount(ij, ik, jk, s.TailOffset)
					high += clippedCount(ij, ik, jk, s.TailOffset+1)
				}
				if right != want || high >= want {
					t.Fatalf("clipped subtasks count %d, offsets plus one %d, whole graph %d", right, high, want)
				}
			})
		}
	}
}

// clippedCount is countBlocks counting, per edge (u, v), only the common
// elements w with w >= v + off.
func clippedCount(ij, ik, jk *graph.CSR, off int64) uint64 {
	var n uint64
	for u := int64(0); u < ij.NumRows(); u++ {
		for _, v := range ij.Row(u) {
			a := ik.Row(u)
			for len(a) > 0 && int64(a[0])-int64(v) < off {
				a = a[1:]
			}
			n += intersect(a, jk.Row(int64(v)))
		}
	}
	return n
}

// clipExact reports whether TailOffset is exact for (j, k): only folded
// ranges with k != j fall back to keeping everything.
func clipExact(scheme storage.Scheme, fold, j, k int) bool {
	return scheme == storage.SchemeHash || fold <= 1 || j == k
}
