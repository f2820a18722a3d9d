package gpu

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/kernels"
)

// leastBytes is, independently of the counter, the least context memory
// with which every subtask can be counted: for each subtask the smaller of
// its three distinct blocks with the context, and the largest over rows r
// with edges in both IJ and IK of the context, JK and that row of IJ and IK
// (one block when IJ is IK).
func leastBytes(ts []kernels.Subtask) int64 {
	var least int64
	round := func(n int64) int64 { return (max(n, 16) + 255) / 256 * 256 }
	block := func(rows, edges int64) int64 { return round((rows+1)*8) + round(max(edges, 1)*4) }
	for _, t := range ts {
		var rows int64
		for r := int64(0); r < t.IJ.NumRows(); r++ {
			dij, dik := int64(len(t.IJ.Row(r))), int64(len(t.IK.Row(r)))
			if dij == 0 || dik == 0 {
				continue
			}
			need := 256 + block(t.JK.NumRows(), t.JK.NumEdges()) + block(1, dij)
			if t.IK != t.IJ {
				need += block(1, dik)
			}
			rows = max(rows, need)
		}
		whole := 256 + block(t.IJ.NumRows(), t.IJ.NumEdges())
		if t.IK != t.IJ {
			whole += block(t.IK.NumRows(), t.IK.NumEdges())
		}
		if t.JK != t.IJ && t.JK != t.IK {
			whole += block(t.JK.NumRows(), t.JK.NumEdges())
		}
		least = max(least, min(whole, rows))
	}
	return least
}

// Every cap from the least that fits up counts every subtask exactly (the
// counter releases idle slots and counts subtasks that do not fit in row
// ranges); below it the error says how much is needed.
func TestCountUnderMemoryCaps(t *testing.T) {
	good, _ := refLibs(t)
	n, m, kernelList, steps := 800, 6000, []string{"auto"}, []int64{0, 300}
	if testlong.Enabled() {
		n, m, kernelList, steps = 3000, 30000, []string{"auto", "polak"}, []int64{0, 300, 1000, 5000, 20000}
	}
	g := forward(t, append(hubEdges(n), randomEdges(n, m, 11)...))
	for _, p := range []int{1, 2, 3} {
		for _, scheme := range []string{"hash", "range"} {
			ts := partitioned(g, p, scheme)
			var want uint64
			var full int64 = 256
			for _, s := range ts {
				want += mustReference(t, s)
			}
			for _, b := range []*graph.CSR{g} {
				full += BlockBytes(b.NumRows(), b.NumEdges()) * 3
			}
			least := leastBytes(ts)
			limits := []int64{full, full * 4}
			for _, d := range steps {
				limits = append(limits, least+d)
			}
			for _, limit := range limits {
				name := fmt.Sprintf("P=%d %s limit %d", p, scheme, limit)
				lib, err := Open(Options{Path: good, MemLimit: uint64(limit)})
				if err != nil {
					t.Fatal(err)
				}
				for _, kernel := range kernelList {
					c, err := lib.NewCounter(kernel)
					if err != nil {
						t.Fatal(err)
					}
					var got uint64
					for _, s := range ts {
						res, err := c.Count(t.Context(), s)
						if err != nil {
							t.Fatalf("%s %s: %v", name, kernel, err)
						}
						got += res.Triangles
					}
					st := c.DeviceStats()
					c.Close()
					if got != want {
						t.Errorf("%s %s: %d triangles, want %d", name, kernel, got, want)
					}
					if st.PeakBytes > uint64(limit) || st.PeakBytes == 0 || st.CopiedBytes == 0 {
						t.Errorf("%s %s: stats %+v", name, kernel, st)
					}
				}
			}
			// One byte less than the least: some subtask cannot be counted,
			// and the error gives the bytes it needs.
			lib, err := Open(Options{Path: good, MemLimit: uint64(least - 1)})
			if err != nil {
				t.Fatal(err)
			}
			c, err := lib.NewCounter("auto")
			if err != nil {
				t.Fatal(err)
			}
			var failed error
			for _, s := range ts {
				if _, err := c.Count(t.Context(), s); err != nil {
					failed = err
					break
				}
			}
			c.Close()
			if !errors.Is(failed, ErrOutOfMemory) || !strings.Contains(failed.Error(), fmt.Sprintf("needs at least %d bytes", least)) {
				t.Errorf("P=%d %s limit %d: %v, want out of memory needing %d bytes", p, scheme, least-1, failed, least)
			}
		}
	}
}

// The memory accounting of the Go side matches the library's: a context
// holding three blocks uses exactly their BlockBytes and ContextBytes.
func TestBlockBytesMatchLibrary(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	g := forward(t, hubEdges(500))
	ts := partitioned(g, 2, "hash")
	for _, s := range ts[:4] {
		c, err := lib.NewCounter("polak")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Count(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		used, _ := c.MemUsage()
		want := int64(ContextBytes)
		seen := map[*graph.CSR]bool{}
		for _, b := range []*graph.CSR{s.IJ, s.IK, s.JK} {
			if !seen[b] {
				seen[b] = true
				want += BlockBytes(b.NumRows(), b.NumEdges())
			}
		}
		c.Close()
		if int64(used) != want {
			t.Errorf("library uses %d bytes, Go accounts %d", used, want)
		}
	}
}
