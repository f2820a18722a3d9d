package gpu

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// scattered places items in a base of size words at random disjoint
// places, in parts of 1 to 20, and returns the base (the rest 0) and the
// rope that reads them back in order.
func scattered(r *rand.Rand, items []uint64, size int) ([]uint64, rope) {
	base := make([]uint64, size)
	free := make([]bool, size)
	for i := range free {
		free[i] = true
	}
	var ro rope
	for at := 0; at < len(items); {
		n := min(1+r.IntN(20), len(items)-at)
		for {
			start := r.IntN(size - n + 1)
			if !slices.Contains(free[start:start+n], false) {
				copy(base[start:], items[at:at+n])
				for i := start; i < start+n; i++ {
					free[i] = false
				}
				ro.add(uint64(start), uint64(n))
				break
			}
		}
		at += n
	}
	return base, ro
}

// TestRope: a rope's len, index and spans read the items it was made of,
// in order, for any start and count.
func TestRope(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	for trial := range 30 {
		items := make([]uint64, 1+r.IntN(300))
		for i := range items {
			items[i] = uint64(1000 + i)
		}
		base, ro := scattered(r, items, 3*len(items)+20)
		if ro.len() != uint64(len(items)) {
			t.Fatalf("trial %d: len %d, want %d", trial, ro.len(), len(items))
		}
		for i := range items {
			if got := base[ro.index(uint64(i))]; got != items[i] {
				t.Fatalf("trial %d: item %d reads %d, want %d", trial, i, got, items[i])
			}
		}
		from := uint64(r.IntN(len(items)))
		count := uint64(r.IntN(len(items) - int(from) + 1))
		var got []uint64
		for _, s := range pairsOf(ro.spans(nil, from, count)) {
			got = append(got, base[s[0]:s[0]+s[1]]...)
		}
		if !slices.Equal(got, items[from:from+count]) {
			t.Fatalf("trial %d: spans of [%d, +%d) read %v", trial, from, count, got)
		}
	}
}

func pairsOf(s []uint64) [][2]uint64 {
	var p [][2]uint64
	for i := 0; i+1 < len(s); i += 2 {
		p = append(p, [2]uint64{s[i], s[i+1]})
	}
	return p
}

// TestFilled: n units written back over spans fill each span before the
// next, in units of the item size.
func TestFilled(t *testing.T) {
	spans := []uint64{10, 3, 2, 4, 40, 5}
	for _, tc := range []struct {
		n, size uint64
		want    []uint64
	}{
		{0, 1, nil},
		{5, 1, []uint64{10, 3, 2, 2}},
		{12, 1, []uint64{10, 3, 2, 4, 40, 5}},
		{7, 2, []uint64{20, 6, 4, 1}},
		{24, 2, []uint64{20, 6, 4, 8, 80, 10}},
	} {
		if got := filled(spans, tc.n, tc.size); !slices.Equal(got.segs, tc.want) {
			t.Fatalf("%d units of %d: %v, want %v", tc.n, tc.size, got.segs, tc.want)
		}
	}
}

// TestCompactWords: words scattered in parts anywhere in an array (inside
// and past the front they move to, straddling its end) come to its front
// in the rope's order, whatever the number of workers; more words than
// half the array is an error, not a panic.
func TestCompactWords(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for trial := range 60 {
		m := 1 + r.IntN(400)
		size := 2*m + r.IntN(50)
		items := make([]uint64, m)
		for i := range items {
			items[i] = uint64(1 + i)
		}
		wide, ro := scattered(r, items, size)
		base := make([]uint32, size)
		for i, v := range wide {
			base[i] = uint32(v)
		}
		got, err := compactWords(base, ro, 1+trial%4)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]uint32, m)
		for i := range want {
			want[i] = uint32(1 + i)
		}
		if !slices.Equal(got, want) || &got[0] != &base[0] || cap(got) != m {
			t.Fatalf("trial %d: %d words compacted to %v", trial, m, got)
		}
	}
	var ro rope
	ro.add(0, 6)
	if _, err := compactWords(make([]uint32, 10), ro, 2); err == nil {
		t.Fatal("6 words of 10 compacted, want an error")
	}
}

// TestCutRangesOverParts: runs that lie in many parts of the base,
// interleaved, are cut as contiguous runs are: every key once, in order,
// no range over the limit.
func TestCutRangesOverParts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for trial := range 20 {
		nruns := 1 + r.IntN(5)
		var all []uint64
		var lens []int
		for range nruns {
			run := make([]uint64, r.IntN(200))
			for i := range run {
				run[i] = uint64(r.IntN(15))<<32 | uint64(r.IntN(500))
			}
			slices.Sort(run)
			run = slices.Compact(run)
			lens = append(lens, len(run))
			all = append(all, run...)
		}
		base, whole := scattered(r, all, 3*len(all)+10)
		runs := make([]rope, nruns)
		var off uint64
		for i, n := range lens {
			for _, s := range pairsOf(whole.spans(nil, off, uint64(n))) {
				runs[i].add(s[0], s[1])
			}
			off += uint64(n)
		}
		limit := uint64(max(nruns, 1+r.IntN(60)))
		var got []uint64
		err := cutRanges(runs, limit, base, func(lo, hi uint64, spans []uint64) error {
			var keys []uint64
			for _, s := range pairsOf(spans) {
				keys = append(keys, base[s[0]:s[0]+s[1]]...)
				clear(base[s[0] : s[0]+s[1]])
			}
			if uint64(len(keys)) > limit || len(keys) == 0 {
				t.Fatalf("trial %d: range [%x, %x) holds %d keys, limit %d", trial, lo, hi, len(keys), limit)
			}
			for _, k := range keys {
				if k < lo || k >= hi {
					t.Fatalf("trial %d: key %x outside [%x, %x)", trial, k, lo, hi)
				}
			}
			slices.Sort(keys)
			got = append(got, keys...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(all)
		if !slices.Equal(got, all) {
			t.Fatalf("trial %d: the ranges hold %d keys, the runs %d", trial, len(got), len(all))
		}
	}
}

// BenchmarkCompactWords: 2^25 columns in 324 parts spread over an array
// twice their size (as the pieces leave rmat 28's, scaled down), moved
// to its front on every core; bytes are the columns' words.
func BenchmarkCompactWords(b *testing.B) {
	const m, parts = 1 << 25, 324
	base := make([]uint32, 2*m)
	var ro rope
	per := uint64(m / parts)
	for k := range uint64(parts) {
		n := per
		if k == parts-1 {
			n = m - per*(parts-1)
		}
		ro.add(2*per*k, n) // each part at the start of its run's span
	}
	b.SetBytes(4 * m)
	for b.Loop() {
		if _, err := compactWords(base, ro, runtime.GOMAXPROCS(0)); err != nil {
			b.Fatal(err)
		}
	}
}
