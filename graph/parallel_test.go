package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOffsetsFromLengths: the offsets and the longest length equal a
// serial pass's, for arrays short enough for one part and long enough for
// several, at several worker counts.
func TestOffsetsFromLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 5, 1 << 16, 3<<16 + 17} {
		lens := make([]uint64, n+1)
		for i := range n {
			lens[i] = r.Uint64N(1000)
			if r.IntN(50) == 0 {
				lens[i] = r.Uint64N(1 << 40)
			}
		}
		want := make([]uint64, n+1)
		var longest uint64
		for i, x := range lens[:n] {
			want[i+1] = want[i] + x
			longest = max(longest, x)
		}
		for _, w := range []int{1, 3, 8} {
			got := slices.Clone(lens)
			if l := OffsetsFromLengths(got, w); l != longest || !slices.Equal(got, want) {
				t.Fatalf("n=%d workers=%d: longest %d (want %d), offsets equal: %v", n, w, l, longest, slices.Equal(got, want))
			}
		}
	}
	if l := OffsetsFromLengths(nil, 2); l != 0 {
		t.Fatalf("no words: longest %d", l)
	}
}
