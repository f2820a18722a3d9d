package gpu

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/osmem"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// clique is every pair of k vertices: its forward rows reach k-1
// columns, longer than a kernel's tile of an entry.
func clique(k int) []graph.Edge {
	var e []graph.Edge
	for u := range k {
		for v := u + 1; v < k; v++ {
			e = append(e, graph.Edge{U: uint64(u), V: uint64(v)})
		}
	}
	return e
}

// TestCountInRanges: a forward graph counted in row ranges under caps
// from one range down to the longest row counts what the reference
// counts, in more ranges the smaller the cap; the work area is freed
// afterwards; below the longest row the count is out of memory and
// DoesNotFit says so.
func TestCountInRanges(t *testing.T) { forLibs(t, countInRangesUnderCaps) }

func countInRangesUnderCaps(t *testing.T, path string) {
	good, _ := refLibs(t)
	ctx := context.Background()
	graphs := map[string][]graph.Edge{
		"hub":    append(hubEdges(900), randomEdges(900, 7000, 5)...),
		"sparse": randomEdges(5000, 9000, 11),
		"empty":  nil,
	}
	if path != good {
		// Rows longer than the CUDA kernel's tile (1024 columns), with a
		// hub and random edges around the clique.
		graphs["clique"] = append(clique(1300), hubEdges(3000)...)
	}
	base := counterBytes(t, path)
	for name, edges := range graphs {
		g := forward(t, edges)
		want := mustReference(t, kernels.Whole(g))
		bm := refBitmapOffsets(g, refBitmapRatio(g))
		whole := abi.RangesBytes(g.NumRows(), g.NumEdges(), int64(bm[g.NumRows()]))
		longest, least := int64(0), devmem.AllocBytes(abi.RangesBytes(0, 0, 0))
		for r := int64(0); r < g.NumRows(); r++ {
			longest = max(longest, int64(g.Offsets[r+1]-g.Offsets[r]))
			least = max(least, devmem.AllocBytes(rangeBytes(g, bm, r, r+1))) // in whole granules
		}
		areas := []int64{whole, whole / 2, whole / 5, whole / 20, least + 4096, least}
		slices.Sort(areas)
		slices.Reverse(areas)
		for _, set := range denseSettings(path != good) {
			prev := 0
			for _, area := range slices.Compact(areas) {
				if area < least {
					continue
				}
				// The area the counter leaves: limit - used - limit/64.
				limit := uint64((area+base)*RangesSpare/(RangesSpare-1)) + 64
				lib, err := Open(Options{Path: path, MemLimit: limit, Settings: set})
				if err != nil {
					t.Fatal(err)
				}
				c := autoCounter(t, lib)
				before, _ := c.MemUsage()
				res, st, err := c.CountInRanges(ctx, g, kernels.RangeOptions{})
				if err != nil {
					t.Fatalf("%s area %d: %v", name, area, err)
				}
				if res.Triangles != want {
					t.Fatalf("%s area %d %v: %d triangles in %d ranges, the reference counts %d", name, area, set, res.Triangles, st.Ranges, want)
				}
				if st.Ranges < prev {
					t.Fatalf("%s area %d: %d ranges, fewer than %d with a larger area", name, area, st.Ranges, prev)
				}
				prev = st.Ranges
				if room := (int64(limit) - int64(before) - int64(limit)/RangesSpare) &^ 255; st.AreaBytes > room {
					t.Fatalf("%s area %d: a work area of %d bytes, %d are free for it", name, area, st.AreaBytes, room)
				}
				if after, _ := c.MemUsage(); after != before {
					t.Fatalf("%s area %d: %d device bytes after, %d before", name, area, after, before)
				}
				if st.ResidentBytes != (g.NumRows()+int64(st.Ranges))*8+g.NumEdges()*4 {
					t.Fatalf("%s area %d: %d bytes copied for %d ranges", name, area, st.ResidentBytes, st.Ranges)
				}
				if st.BitmapBytes != int64(bm[g.NumRows()])*4 {
					t.Fatalf("%s area %d: %d bytes of bitmaps, the rows have %d", name, area, st.BitmapBytes, bm[g.NumRows()]*4)
				}
			}
			if g.NumEdges() > 1000 && prev < 10 {
				t.Fatalf("%s: the least area makes %d ranges", name, prev)
			}
		}
		if name == "clique" && bm[g.NumRows()] == 0 {
			t.Fatalf("clique: no row has a bitmap")
		}
		if longest == 0 {
			continue
		}
		limit := uint64((least-1+base)*RangesSpare/(RangesSpare-1)) - 64
		lib, err := Open(Options{Path: path, MemLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		c := autoCounter(t, lib)
		if _, _, err := c.CountInRanges(ctx, g, kernels.RangeOptions{}); !c.DoesNotFit(err) {
			t.Fatalf("%s: below the longest row: %v, want out of memory", name, err)
		}
	}
}

// denseSettings are the settings a count in ranges is tried under: the
// library's defaults and, through the CUDA library, no window (ranges_dense
// 0: every tail a tile at a time), windows of the last 256 and 1280
// vertices (most tails split between the tile and the window), and the
// widest window (dynamic shared memory past 48 KiB).
func denseSettings(cuda bool) []Settings {
	if !cuda {
		return []Settings{nil}
	}
	return []Settings{nil, {"ranges_dense": 0}, {"ranges_dense": 8}, {"ranges_dense": 40}, {"ranges_dense": 8192}}
}

// TestCountInRangesRefusesMalformed: a row out of order, a column beyond
// the vertices, or offsets that decrease make an error, never a count,
// whatever range they fall in.
func TestCountInRangesRefusesMalformed(t *testing.T) { forLibs(t, countInRangesRefusesMalformed) }

func countInRangesRefusesMalformed(t *testing.T, path string) {
	good, _ := refLibs(t)
	ctx := context.Background()
	g := forward(t, append(hubEdges(400), randomEdges(400, 3000, 9)...))
	base := counterBytes(t, path)
	var rows []int64 // rows of two columns or more
	for r := int64(0); r < g.NumRows(); r++ {
		if g.Offsets[r+1]-g.Offsets[r] >= 2 {
			rows = append(rows, r)
		}
	}
	breaks := map[string]func(b *graph.CSR, r int64){
		"unsorted": func(b *graph.CSR, r int64) {
			o := b.Offsets[r]
			b.Cols[o], b.Cols[o+1] = b.Cols[o+1], b.Cols[o]
		},
		"column beyond": func(b *graph.CSR, r int64) { b.Cols[b.Offsets[r+1]-1] = uint32(b.NumRows()) },
		"offsets":       func(b *graph.CSR, r int64) { b.Offsets[r+1] = b.Offsets[r] - 1 },
	}
	for what, brk := range breaks {
		for _, r := range []int64{rows[0], rows[len(rows)/2], rows[len(rows)-1]} {
			b := &graph.CSR{Offsets: slices.Clone(g.Offsets), Cols: slices.Clone(g.Cols), NCols: g.NCols}
			brk(b, r)
			whole := abi.RangesBytes(g.NumRows(), g.NumEdges(), int64(refBitmapOffsets(g, refBitmapRatio(g))[g.NumRows()]))
			for _, set := range denseSettings(path != good) {
				for _, area := range []int64{whole, whole / 8} {
					limit := uint64((area+base)*RangesSpare/(RangesSpare-1)) + 64
					lib, err := Open(Options{Path: path, MemLimit: limit, Settings: set})
					if err != nil {
						t.Fatal(err)
					}
					res, _, err := autoCounter(t, lib).CountInRanges(ctx, b, kernels.RangeOptions{})
					if err == nil || errors.Is(err, ErrOutOfMemory) {
						t.Fatalf("%s at row %d, area %d %v: %d triangles, err %v; want a refusal", what, r, area, set, res.Triangles, err)
					}
				}
			}
		}
	}
}

// TestCountInRangesFreshSides: a graph whose sides (entries and rows) are
// large enough to come from fresh pages (osmem), touched in the background
// before the listing writes them, counts what the reference counts in
// several ranges, and calls its Listed option once.
func TestCountInRangesFreshSides(t *testing.T) { forLibs(t, countInRangesFreshSides) }

func countInRangesFreshSides(t *testing.T, path string) {
	g := forward(t, randomEdges(200000, 600000, 17))
	want := mustReference(t, kernels.Whole(g))
	bm := refBitmapOffsets(g, refBitmapRatio(g))
	area := abi.RangesBytes(g.NumRows(), g.NumEdges(), int64(bm[g.NumRows()])) / 2
	if rows := 2 * (min(g.NumRows(), rangesRowsAtMost(area)) + 1) * 4; g.NumRows()*16 < osmem.MinBytes || rows < osmem.MinBytes {
		t.Fatalf("sides of %d and %d bytes, below osmem's %d", g.NumRows()*16, rows, osmem.MinBytes)
	}
	limit := uint64((area+counterBytes(t, path))*RangesSpare/(RangesSpare-1)) + 64
	lib, err := Open(Options{Path: path, MemLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	var listed atomic.Int32
	res, st, err := autoCounter(t, lib).CountInRanges(context.Background(), g, kernels.RangeOptions{Listed: func() { listed.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Triangles != want || st.Ranges < 2 {
		t.Fatalf("%d triangles in %d ranges; the reference counts %d, want at least 2 ranges", res.Triangles, st.Ranges, want)
	}
	if n := listed.Load(); n != 1 {
		t.Fatalf("Listed called %d times, want once", n)
	}
}

// TestRangesRefuseBadBitmapLayout: tg_ranges_count takes a range's bitmap
// offsets only as tg_ranges_bm_words lays them out (refBitmapOffsets): a row
// given a word more or fewer, or none where it has a bitmap, is refused.
func TestRangesRefuseBadBitmapLayout(t *testing.T) { forLibs(t, rangesRefuseBadBitmapLayout) }

func rangesRefuseBadBitmapLayout(t *testing.T, path string) {
	g := forward(t, append(clique(60), randomEdges(300, 900, 3)...))
	const ratio = 32
	n, bm := g.NumRows(), refBitmapOffsets(g, ratio)
	var dense, sparse []int64 // rows with a bitmap, rows of columns without one
	for r := int64(0); r < n; r++ {
		if bm[r+1] > bm[r] {
			dense = append(dense, r)
		} else if g.Offsets[r+1] > g.Offsets[r] {
			sparse = append(sparse, r)
		}
	}
	if len(dense) < 3 || len(sparse) == 0 {
		t.Fatalf("%d rows with a bitmap and %d without, want at least 3 and 1", len(dense), len(sparse))
	}
	lib, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	c := autoCounter(t, lib)
	cols := append(make([]uint32, 0, padBytes/4+len(g.Cols)), g.Cols...)
	reg, err := registerSlice(c.lib, cols)
	if err != nil {
		t.Fatal(err)
	}
	defer c.lib.releaseLogged(reg)
	area := abi.RangesBytes(n, g.NumEdges(), int64(bm[n])+64)
	if err := c.ctx.RangesBegin(cols, uint64(len(g.Cols)), uint64(n), uint64(area), ratio); err != nil {
		t.Fatal(err)
	}
	defer c.ctx.RangesEnd()
	rows := make([]uint32, max(2*(n+1), padBytes/4))
	rreg, err := registerSlice(c.lib, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer c.lib.releaseLogged(rreg)
	// countRows counts rows [0, n) with offsets offs and bitmap offsets
	// words, their columns from base.
	countRows := func(offs, words []uint64, base uint64) error {
		for i := range n + 1 {
			rows[i], rows[n+1+i] = uint32(offs[i]), uint32(words[i])
		}
		_, _, err := c.ctx.RangesCount(rows, base, 0, uint64(n), nil)
		return err
	}
	count := func(words []uint64) error { return countRows(g.Offsets, words, 0) }
	if err := count(bm); err != nil {
		t.Fatalf("the rule's layout: %v", err)
	}
	shifted := func(r int64, by int64) []uint64 { // row r's words changed by by
		off := slices.Clone(bm)
		for i := r + 1; i <= n; i++ {
			off[i] = uint64(int64(off[i]) + by)
		}
		return off
	}
	for _, r := range []int64{dense[0], dense[len(dense)/2], dense[len(dense)-1]} {
		for what, off := range map[string][]uint64{
			"a word more":           shifted(r, 1),
			"a word fewer":          shifted(r, -1),
			"no bitmap":             shifted(r, -int64(bm[r+1]-bm[r])),
			"a sparse row with one": shifted(sparse[len(sparse)/2], 1),
		} {
			if err := count(off); err == nil || !strings.Contains(err.Error(), "bitmap offsets") {
				t.Fatalf("row %d, %s: %v; want a refusal naming the bitmap offsets", r, what, err)
			}
		}
	}
	// Offsets or bitmap offsets not from 0, and columns past the graph's.
	from1 := func(o []uint64) []uint64 {
		o = slices.Clone(o)
		o[0] = 1
		return o
	}
	if err := countRows(from1(g.Offsets), bm, 0); err == nil || !strings.Contains(err.Error(), "not from 0") {
		t.Fatalf("offsets from 1: %v; want a refusal naming offsets not from 0", err)
	}
	if err := countRows(g.Offsets, from1(bm), 0); err == nil || !strings.Contains(err.Error(), "not from 0") {
		t.Fatalf("bitmap offsets from 1: %v; want a refusal naming offsets not from 0", err)
	}
	if err := countRows(g.Offsets, bm, 1); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Fatalf("columns from 1: %v; want a refusal of columns past the graph's", err)
	}
	if err := count(bm); err != nil {
		t.Fatalf("the rule's layout after the refusals: %v", err)
	}
}

// TestCutRowRangesFromEnd: the ranges cover the rows in order, each fits,
// each but the first could not take the row before it, and there are as
// many as the fewest cut from the first row (cutRows).
func TestCutRowRangesFromEnd(t *testing.T) {
	graphs := map[string]*graph.CSR{
		"hub":    forward(t, append(hubEdges(900), randomEdges(900, 7000, 5)...)),
		"sparse": forward(t, randomEdges(5000, 9000, 11)),
		"clique": forward(t, append(clique(120), randomEdges(400, 2000, 3)...)),
	}
	for name, g := range graphs {
		bm := refBitmapOffsets(g, refBitmapRatio(g))
		n := g.NumRows()
		least := int64(0)
		for r := range n {
			least = max(least, rangeBytes(g, bm, r, r+1))
		}
		whole := rangeBytes(g, bm, 0, n)
		for _, area := range []int64{least, least + 777, whole / 13, whole / 5, whole / 2, whole} {
			if area < least {
				continue
			}
			bounds, err := cutRowRanges(g, bm, area)
			if err != nil {
				t.Fatalf("%s area %d: %v", name, area, err)
			}
			if bounds[0] != 0 || bounds[len(bounds)-1] != n {
				t.Fatalf("%s area %d: bounds from %d to %d, want 0 to %d", name, area, bounds[0], bounds[len(bounds)-1], n)
			}
			for k := 0; k+1 < len(bounds); k++ {
				a, b := bounds[k], bounds[k+1]
				if b <= a || rangeBytes(g, bm, a, b) > area {
					t.Fatalf("%s area %d: range %d is rows [%d, %d) of %d bytes", name, area, k, a, b, rangeBytes(g, bm, a, b))
				}
				if k > 0 && rangeBytes(g, bm, a-1, b) <= area {
					t.Fatalf("%s area %d: range %d [%d, %d) could take row %d", name, area, k, a, b, a-1)
				}
			}
			front := cutRows(g, area, func(a, b int64) int64 { return rangeBytes(g, bm, a, b) })
			if len(bounds) != len(front) {
				t.Fatalf("%s area %d: %d ranges from the end, %d from the first row", name, area, len(bounds)-1, len(front)-1)
			}
		}
	}
	if _, err := cutRowRanges(graphs["hub"], refBitmapOffsets(graphs["hub"], 0), 100); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("an area below a row: %v, want out of memory", err)
	}
}
