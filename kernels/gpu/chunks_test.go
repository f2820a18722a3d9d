package gpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// The whole graph as one subtask, and the subtasks of P = 2 and 3, under
// caps that leave no room for JK beside its ranges: JK is counted in
// chunks of its rows, every chunk's share from one row up, and every count
// equals the reference's.
func TestCountInChunks(t *testing.T) { forLibs(t, countInChunks) }

func countInChunks(t *testing.T, good string) {
	g := forward(t, append(hubEdges(1500), randomEdges(1500, 15000, 17)...))
	for _, p := range []int{1, 2, 3} {
		ts := partitioned(g, p, "hash")
		var want uint64
		for _, s := range ts {
			want += mustReference(t, s)
		}
		var jk int64
		for _, s := range ts {
			jk = max(jk, BlockBytes(s.JK.NumRows(), s.JK.NumEdges()))
		}
		for _, div := range []int64{3, 8} {
			limit := max(ContextBytes+int64(float64(jk)/maxChunkShare)/div, 16<<10)
			for _, share := range []float64{0.02, 0.1, ChunkShare} {
				name := fmt.Sprintf("P=%d limit %d share %.2f", p, limit, share)
				c := streamingCounter(t, good, uint64(limit))
				c.setChunkShare(share)
				var got uint64
				for i, s := range ts {
					s.Ahead = ts[i+1:]
					res, err := c.Count(t.Context(), s)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					got += res.Triangles
				}
				st := c.DeviceStats()
				c.Close()
				if got != want {
					t.Errorf("%s: %d triangles, want %d", name, got, want)
				}
				if st.PeakBytes > uint64(limit) {
					t.Errorf("%s: peak %d bytes over the limit", name, st.PeakBytes)
				}
				// Chunks of a share of the room: at least room / chunk of
				// them over the whole graph's JK.
				if least := int(float64(jk) / (share * float64(limit))); p == 1 && st.Streamed < least {
					t.Errorf("%s: %d chunks streamed, want at least %d", name, st.Streamed, least)
				}
			}
		}
	}
}

// ChunkCuts covers JK's rows with chunks that fit the target, each as
// large as fits, a row larger than the target alone.
func TestChunkCuts(t *testing.T) {
	g := forward(t, append(hubEdges(400), randomEdges(400, 4000, 3)...))
	for _, target := range []int64{1, 600, 2048, 10000, 1 << 30} {
		cuts := ChunkCuts(g, target)
		if cuts[0] != 0 || cuts[len(cuts)-1] != g.NumRows() {
			t.Fatalf("target %d: cuts %v do not cover %d rows", target, cuts, g.NumRows())
		}
		for i := 0; i+1 < len(cuts); i++ {
			a, b := cuts[i], cuts[i+1]
			bytes := func(b int64) int64 { return BlockBytes(b-a, int64(g.Offsets[b]-g.Offsets[a])) }
			if b <= a || b-a > 1 && bytes(b) > target {
				t.Fatalf("target %d: chunk [%d, %d) takes %d bytes", target, a, b, bytes(b))
			}
			if b < g.NumRows() && bytes(b+1) <= target {
				t.Fatalf("target %d: chunk [%d, %d) could take one more row", target, a, b)
			}
		}
	}
}

