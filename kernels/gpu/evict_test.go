package gpu

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

func TestPickVictim(t *testing.T) {
	for _, tc := range []struct {
		name string
		cs   []candidate
		want int
	}{
		{"none", nil, -1},
		{"one", []candidate{{slot: 3, next: 0, age: 9}}, 3},
		{"furthest next use", []candidate{{slot: 0, next: 1, age: 1}, {slot: 1, next: 4, age: 9}, {slot: 2, next: 2, age: 0}}, 1},
		{"never beats any use", []candidate{{slot: 0, next: 100, age: 1}, {slot: 5, next: never, age: 50}}, 5},
		{"equal next: oldest", []candidate{{slot: 0, next: never, age: 7}, {slot: 1, next: never, age: 3}, {slot: 2, next: never, age: 5}}, 1},
		{"empty slot (age 0) first among never", []candidate{{slot: 4, next: never, age: 2}, {slot: 6, next: never, age: 0}}, 6},
		{"equal: lowest slot", []candidate{{slot: 9, next: 2, age: 4}, {slot: 2, next: 2, age: 4}}, 2},
	} {
		if got := pickVictim(tc.cs); got != tc.want {
			t.Errorf("%s: pickVictim = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestNextUse(t *testing.T) {
	a, b, c, d := &graph.CSR{}, &graph.CSR{}, &graph.CSR{}, &graph.CSR{}
	ahead := []kernels.Subtask{{IJ: a, IK: a, JK: b}, {IJ: c, IK: b, JK: c}}
	for _, tc := range []struct {
		b    *graph.CSR
		want int
	}{{a, 0}, {b, 0}, {c, 1}, {d, never}} {
		if got := nextUse(ahead, tc.b); got != tc.want {
			t.Errorf("nextUse = %d, want %d", got, tc.want)
		}
	}
	if got := nextUse(nil, a); got != never {
		t.Errorf("nextUse(nil) = %d, want never", got)
	}
}

// unit blocks of one row and 62 edges take 512 bytes each (BlockBytes).
func unitRows(int) int64  { return 1 }
func unitEdges(int) int64 { return 62 }

func TestPlanUploads(t *testing.T) {
	const b = 512 // BlockBytes(1, 62)
	if BlockBytes(1, 62) != b {
		t.Fatalf("BlockBytes(1, 62) = %d", BlockBytes(1, 62))
	}
	copyB := CopyBytes(1, 62)
	for _, tc := range []struct {
		name     string
		seq      [][3]int
		capacity int64
		slots    int
		horizon  int
		want     int
	}{
		{"all fit", [][3]int{{0, 1, 2}, {0, 1, 2}, {2, 1, 0}}, 3 * b, 16, 0, 3},
		{"same block thrice", [][3]int{{7, 7, 7}}, b, 16, 0, 1},
		// Room for three: block 3 must evict 0 or 2 (1 is its subtask's).
		// LRU evicts 0, which the next subtask needs; the future-aware rule
		// evicts 2, needed last.
		{"lru", [][3]int{{0, 1, 2}, {1, 3, 3}, {0, 1, 3}, {2, 1, 3}}, 3 * b, 16, 0, 6},
		{"belady", [][3]int{{0, 1, 2}, {1, 3, 3}, {0, 1, 3}, {2, 1, 3}}, 3 * b, 16, 8, 5},
		{"slots bound it too", [][3]int{{0, 1, 2}, {3, 4, 5}, {0, 1, 2}}, 100 * b, 4, 8, 8},
	} {
		got := PlanUploads(tc.seq, unitRows, unitEdges, tc.capacity, tc.slots, tc.horizon)
		if got.Uploads != tc.want || got.Bytes != int64(tc.want)*copyB {
			t.Errorf("%s: %+v, want %d uploads of %d bytes", tc.name, got, tc.want, copyB)
		}
	}
}

// Knowing the future never uploads more than LRU, and the uploads never
// fall below the distinct blocks; on random sequences.
func TestPlanUploadsBeladyNotWorse(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		nb := 3 + r.IntN(12)
		seq := make([][3]int, 5+r.IntN(40))
		distinct := map[int]bool{}
		for i := range seq {
			for k := range 3 {
				seq[i][k] = r.IntN(nb)
				distinct[seq[i][k]] = true
			}
		}
		capacity := int64(3+r.IntN(6)) * 512
		lru := PlanUploads(seq, unitRows, unitEdges, capacity, 16, 0)
		opt := PlanUploads(seq, unitRows, unitEdges, capacity, 16, len(seq))
		if opt.Uploads > lru.Uploads || opt.Uploads < len(distinct) {
			t.Fatalf("trial %d: %d blocks, capacity %d: belady %d uploads, lru %d, distinct %d (%v)",
				trial, nb, capacity, opt.Uploads, lru.Uploads, len(distinct), seq)
		}
	}
}

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
					lib.pins.minBytes = 1
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
					if held := lib.pins.held; held != 0 {
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
