package gpu

import (
	"context"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
)

// Blocks staged ahead of their counts are pinned, within the limit and
// without giving up a pin; the counts that then read them are exact and
// pin nothing on their way, each count's upload time is its wait for the
// blocks less the page-locking (they add up to the counter's stall), and
// a block staged once the counter closed is not pinned.
func TestStageAheadPinsAndCountsExactly(t *testing.T) {
	g := forward(t, append(hubEdges(500), randomEdges(500, 4000, 9)...))
	ts := partitioned(g, 3, "hash")
	lib := openRef(t, Options{})
	c, err := lib.NewCounter("auto")
	if err != nil {
		t.Fatal(err)
	}
	staged := map[*graph.CSR]bool{}
	for _, s := range ts {
		for _, b := range []*graph.CSR{s.IJ, s.IK, s.JK} {
			staged[b] = true
		}
		c.Stage(s.IJ)
		c.Stage(s.IK)
		c.Stage(s.JK)
	}
	ps := lib.pins.Stats()
	if ps.Blocks == 0 || ps.Blocks > len(staged) || ps.Held > ps.Limit {
		t.Fatalf("after staging %d blocks: %s", len(staged), ps)
	}
	stall0 := c.DeviceStats().Stalled
	var upload time.Duration
	for _, s := range ts {
		r, err := c.Count(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if want := mustReference(t, s); r.Triangles != want {
			t.Fatalf("counted %d, the reference %d", r.Triangles, want)
		}
		upload += r.Upload
	}
	st := c.DeviceStats()
	if pin := c.slots.Stats().Pinning; upload+pin != st.Stalled-stall0 {
		t.Errorf("uploads %v + pinning %v, stall %v: they do not add up", upload, pin, st.Stalled-stall0)
	}
	if got := lib.pins.Stats().Made; got != ps.Made {
		t.Errorf("the counts pinned %d blocks more, all were staged", got-ps.Made)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c.Stage(ts[0].IJ)
	if got := lib.pins.Stats(); got.Blocks != 0 {
		t.Errorf("after the last counter closed, staging pinned: %s", got)
	}
}
