package worker

import (
	"context"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// aheadCounter records, for each subtask it counts, its blocks and those
// of the subtasks it was told come next.
type aheadCounter struct {
	mu    sync.Mutex
	seen  [][3]*graph.CSR
	ahead [][][3]*graph.CSR
}

func (c *aheadCounter) Name() string { return "ahead" }
func (c *aheadCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, [3]*graph.CSR{t.IJ, t.IK, t.JK})
	var next [][3]*graph.CSR
	for _, a := range t.Ahead {
		if a.Ahead != nil {
			return kernels.Result{}, context.Canceled // nested lists are never handed on
		}
		next = append(next, [3]*graph.CSR{a.IJ, a.IK, a.JK})
	}
	c.ahead = append(c.ahead, next)
	n, err := kernels.Reference(kernels.Subtask{IJ: t.IJ, IK: t.IK, JK: t.JK, Clip: t.Clip, TailOffset: t.TailOffset})
	return kernels.Result{Triangles: n}, err
}

// With one slot, the subtasks a counter is told come next are the ones it
// then counts, in order (at most Prefetch of them), and the count is
// exact. Whether a subtask's blocks are loaded in time to be told depends
// on the prefetcher's pace, so a run in which none was is tried again.
func TestRunHandsSubtasksAhead(t *testing.T) {
	fwd := testForward(t, 9, 2)
	want := referenceCount(t, fwd)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	for try := 0; ; try++ {
		as := assignments("j", "", part.Subtasks())
		conn := newFakeConn(as)
		c := &aheadCounter{}
		slots := cpuSlots(1, "merge")
		slots[0].Device.Kind = "gpu" // only a device's counter is told what comes next
		slots[0].NewCounter = func(string) (kernels.Counter, error) { return c, nil }
		cfg := testConfig(t, conn, slots, PartitionSource{Part: part})
		cfg.Prefetch = 4
		runWorker(t, cfg)
		if got := sumResults(t, conn.check(t, as)); got != want {
			t.Fatalf("worker counted %d, whole graph %d", got, want)
		}
		some := false
		for x, next := range c.ahead {
			if len(next) > cfg.Prefetch {
				t.Fatalf("subtask %d: %d ahead, prefetch %d", x, len(next), cfg.Prefetch)
			}
			for n, b := range next {
				if x+1+n >= len(c.seen) || c.seen[x+1+n] != b {
					t.Fatalf("subtask %d: ahead[%d] is not the subtask counted %d later", x, n, n+1)
				}
			}
			some = some || len(next) > 0
		}
		if some {
			return
		}
		if try == 4 {
			t.Fatal("in five runs no subtask was told what comes next")
		}
	}
}

// A CPU slot's counter, which has no device memory to fill, is told of
// no subtasks ahead: listing them cost a CPU worker more than the small
// subtasks' counts.
func TestRunTellsACPUCounterNothingAhead(t *testing.T) {
	fwd := testForward(t, 9, 2)
	want := referenceCount(t, fwd)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	as := assignments("j", "", part.Subtasks())
	conn := newFakeConn(as)
	c := &aheadCounter{}
	slots := cpuSlots(1, "merge")
	slots[0].NewCounter = func(string) (kernels.Counter, error) { return c, nil }
	cfg := testConfig(t, conn, slots, PartitionSource{Part: part})
	cfg.Prefetch = 4
	runWorker(t, cfg)
	if got := sumResults(t, conn.check(t, as)); got != want {
		t.Fatalf("worker counted %d, whole graph %d", got, want)
	}
	for x, next := range c.ahead {
		if len(next) > 0 {
			t.Fatalf("subtask %d of a CPU slot: told of %d ahead", x, len(next))
		}
	}
}