// A chunk's part of IJ is IJ's columns in [a, b) rebased, over the rows up
// to the last that has one; with check, a malformed row of IJ anywhere is
// an error naming it.
func TestChunkBuild(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	g := forward(t, append(hubEdges(300), randomEdges(300, 3000, 9)...))
	ij := hashBlock(g, 2, 0, 1) // not upper: rows past a chunk may reach it
	cb := &chunkBuf{lib: lib}
	defer cb.release()
	cuts := ChunkCuts(hashBlock(g, 2, 1, 0), 700)
	var total int64
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		got, err := cb.build(ij, a, b, i == 0)
		if err != nil {
			t.Fatal(err)
		}
		want := &graph.CSR{Offsets: []uint64{0}, NCols: b - a}
		last := int64(-1)
		for r := range ij.NumRows() {
			for _, v := range ij.Row(r) {
				if int64(v) >= a && int64(v) < b {
					want.Cols = append(want.Cols, v-uint32(a))
					last = r
				}
			}
			want.Offsets = append(want.Offsets, uint64(len(want.Cols)))
		}
		want.Offsets = want.Offsets[:last+2]
		if fmt.Sprint(got.Offsets, got.Cols, got.NCols) != fmt.Sprint(want.Offsets, want.Cols, want.NCols) {
			t.Fatalf("chunk [%d, %d): got %v %v, want %v %v", a, b, got.Offsets, got.Cols, want.Offsets, want.Cols)
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("chunk [%d, %d): %v", a, b, err)
		}
		total += got.NumEdges()
	}
	if total != ij.NumEdges() {
		t.Fatalf("the chunks hold %d edges, ij %d", total, ij.NumEdges())
	}
	for name, brk := range map[string]func(b *graph.CSR) int64{
		"order": func(b *graph.CSR) int64 {
			for r := b.NumRows() - 1; r >= 0; r-- {
				if row := b.Row(r); len(row) >= 2 {
					row[0], row[1] = row[1], row[0]
					return r
				}
			}
			return -1
		},
		"column": func(b *graph.CSR) int64 { // past every chunk: no chunk would read it
			for r := b.NumRows() - 1; r >= 0; r-- {
				if row := b.Row(r); len(row) >= 1 {
					row[len(row)-1] = uint32(b.NCols) + 7
					return r
				}
			}
			return -1
		},
	} {
		bad := cloneCSR(ij)
		r := brk(bad)
		_, err := cb.build(bad, 0, 1, true)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("row %d of ij is malformed", r)) {
			t.Errorf("%s: %v, want an error naming row %d", name, err, r)
		}
	}
}

// In chunks as well, a malformed IJ is refused, never counted, and the
// counter counts the next subtask exactly.
func TestCountInChunksRefusesMalformed(t *testing.T) { forLibs(t, countInChunksRefusesMalformed) }

func countInChunksRefusesMalformed(t *testing.T, good string) {
	g := forward(t, append(hubEdges(600), randomEdges(600, 6000, 23)...))
	whole := kernels.Whole(g)
	want := mustReference(t, whole)
	limit := ContextBytes + int64(float64(BlockBytes(g.NumRows(), g.NumEdges()))/maxChunkShare)/4
	c := streamingCounter(t, good, uint64(limit))
	defer c.Close()
	bad := cloneCSR(g)
	bad.Cols[len(bad.Cols)-1] = uint32(bad.NCols) + 1
	if _, err := c.Count(t.Context(), kernels.Subtask{IJ: bad, IK: bad, JK: bad}); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("a column past the graph: %v, want an error", err)
	}
	for _, role := range []string{"ik", "jk"} {
		bad := cloneCSR(g)
		bad.Offsets[len(bad.Offsets)/2] = uint64(len(bad.Cols)) + 3 // past the columns
		s := kernels.Subtask{IJ: g, IK: g, JK: g}
		if role == "ik" {
			s.IK = bad
		} else {
			s.JK = bad
		}
		if _, err := c.Count(t.Context(), s); err == nil || !strings.Contains(err.Error(), "malformed") && !strings.Contains(err.Error(), "offsets") {
			t.Errorf("%s offsets past its columns: %v, want an error", role, err)
		}
	}
	res, err := c.Count(t.Context(), whole)
	if err != nil || res.Triangles != want {
		t.Errorf("after: %d, %v; want %d", res.Triangles, err, want)
	}
	if st := c.DeviceStats(); st.Streamed < 2 {
		t.Errorf("%d chunks streamed, want the whole graph in chunks", st.Streamed)
	}
}

// badOffset finds the first row whose offsets the chunks could not slice
// by.
func TestBadOffset(t *testing.T) {
	cols := make([]uint32, 5)
	for _, c := range []struct {
		off  []uint64
		want int64
	}{
		{nil, -1},
		{[]uint64{0}, -1},
		{[]uint64{0, 2, 2, 5}, -1},
		{[]uint64{1, 2, 5}, 0},
		{[]uint64{0, 3, 2, 5}, 1},
		{[]uint64{0, 2, 6}, 1},
		{[]uint64{0, 2, 5, 9}, 2},
	} {
		if got := badOffset(&graph.CSR{Offsets: c.off, Cols: cols}); got != c.want {
			t.Errorf("%v: %d, want %d", c.off, got, c.want)
		}
	}
}
