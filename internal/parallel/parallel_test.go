package parallel

import (
	"sync/atomic"
	"testing"
)

// Every index is visited exactly once, in chunks that never cross a chunk
// boundary, for any worker count.
func TestDynamicCoversOnce(t *testing.T) {
	for _, tc := range []struct{ n, chunk, workers int }{
		{0, 4, 2}, {1, 4, 2}, {10, 3, 1}, {10, 3, 4}, {1000, 7, 0}, {5, 0, 3}, {64, 64, 8},
	} {
		seen := make([]atomic.Int32, tc.n)
		Dynamic(tc.n, tc.chunk, tc.workers, func(lo, hi int) {
			c := max(tc.chunk, 1)
			if lo%c != 0 || hi > tc.n || (hi-lo > c) || (hi < tc.n && hi-lo != c) {
				t.Errorf("%+v: bad chunk [%d, %d)", tc, lo, hi)
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if v := seen[i].Load(); v != 1 {
				t.Fatalf("%+v: index %d visited %d times", tc, i, v)
			}
		}
	}
}
