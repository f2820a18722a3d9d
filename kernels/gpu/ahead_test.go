package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// The counter with the next subtasks known (Subtask.Ahead) counts exactly
// at every cap, uploads blocks ahead at some cap (pinned blocks, where
// memory allows), and uploads no more than without them; with every block
// pinnable, with nothing pinned, and with too little pinned memory for all
// blocks. The reference library reads a pending load's arrays only when it
// completes and refuses to unregister memory a pending load reads, so a
// pin given up too early shows as an error or a wrong count.
//
// With $TRIGRID_CUDA_LIB set it runs on the GPU as well.
func TestCountAhead(t *testing.T) {
	good, _ := refLibs(t)
	libs := []string{good}
	if dev := os.Getenv(EnvLibrary); dev != "" {
		libs = append(libs, dev)
	}
	for _, path := range libs {
		t.Run(filepath.Base(path), func(t *testing.T) { countAhead(t, path, path == good) })
	}
}

// countAhead runs TestCountAhead with the library at good; ref: it is the
// reference library, which pins every block it is asked to (the GPU's
// refuses a page pinned twice).
func countAhead(t *testing.T, good string, ref bool) {
	g := forward(t, append(hubEdges(600), randomEdges(600, 5000, 5)...))
	aheadAny := 0
	for _, p := range []int{2, 3} {
		ts := partitioned(g, p, "hash")
		var want uint64
		var total int64
		seen := map[*graph.CSR]bool{}
		for _, s := range ts {
			want += mustReference(t, s)
			for _, b := range []*graph.CSR{s.IJ, s.IK, s.JK} {
				if !seen[b] {
					seen[b] = true
					total += BlockBytes(b.NumRows(), b.NumEdges())
				}
			}
		}
		least := leastBytes(ts)
		for _, limit := range []int64{least, least + total/8, least + total/3, least + total/2, 2 * total} {
			for _, pin := range []int64{0, -1, 3 * total / 4 / 4} {
				uploads := map[bool]int{}
				for _, withAhead := range []bool{false, true} {
					name := fmt.Sprintf("P=%d limit %d pinned %d ahead %v", p, limit, pin, withAhead)
					lib, err := Open(Options{Path: good, MemLimit: uint64(limit), PinnedHost: pin})
					if err != nil {
						t.Fatal(err)
					}
					// Every array pinnable; on the GPU, arrays that share a
					// page with one pinned already are refused and uploaded
					// from pageable memory.
					pinAll(lib)
					c, err := lib.NewCounter("auto")
					if err != nil {
						t.Fatal(err)
					}
					var got uint64
					for x, s := range ts {
						if withAhead {
							s.Ahead = ts[x+1 : min(len(ts), x+1+2*p)]
						}
						res, err := c.Count(t.Context(), s)
						if err != nil {
							t.Fatalf("%s: subtask %d: %v", name, x, err)
						}
						got += res.Triangles
					}
					st := c.DeviceStats()
					c.Close()
					if got != want {
						t.Errorf("%s: %d triangles, want %d", name, got, want)
					}
					if st.PeakBytes > uint64(limit) {
						t.Errorf("%s: peak %d over the limit", name, st.PeakBytes)
					}
					if !withAhead && st.Ahead != 0 {
						t.Errorf("%s: %d uploads ahead with no subtask ahead", name, st.Ahead)
					}
					if withAhead && pin == 0 {
						aheadAny += st.Ahead
					}
					if pin < 0 && st.PinnedUploads != 0 || ref && pin == 0 && st.PinnedUploads == 0 {
						t.Errorf("%s: %d of %d uploads from pinned blocks", name, st.PinnedUploads, st.Uploads)
					}
					if held := lib.pins.Stats().Held; held != 0 {
						t.Errorf("%s: %d bytes still pinned after the last counter closed", name, held)
					}
					uploads[withAhead] = st.Uploads
				}
				if uploads[true] > uploads[false]+uploads[false]/10 {
					t.Errorf("P=%d limit %d pinned %d: %d uploads knowing the next subtasks, %d without",
						p, limit, pin, uploads[true], uploads[false])
				}
			}
		}
	}
	if aheadAny == 0 {
		t.Error("no block was uploaded ahead of its subtask at any limit")
	}
}
