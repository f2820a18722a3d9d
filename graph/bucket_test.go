package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// bucketCursors must lay out every part's entries of every bucket one
// after the other, buckets in order and parts in order within a bucket,
// as a serial loop does, whatever the number of ranges it works in.
func TestBucketCursors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range []struct{ parts, nb int }{{1, 1}, {3, 7}, {16, 9000}, {5, 70_000}} {
		cnt := make([]uint64, sz.parts*sz.nb)
		for i := range cnt {
			if rng.IntN(3) > 0 {
				cnt[i] = uint64(rng.IntN(50))
			}
		}
		want := slices.Clone(cnt)
		wantStart := make([]uint64, sz.nb+1)
		var total uint64
		for b := 0; b < sz.nb; b++ {
			wantStart[b] = total
			for p := 0; p < sz.parts; p++ {
				c := want[p*sz.nb+b]
				want[p*sz.nb+b] = total
				total += c
			}
		}
		wantStart[sz.nb] = total
		for _, w := range []int{1, 2, 7} {
			got := slices.Clone(cnt)
			start := bucketCursors(got, sz.parts, sz.nb, w)
			if !slices.Equal(got, want) || !slices.Equal(start, wantStart) {
				t.Fatalf("%d parts, %d buckets, %d workers: cursors or starts differ from the serial ones", sz.parts, sz.nb, w)
			}
		}
	}
}
