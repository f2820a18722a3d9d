package gpu

import (
	"fmt"
	"slices"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/parallel"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// noSpan marks, in rangeSetup's first pass, a row without a bitmap's span
// (empty, or not increasing).
const noSpan = ^uint64(0)

// rangeSetup readies a count in ranges of fwd in two passes over its rows
// on all cores: the first checks the offsets (they start at 0, never
// decrease and end at the columns: what the host's walks rely on; the
// device checks the columns), notes each row's first column (the
// builder's next) and its span (in bm[r+1], for now) and sums the bitmap
// words of every ratio of rangesBitmapRatios; the second, the ratio chosen
// (the first whose bitmaps take at most 1/RangesBitmapShare of the
// columns' bytes, else 0), lays out the bitmaps' offsets from the spans
// (each chunk of rows from its first pass's sum). The first pass also
// sets the builder's cursor to zero. Row r's bitmap words are [bm[r],
// bm[r+1]); rb still needs its bounds. bm and rb's arrays come from
// arena (every word of them written here), which the caller frees after
// their last use.
func rangeSetup(fwd *graph.CSR, arena *devmem.Arena) (ratio uint32, bm []uint64, rb *rangeBuilder, err error) {
	if len(fwd.Offsets) == 0 {
		return 0, nil, nil, fmt.Errorf("malformed forward graph: no offsets")
	}
	n := int(fwd.NumRows())
	if fwd.Offsets[0] != 0 || fwd.Offsets[n] != uint64(len(fwd.Cols)) {
		return 0, nil, nil, fmt.Errorf("malformed forward graph: offsets from %d to %d over %d columns",
			fwd.Offsets[0], fwd.Offsets[n], len(fwd.Cols))
	}
	chunks := (n + builderChunk - 1) / builderChunk
	cursor := devmem.Alloc[uint32](arena, n)
	next := devmem.Alloc[uint32](arena, n)
	bm = devmem.Alloc[uint64](arena, n+1)
	rb = &rangeBuilder{fwd: fwd, cursor: cursor, next: next,
		counts: [2][]int64{make([]int64, chunks), make([]int64, chunks)}}
	k := len(rangesBitmapRatios)
	words := make([]int64, chunks*k)
	bad := make([]int, chunks)       // per chunk, 1 + the first row whose offsets decrease
	backward := make([]bool, chunks) // per chunk, a row's first column at or below the row
	parallel.Dynamic(n, builderChunk, 0, func(lo, hi int) {
		w := words[lo/builderChunk*k:][:k]
		// The cursor starts at zero, written here (the arena's memory
		// may hold other words): on every core, in order, so that fresh
		// pages are not faulted one at a time in a listing's few chunks.
		clear(rb.cursor[lo:hi])
		for r := lo; r < hi; r++ {
			a, b := fwd.Offsets[r], fwd.Offsets[r+1]
			if b < a || b > uint64(len(fwd.Cols)) {
				bad[lo/builderChunk] = r + 1
				return
			}
			if b == a {
				rb.next[r], bm[r+1] = ^uint32(0), noSpan
				continue
			}
			first, last := fwd.Cols[a], fwd.Cols[b-1]
			rb.next[r] = first
			if int(first) <= r {
				backward[lo/builderChunk] = true
			}
			bm[r+1] = noSpan // not increasing: no bitmap, the device refuses the row
			if last >= first {
				bm[r+1] = uint64(last - first)
			}
			for i, ratio := range rangesBitmapRatios {
				x := abi.RangesBitmapWords(int64(b-a), first, last, ratio)
				if x == 0 {
					break // the denser ratios admit none either
				}
				w[i] += x
			}
		}
	})
	for _, r := range bad {
		if r > 0 {
			return 0, nil, nil, fmt.Errorf("malformed forward graph: offsets decrease at row %d (from %d to %d over %d columns)",
				r-1, fwd.Offsets[r-1], fwd.Offsets[r], len(fwd.Cols))
		}
	}
	rb.forward = !slices.Contains(backward, true)
	// starts[c]: chunk c's first bitmap word under the ratio chosen (its
	// chunks' sums from the first pass).
	starts := make([]uint64, chunks)
	for i, x := range rangesBitmapRatios {
		var sum int64
		for c := range chunks {
			sum += words[c*k+i]
		}
		if sum*4*RangesBitmapShare <= int64(len(fwd.Cols))*4 {
			ratio = x
			var at uint64
			for c := range chunks {
				starts[c] = at
				at += uint64(words[c*k+i])
			}
			break
		}
	}
	bm[0] = 0
	parallel.Dynamic(n, builderChunk, 0, func(lo, hi int) {
		sum := starts[lo/builderChunk]
		for r := lo; r < hi; r++ {
			if span := bm[r+1]; span != noSpan {
				sum += uint64(abi.RangesBitmapWords(int64(fwd.Offsets[r+1]-fwd.Offsets[r]), 0, uint32(span), ratio))
			}
			bm[r+1] = sum
		}
	})
	return ratio, bm, rb, nil
}
