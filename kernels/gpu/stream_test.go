package gpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/kernels"
)

// A counter streaming rows counts every subtask exactly at every cap from
// the least that fits up: subtasks whose ranges fit beside JK stream, the
// others fall back to the three blocks resident or their row ranges.
//
// With $TRIGRID_CUDA_LIB set these tests run on the GPU as well.
func TestRowStreamingUnderMemoryCaps(t *testing.T) {
	forLibs(t, rowStreamingUnderMemoryCaps)
}

// forLibs runs test with the reference library and, when
// $TRIGRID_CUDA_LIB is set, with the real one.
func forLibs(t *testing.T, test func(t *testing.T, lib string)) {
	good, _ := refLibs(t)
	libs := []string{good}
	if dev := os.Getenv(EnvLibrary); dev != "" {
		libs = append(libs, dev)
	}
	for _, path := range libs {
		t.Run(filepath.Base(path), func(t *testing.T) { test(t, path) })
	}
}

func rowStreamingUnderMemoryCaps(t *testing.T, good string) {
	n, m, steps := 800, 6000, []int64{0, 300, 3000}
	if testlong.Enabled() {
		n, m, steps = 3000, 30000, []int64{0, 300, 1000, 5000, 20000, 60000}
	}
	g := forward(t, append(hubEdges(n), randomEdges(n, m, 13)...))
	for _, p := range []int{1, 2, 3, 4} {
		for _, scheme := range []string{"hash", "range"} {
			ts := partitioned(g, p, scheme)
			var want uint64
			for _, s := range ts {
				want += mustReference(t, s)
			}
			full := int64(256) + 3*BlockBytes(g.NumRows(), g.NumEdges())
			least := leastBytes(ts)
			limits := []int64{full, 4 * full}
			for _, d := range steps {
				limits = append(limits, least+d)
			}
			streamedAny := false
			for _, limit := range limits {
				name := fmt.Sprintf("P=%d %s limit %d", p, scheme, limit)
				c := streamingCounter(t, good, uint64(limit))
				var got uint64
				for i, s := range ts {
					s.Ahead = ts[i+1 : min(len(ts), i+4)]
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
				if st.PeakBytes > uint64(limit) || st.PeakBytes == 0 {
					t.Errorf("%s: stats %+v", name, st)
				}
				if st.Streamed > 0 {
					streamedAny = true
					if st.Ranges < st.Streamed || st.CopiedBytes == 0 {
						t.Errorf("%s: %d subtasks streamed in %d ranges, %d bytes copied", name, st.Streamed, st.Ranges, st.CopiedBytes)
					}
				}
			}
			if !streamedAny {
				t.Errorf("P=%d %s: no subtask streamed at any cap", p, scheme)
			}
		}
	}
}

// Streaming needs room for JK and two sets of range buffers: with a cap
// that holds JK but not a range beside it, the subtask falls back to the
// three blocks resident or their ranges, exactly.
func TestRowStreamingFallsBack(t *testing.T) { forLibs(t, rowStreamingFallsBack) }

func rowStreamingFallsBack(t *testing.T, good string) {
	g := forward(t, append(hubEdges(600), randomEdges(600, 5000, 5)...))
	ts := partitioned(g, 2, "hash")
	var want uint64
	for _, s := range ts {
		want += mustReference(t, s)
	}
	least := leastBytes(ts)
	c := streamingCounter(t, good, uint64(least))
	defer c.Close()
	var got uint64
	for _, s := range ts {
		res, err := c.Count(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		got += res.Triangles
	}
	if got != want {
		t.Errorf("%d triangles, want %d", got, want)
	}
}

// A malformed IJ or IK streamed in ranges is refused with an error naming
// the block and the rows, never counted; the counter still counts after.
func TestRowStreamingRefusesMalformed(t *testing.T) { forLibs(t, rowStreamingRefusesMalformed) }

// Every kernel refuses a range broken in each way, in IJ and in IK, and
// the counter then counts the next subtask exactly.
func rowStreamingRefusesMalformed(t *testing.T, good string) {
	g := forward(t, append(hubEdges(300), randomEdges(300, 3000, 7)...))
	ts := partitioned(g, 2, "hash")
	want := mustReference(t, ts[0])
	breaks := map[string]func(b *graph.CSR){
		"order": func(b *graph.CSR) { // the first two columns of a row swapped
			for r := range b.NumRows() {
				if row := b.Row(r); len(row) >= 2 {
					row[0], row[1] = row[1], row[0]
					return
				}
			}
		},
		"column": func(b *graph.CSR) { // a row's last column past the block's columns
			for r := range b.NumRows() {
				if row := b.Row(r); len(row) >= 1 {
					row[len(row)-1] = uint32(b.NCols) + 7
					return
				}
			}
		},
	}
	for _, kernel := range []string{"auto", "polak", "wetric", "trust", "trix", "grouptc"} {
		c := streamingCounterWith(t, good, 0, kernel)
		for name, brk := range breaks {
			for _, role := range []string{"ij", "ik"} {
				s := ts[1] // IJ is not IK
				if s.IJ == s.IK {
					t.Fatal("want a subtask with IJ and IK distinct")
				}
				if role == "ij" {
					s.IJ = cloneCSR(s.IJ)
					brk(s.IJ)
				} else {
					s.IK = cloneCSR(s.IK)
					brk(s.IK)
				}
				_, err := c.Count(t.Context(), s)
				if err == nil || !strings.Contains(err.Error(), "malformed "+role) || errors.Is(err, ErrOutOfMemory) {
					t.Errorf("%s: %s %s: %v, want an error naming it", kernel, role, name, err)
				}
				res, err := c.Count(t.Context(), ts[0])
				if err != nil || res.Triangles != want {
					t.Errorf("%s: after %s %s: %d, %v; want %d", kernel, role, name, res.Triangles, err, want)
				}
			}
		}
		c.Close()
	}
}

func cloneCSR(b *graph.CSR) *graph.CSR {
	return &graph.CSR{Offsets: append([]uint64(nil), b.Offsets...), Cols: append([]uint32(nil), b.Cols...), NCols: b.NCols}
}

// Subtasks sharing a JK are counted together (one call for the next ones
// of t.Ahead that share it); each subtask's result is its own, whether it
// was counted when asked or ahead, and results counted ahead and never
// asked for do not disturb later ones.
func TestRowStreamingBatches(t *testing.T) { forLibs(t, rowStreamingBatches) }

func rowStreamingBatches(t *testing.T, good string) {
	g := forward(t, append(hubEdges(900), randomEdges(900, 9000, 21)...))
	for _, p := range []int{3, 4} {
		ts := partitioned(g, p, "hash")
		// Group by JK: subtask index i*p*p + j*p + k.
		var order []kernels.Subtask
		for j := range p {
			for k := range p {
				for i := range p {
					order = append(order, ts[i*p*p+j*p+k])
				}
			}
		}
		c := streamingCounter(t, good, 0)
		for i, s := range order {
			if i%(2*p) == p+1 { // skip one subtask now and then: counted ahead, never asked for
				continue
			}
			s.Ahead = order[i+1 : min(len(order), i+1+2*p)]
			res, err := c.Count(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			if want := mustReference(t, s); res.Triangles != want {
				t.Errorf("P=%d subtask %d: %d triangles, want %d", p, i, res.Triangles, want)
			}
		}
		st := c.DeviceStats()
		if len(c.aheadResults) == 0 {
			t.Errorf("P=%d: no result counted ahead and left unasked", p)
		}
		c.Close()
		if st.Streamed == 0 || st.Uploads > p*p+1 {
			t.Errorf("P=%d: %d streamed, %d uploads (JK once per group: want at most %d)", p, st.Streamed, st.Uploads, p*p+1)
		}
	}
}

// streamingCounter is an auto counter streaming rows, with the library at
// path capped at limit bytes (0: uncapped).
func streamingCounter(t *testing.T, path string, limit uint64) *Counter {
	t.Helper()
	return streamingCounterWith(t, path, limit, "auto")
}

func streamingCounterWith(t *testing.T, path string, limit uint64, kernel string) *Counter {
	t.Helper()
	lib, err := Open(Options{Path: path, MemLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	c, err := lib.NewCounter(kernel)
	if err != nil {
		t.Fatal(err)
	}
	c.SetRowStreaming(true)
	return c
}
