package scheduler

import "testing"

// A lapsed lease that fails its job cancels the worker's other attempts
// of that job while Tick is still going through the worker's attempts:
// Tick skips the cancelled ones.
func TestSchedulerLapseFailsJobMidTick(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LeaseTicks = 2; c.MaxAttempts = 1 })
	h.add(JobSpec{ID: "j", Subtasks: testTasks(2)})
	h.join("a")
	if n := len(assigned(h.pull("a", 3), "a")); n != 3 {
		t.Fatalf("%d assignments", n)
	}
	ds := h.tick(3)
	if _, ok := find(ds, DecideJobFailed); !ok {
		t.Fatalf("job did not fail: %+v", ds)
	}
	if ws := h.s.Workers(); len(ws) != 1 || ws[0].Running != 0 {
		t.Fatalf("workers %+v", ws)
	}
}
