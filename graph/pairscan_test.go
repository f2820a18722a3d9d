package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestScanPairs: the largest id, the loops and the distinct loop ids
// equal a plain count's, on any number of workers; past one loop in 64
// pairs the ids are not listed; an odd number of ids is an error.
func TestScanPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for trial := range 20 {
		n := 1 + r.IntN(300000)
		pairs := make([]uint32, 2*n)
		for i := range pairs {
			pairs[i] = uint32(r.IntN(1 << 20))
		}
		loopEvery := []int{0, 1000, 100, 10}[trial%4]
		var wantIDs []uint32
		var loops, maxID uint64
		for i := 0; i < n; i++ {
			if loopEvery > 0 && r.IntN(loopEvery) == 0 {
				pairs[2*i+1] = pairs[2*i]
			}
			u, v := pairs[2*i], pairs[2*i+1]
			maxID = max(maxID, uint64(u), uint64(v))
			if u == v {
				loops++
				wantIDs = append(wantIDs, u)
			}
		}
		slices.Sort(wantIDs)
		wantIDs = slices.Compact(wantIDs)
		for _, w := range []int{1, 3} {
			s, err := ScanPairs(pairs, w)
			if err != nil {
				t.Fatal(err)
			}
			if s.MaxID != maxID || s.SelfLoops != loops {
				t.Fatalf("trial %d: max %d loops %d, want %d and %d", trial, s.MaxID, s.SelfLoops, maxID, loops)
			}
			switch {
			case s.LoopsListed && !slices.Equal(s.LoopIDs, wantIDs):
				t.Fatalf("trial %d: %d loop ids listed, want %d", trial, len(s.LoopIDs), len(wantIDs))
			case !s.LoopsListed && loops*64 < uint64(n):
				t.Fatalf("trial %d: %d loops of %d pairs not listed", trial, loops, n)
			case !s.LoopsListed && s.LoopIDs != nil:
				t.Fatalf("trial %d: ids kept although not listed", trial)
			}
		}
	}
	if _, err := ScanPairs([]uint32{1, 2, 3}, 1); err == nil {
		t.Fatal("an odd number of ids was accepted")
	}
}

// BenchmarkScanPairs: one pass over 2^25 rmat-like pairs with a loop in
// 1,000; bytes are the pairs'.
func BenchmarkScanPairs(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	pairs := make([]uint32, 1<<26)
	for i := range pairs {
		pairs[i] = uint32(r.IntN(1 << 24))
	}
	for i := 0; i < len(pairs); i += 2000 {
		pairs[i+1] = pairs[i]
	}
	b.SetBytes(int64(len(pairs)) * 4)
	for b.Loop() {
		if _, err := ScanPairs(pairs, 0); err != nil {
			b.Fatal(err)
		}
	}
}
