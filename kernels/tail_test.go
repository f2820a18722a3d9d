package kernels

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMergeStarts checks the branch-free merge of rowSpans against a
// plain count of the elements below each clip, for offsets of every kind a
// scheme gives (positive, zero, and beyond every id either way).
func TestMergeStarts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	sorted := func(n, span int) []uint32 {
		set := map[uint32]bool{}
		for len(set) < n {
			set[uint32(rng.IntN(span))] = true
		}
		s := make([]uint32, 0, n)
		for x := range set {
			s = append(s, x)
		}
		slices.Sort(s)
		return s
	}
	for trial := range 2000 {
		span := 1 + rng.IntN(200)
		vs, rest := sorted(rng.IntN(min(span, 40)+1), span), sorted(rng.IntN(min(span, 40)+1), span)
		if trial%7 == 0 && len(rest) > 0 {
			rest[len(rest)-1] = 1<<32 - 1 // ids at the top of the range
		}
		for _, off := range []int64{1, 0, -1, 2, -maxClipOffset, maxClipOffset} {
			starts := make([]uint32, len(vs))
			mergeStarts(vs, rest, off, starts)
			for q, v := range vs {
				want := 0
				for _, x := range rest {
					if int64(x) < int64(v)+off {
						want++
					}
				}
				if int(starts[q]) != want {
					t.Fatalf("vs %v rest %v off %d: start of %d = %d, want %d", vs, rest, off, v, starts[q], want)
				}
			}
		}
	}
}
