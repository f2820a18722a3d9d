package partition

import (
	"fmt"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/storage"
)

// TestTailOffsetMatchesGlobalOrder checks the clip offsets against the
// layouts' own id maps, pair by pair: w in group K is above v in group J
// globally exactly when local(w) >= local(v) + TailOffset (offsets past
// ±2^32 meaning all or none). The range bounds include empty groups.
func TestTailOffsetMatchesGlobalOrder(t *testing.T) {
	const n = 37
	for _, p := range testPs {
		hash, err := NewHashLayout(n, p)
		if err != nil {
			t.Fatal(err)
		}
		bounds := make([]uint64, p+1)
		for g := 1; g < p; g++ {
			bounds[g] = uint64(n * g * g / (p * p)) // uneven, some empty for large P
		}
		bounds[p] = n
		rng, err := NewRangeLayout(n, bounds)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []*Layout{hash, rng} {
			for j := range p {
				for k := range p {
					off := l.TailOffset(j, k)
					if off != TailOffset(l.Scheme, p, j, k) {
						t.Fatalf("%v P=%d (%d,%d): Layout.TailOffset %d, TailOffset %d", l.Scheme, p, j, k, off, TailOffset(l.Scheme, p, j, k))
					}
					for lv := range l.GroupSize(j) {
						for lw := range l.GroupSize(k) {
							above := l.Global(k, uint32(lw)) > l.Global(j, uint32(lv))
							if clip := lw-lv >= off; clip != above {
								t.Fatalf("%v P=%d j=%d k=%d: lv=%d lw=%d offset %d keeps %v, globally above %v", l.Scheme, p, j, k, lv, lw, off, clip, above)
							}
						}
					}
				}
			}
		}
	}
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
