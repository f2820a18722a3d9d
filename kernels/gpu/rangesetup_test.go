package gpu

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// refBitmapRatio is rangeSetup's ratio, one row at a time: the first of
// rangesBitmapRatios whose bitmaps take at most 1/RangesBitmapShare of the
// columns' bytes, or 0.
func refBitmapRatio(fwd *graph.CSR) uint32 {
	for _, ratio := range rangesBitmapRatios {
		if words := refBitmapOffsets(fwd, ratio)[fwd.NumRows()]; int64(words)*4*RangesBitmapShare <= int64(len(fwd.Cols))*4 {
			return ratio
		}
	}
	return 0
}

// refBitmapOffsets is the prefix of fwd's rows' bitmap words under ratio,
// one row at a time.
func refBitmapOffsets(fwd *graph.CSR, ratio uint32) []uint64 {
	bm := make([]uint64, fwd.NumRows()+1)
	for r := range fwd.NumRows() {
		a, b := fwd.Offsets[r], fwd.Offsets[r+1]
		bm[r+1] = bm[r]
		if b > a {
			bm[r+1] += uint64(abi.RangesBitmapWords(int64(b-a), fwd.Cols[a], fwd.Cols[b-1], ratio))
		}
	}
	return bm
}

// stridedRows is a CSR of n rows over more chunks than one: row r has r %
// 23 columns from r + 1 at a stride of 1 + r % 300, so that rows of every
// chunk have bitmaps under some ratios and not under others.
func stridedRows(n int) *graph.CSR {
	g := &graph.CSR{Offsets: make([]uint64, n+1), NCols: int64(n) + 23*300}
	for r := range n {
		for i := range r % 23 {
			g.Cols = append(g.Cols, uint32(r+1+i*(1+r%300)))
		}
		g.Offsets[r+1] = uint64(len(g.Cols))
	}
	return g
}

// TestRangeSetup: rangeSetup's ratio and bitmap offsets equal the
// row-at-a-time reference's, on graphs of more rows than a chunk of its
// work and of none, with empty rows and rows out of order (no bitmap);
// the builder starts at each row's first column with its cursors zero;
// offsets that do not start at 0, decrease, pass the columns or end
// short of them are refused, naming the row.
func TestRangeSetup(t *testing.T) {
	graphs := map[string]*graph.CSR{
		"hub":    forward(t, append(hubEdges(900), randomEdges(900, 7000, 5)...)),
		"clique": forward(t, append(clique(300), hubEdges(2000)...)),
		"sparse": forward(t, randomEdges(3*builderChunk, 5*builderChunk, 3)),
		"empty":  {Offsets: []uint64{0}},
	}
	unsorted := forward(t, append(clique(80), randomEdges(500, 3000, 7)...))
	unsorted = &graph.CSR{Offsets: unsorted.Offsets, Cols: slices.Clone(unsorted.Cols), NCols: unsorted.NCols}
	for r := range unsorted.NumRows() { // the first and last columns of every long row swapped
		if a, b := unsorted.Offsets[r], unsorted.Offsets[r+1]; b-a >= 2 {
			unsorted.Cols[a], unsorted.Cols[b-1] = unsorted.Cols[b-1], unsorted.Cols[a]
		}
	}
	graphs["unsorted"] = unsorted
	graphs["chunks"] = stridedRows(3*builderChunk + 7)
	for name, g := range graphs {
		arena := devmem.NewArena(nil, 0)
		defer arena.Free()
		ratio, bm, rb, err := rangeSetup(g, arena)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := refBitmapRatio(g); ratio != want {
			t.Fatalf("%s: ratio %d, the reference chooses %d", name, ratio, want)
		}
		if want := refBitmapOffsets(g, ratio); !slices.Equal(bm, want) {
			t.Fatalf("%s: bitmap offsets differ from the reference's (%d words against %d)", name, bm[len(bm)-1], want[len(want)-1])
		}
		for r := range g.NumRows() {
			want := ^uint32(0)
			if a := g.Offsets[r]; a < g.Offsets[r+1] {
				want = g.Cols[a]
			}
			if rb.next[r] != want || rb.cursor[r] != 0 {
				t.Fatalf("%s: row %d: next %d cursor %d, want %d and 0", name, r, rb.next[r], rb.cursor[r], want)
			}
		}
		if (name == "clique" || name == "chunks") && ratio == 0 {
			t.Fatalf("%s: no bitmaps", name)
		}
	}
	g := graphs["sparse"]
	mid := g.NumRows() / 2
	breaks := map[string]func(o []uint64){
		"start":    func(o []uint64) { o[0] = 1 },
		"end":      func(o []uint64) { o[len(o)-1]-- },
		"decrease": func(o []uint64) { o[mid+1] = o[mid] - 1 },
		"past":     func(o []uint64) { o[3] = uint64(len(g.Cols)) + 5 },
	}
	for what, brk := range breaks {
		b := &graph.CSR{Offsets: slices.Clone(g.Offsets), Cols: g.Cols, NCols: g.NCols}
		brk(b.Offsets)
		arena := devmem.NewArena(nil, 0)
		_, _, _, err := rangeSetup(b, arena)
		arena.Free()
		if err == nil || !strings.Contains(err.Error(), "malformed forward graph") {
			t.Fatalf("%s: %v, want a malformed forward graph", what, err)
		}
		if what == "decrease" && !strings.Contains(err.Error(), "row") {
			t.Fatalf("%s: %v does not name the row", what, err)
		}
	}
}

