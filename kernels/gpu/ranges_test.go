package gpu

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
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
		whole := RangesBytes(g.NumRows(), g.NumEdges())
		var longest int64
		for r := int64(0); r < g.NumRows(); r++ {
			longest = max(longest, int64(g.Offsets[r+1]-g.Offsets[r]))
		}
		least := allocBytes(RangesBytes(1, longest)) // in whole granules
		prev := 0
		areas := []int64{whole, whole / 2, whole / 5, whole / 20, least + 4096, least}
		slices.Sort(areas)
		slices.Reverse(areas)
		for _, area := range slices.Compact(areas) {
			if area < least {
				continue
			}
			// The area the counter leaves: limit - used - limit/64.
			limit := uint64((area+base)*RangesSpare/(RangesSpare-1)) + 64
			lib, err := Open(Options{Path: path, MemLimit: limit})
			if err != nil {
				t.Fatal(err)
			}
			c := autoCounter(t, lib)
			before, _ := c.MemUsage()
			res, st, err := c.CountInRanges(ctx, g)
			if err != nil {
				t.Fatalf("%s area %d: %v", name, area, err)
			}
			if res.Triangles != want {
				t.Fatalf("%s area %d: %d triangles in %d ranges, the reference counts %d", name, area, res.Triangles, st.Ranges, want)
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
		}
		if g.NumEdges() > 1000 && prev < 10 {
			t.Fatalf("%s: the least area makes %d ranges", name, prev)
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
		if _, _, err := c.CountInRanges(ctx, g); !c.DoesNotFit(err) {
			t.Fatalf("%s: below the longest row: %v, want out of memory", name, err)
		}
	}
}

// TestCountInRangesRefusesMalformed: a row out of order, a column beyond
// the vertices, or offsets that decrease make an error, never a count,
// whatever range they fall in.
func TestCountInRangesRefusesMalformed(t *testing.T) { forLibs(t, countInRangesRefusesMalformed) }

func countInRangesRefusesMalformed(t *testing.T, path string) {
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
			for _, area := range []int64{RangesBytes(g.NumRows(), g.NumEdges()), RangesBytes(g.NumRows(), g.NumEdges()) / 8} {
				limit := uint64((area+base)*RangesSpare/(RangesSpare-1)) + 64
				lib, err := Open(Options{Path: path, MemLimit: limit})
				if err != nil {
					t.Fatal(err)
				}
				res, _, err := autoCounter(t, lib).CountInRanges(ctx, b)
				if err == nil || errors.Is(err, ErrOutOfMemory) {
					t.Fatalf("%s at row %d, area %d: %d triangles, err %v; want a refusal", what, r, area, res.Triangles, err)
				}
			}
		}
	}
}
