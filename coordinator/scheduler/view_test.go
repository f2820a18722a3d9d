package scheduler

import (
	"fmt"
	"testing"

	"github.com/trigrid/trigrid/api"
)

// The views carry what a dashboard shows of an attempt: the tick it was
// handed out, whether it was a speculative copy, whether its subtask was
// disputed, and the tick a worker joined.
func TestViewTicksAndMarks(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LeaseTicks = 1000; c.SpeculateMinTicks = 3 })
	tasks := testTasks(2)
	h.add(JobSpec{ID: "j", Subtasks: tasks})
	h.tick(2)
	h.join("a")
	h.tick(3)
	h.join("b")
	if h.s.Now() != 5 {
		t.Fatalf("now %d, want 5", h.s.Now())
	}
	ws := h.s.Workers()
	if len(ws) != 2 || ws[0].Joined != 2 || ws[1].Joined != 5 {
		t.Fatalf("workers %+v", ws)
	}
	h.join("a") // a reconnect without leaving keeps the join tick
	if ws := h.s.Workers(); ws[0].Joined != 2 {
		t.Fatalf("rejoined %+v", ws[0])
	}
	slow := assigned(h.pull("a", 1), "a")[0]
	b := assigned(h.pull("b", 1), "b")
	for len(b) > 0 {
		h.tick(1)
		x := b[0]
		b = assigned(append(h.ok(x, "b", truth(x.Ref.Index)), h.pull("b", 1)...), "b")
		if len(b) > 0 && b[0].Ref == slow.Ref {
			break
		}
	}
	var spec []api.Assignment
	for i := 0; i < 50 && len(spec) == 0; i++ {
		spec = append(b, assigned(h.tick(1), "b")...)
	}
	if len(spec) != 1 {
		t.Fatalf("no speculative copy")
	}
	sts, _ := h.s.Subtasks("j")
	tries := sts[slow.Ref.Index].Tries
	if len(tries) != 2 || tries[0].Started != 5 || tries[0].Speculative || !tries[1].Speculative ||
		tries[1].Started <= tries[0].Started || tries[1].Started > h.s.Now() {
		t.Fatalf("tries %+v at tick %d", tries, h.s.Now())
	}
	for _, st := range sts {
		if st.Disputed {
			t.Fatalf("undisputed subtask marked: %+v", st)
		}
	}
	// Under Verify two counts that disagree mark the subtask disputed.
	h2 := newHarness(t, func(c *Config) { c.LeaseTicks = 1000; c.Verify = true })
	h2.add(JobSpec{ID: "v", Subtasks: tasks[:1]})
	h2.join("a", "b")
	x := assigned(h2.pull("a", 1), "a")[0]
	y := assigned(h2.pull("b", 1), "b")[0]
	h2.ok(x, "a", 7)
	if sts, _ := h2.s.Subtasks("v"); sts[0].Disputed {
		t.Fatalf("one count marked disputed: %+v", sts[0])
	}
	h2.ok(y, "b", 8)
	if sts, _ := h2.s.Subtasks("v"); !sts[0].Disputed {
		t.Fatalf("disputed subtask not marked: %+v", sts[0])
	}
}

// Departed remembers the latest workers that left, with why, until they
// join again, and no more than maxDeparted of them.
func TestViewDeparted(t *testing.T) {
	h := newHarness(t)
	h.join("a", "b")
	h.tick(4)
	h.rec(h.s.WorkerLeft("a", "stream ended"))
	d := h.s.Departed()
	if len(d) != 1 || d[0].Hello.Worker != "a" || d[0].Left != 4 || d[0].Joined != 0 || d[0].Reason != "stream ended" {
		t.Fatalf("departed %+v", d)
	}
	if ws := h.s.Workers(); len(ws) != 1 || ws[0].Hello.Worker != "b" {
		t.Fatalf("workers %+v", ws)
	}
	h.join("a")
	if d := h.s.Departed(); len(d) != 0 {
		t.Fatalf("rejoined worker still departed: %+v", d)
	}
	for i := range maxDeparted + 5 {
		id := api.WorkerID(fmt.Sprintf("w%d", i))
		h.join(id)
		h.rec(h.s.WorkerLeft(id, "gone"))
	}
	d = h.s.Departed()
	if len(d) != maxDeparted || d[0].Hello.Worker != "w5" || d[len(d)-1].Hello.Worker != api.WorkerID(fmt.Sprintf("w%d", maxDeparted+4)) {
		t.Fatalf("%d departed, first %s", len(d), d[0].Hello.Worker)
	}
}