// randomRows is a CSR of n rows, each strictly increasing, over more
// chunks than one: with forward, row r's columns lie above r (the rows a
// count in ranges lists from below a range only); without, anywhere
// below n, so that rows above a range name columns in it.
func randomRows(n int, forward bool, seed uint64) *graph.CSR {
	rng := rand.New(rand.NewPCG(seed, 7))
	g := &graph.CSR{Offsets: make([]uint64, n+1), NCols: int64(n)}
	for r := range n {
		lo := 0
		if forward {
			lo = r + 1
		}
		var row []uint32
		if lo < n {
			for range rng.IntN(1 + rng.IntN(3)*20) {
				row = append(row, uint32(lo+rng.IntN(n-lo)))
			}
		}
		if rng.IntN(500) == 0 && lo < n { // a long row, past the seek's first steps
			for c := lo; c < n; c += 1 + rng.IntN(4) {
				row = append(row, uint32(c))
			}
		}
		slices.Sort(row)
		g.Cols = append(g.Cols, slices.Compact(row)...)
		g.Offsets[r+1] = uint64(len(g.Cols))
	}
	return g
}

// TestRangeBuilderLists: the builder lists, range after range, exactly
// the rows with columns in each range, in row order, with their columns in
// it and to the row's end, the last range taking every column left; on
// forward rows (listed from below each range) and on rows that name
// columns below themselves (listed from every row), under bounds of one
// range, of ranges shorter than a chunk of rows and longer, and of empty
// ranges; with the set-up's arrays in fresh pages and in memory that held
// other words (a spare pinned array's).
func TestRangeBuilderLists(t *testing.T) {
	const n = 3*builderChunk + 77
	for _, forward := range []bool{true, false} {
		g := randomRows(n, forward, 3)
		cuts := [][]int64{
			{0, n},
			{0, 1, 2, 1000, builderChunk, builderChunk + 1, 2*builderChunk + 5, n - 1, n},
			{0, 0, 5000, 5000, n},
			{0, n / 3, n / 2, n},
		}
		for i, bounds := range cuts {
			arena := devmem.NewArena(nil, 0)
			if i%2 == 1 {
				arena = devmem.NewArena(dirtySpare(4 * n))
			}
			_, _, rb, err := rangeSetup(g, arena)
			if err != nil {
				t.Fatal(err)
			}
			if rb.forward != forward {
				t.Fatalf("forward %v: the builder takes the rows as forward %v", forward, rb.forward)
			}
			rb.bounds = bounds
			out := make([]rangeRow, n)
			for k := 0; k+1 < len(bounds); k++ {
				lo, hi := uint32(bounds[k]), uint32(bounds[k+1])
				if k+2 == len(bounds) {
					hi = ^uint32(0)
				}
				var want []rangeRow
				var reach int64
				for u := range n {
					o, e := g.Offsets[u], g.Offsets[u+1]
					row := g.Cols[o:e]
					s, _ := slices.BinarySearch(row, lo)
					if k == 0 {
						s = 0
					}
					j, _ := slices.BinarySearch(row, hi)
					if j > s {
						want = append(want, rangeRow{Start: o + uint64(s), Seg: uint32(j - s), Len: uint32(len(row) - s)})
						reach += int64(len(row) - s)
					}
				}
				got, mapped := rb.build(k, out)
				if !slices.Equal(out[:got], want) || mapped != reach {
					t.Fatalf("forward %v, bounds %v, range %d: %d entries reaching %d columns, want %d reaching %d",
						forward, bounds, k, got, mapped, len(want), reach)
				}
			}
			arena.Free()
		}
	}
}

// dirtySpare is a stand-in for a spare pinned array of words uint64
// words, every bit set: what an arena hands out of it holds no zeros.
func dirtySpare(words int) (unsafe.Pointer, uint64) {
	mem := make([]uint64, words)
	for i := range mem {
		mem[i] = ^uint64(0)
	}
	return unsafe.Pointer(&mem[0]), uint64(words) * 8
}
