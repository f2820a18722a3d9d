package gpu

import (
	"testing"

	"github.com/trigrid/trigrid/kernels"
)

// Subtasks whose blocks are resident are counted in batches with the one
// asked for: every subtask's result is its own whatever order it is asked
// in, each kernel in turn, and results counted ahead and never asked for
// do not disturb later counts.
func TestCountBatchResident(t *testing.T) { forLibs(t, countBatchResident) }

func countBatchResident(t *testing.T, lib string) {
	g := forward(t, append(hubEdges(700), randomEdges(700, 7000, 11)...))
	for _, p := range []int{2, 3} {
		ts := partitioned(g, p, "hash")
		want := make([]uint64, len(ts))
		for i, s := range ts {
			want[i] = mustReference(t, s)
		}
		for _, kernel := range []string{"auto", "polak", "wetric", "trust", "trix", "grouptc"} {
			c := streamingCounterWith(t, lib, 0, kernel)
			c.SetRowStreaming(false)
			// The first pass makes every block resident (p*p <= 16 slots).
			for i, s := range ts {
				res, err := c.Count(t.Context(), s)
				if err != nil || res.Triangles != want[i] {
					t.Fatalf("P=%d %s: subtask %d alone: %d, %v; want %d", p, kernel, i, res.Triangles, err, want[i])
				}
			}
			// Then each subtask with all the later ones ahead: the first
			// count runs them all in batches, the rest are served.
			batched := 0
			for i := range ts {
				s := ts[i]
				s.Ahead = ts[i+1:]
				res, err := c.Count(t.Context(), s)
				if err != nil || res.Triangles != want[i] {
					t.Errorf("P=%d %s: subtask %d with %d ahead: %d, %v; want %d", p, kernel, i, len(s.Ahead), res.Triangles, err, want[i])
				}
				batched = max(batched, len(c.aheadResults))
			}
			if batched == 0 {
				t.Errorf("P=%d %s: no subtask was counted ahead", p, kernel)
			}
			// Counted ahead and never asked for: a later pass in reverse is exact.
			s := ts[0]
			s.Ahead = ts[1:]
			if _, err := c.Count(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			for i := len(ts) - 1; i >= 0; i-- {
				r := ts[i]
				r.Ahead = []kernels.Subtask{ts[(i+1)%len(ts)]}
				res, err := c.Count(t.Context(), r)
				if err != nil || res.Triangles != want[i] {
					t.Errorf("P=%d %s: reverse, subtask %d: %d, %v; want %d", p, kernel, i, res.Triangles, err, want[i])
				}
			}
			c.Close()
		}
	}
}
