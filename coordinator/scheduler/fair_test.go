package scheduler

import (
	"testing"

	"github.com/trigrid/trigrid/api"
)

// fairRun plays a fresh cluster's first job of 64 subtasks on the fake
// clock: the workers join and each asks for three while there is no job
// (an idle worker's first pull), the job arrives, and every tick each
// worker, in join order, reports the oldest subtask it holds with its
// count and then asks for enough to hold window more. This is how a
// worker pulled before its pacer measured a round trip: its first pull
// waited for the job, which read as a long round trip, so after its first
// subtask it asked for the most it may hold. It returns the subtasks each
// worker counted and the ticks the job took; every count is checked
// against the subtasks' truth.
func fairRun(t *testing.T, cfg func(*Config), workers []api.WorkerID, window int) (map[api.WorkerID]int, int) {
	t.Helper()
	opts := []func(*Config){}
	if cfg != nil {
		opts = append(opts, cfg)
	}
	h := newHarness(t, opts...)
	h.join(workers...)
	held := map[api.WorkerID][]api.Assignment{}
	asked := map[api.WorkerID]int{} // asked for and not yet received
	take := func(ds []Decision) {
		for _, a := range assigned(ds, "") {
			for _, d := range ds {
				if d.Kind == DecideAssign && d.Ref == a.Ref && d.Attempt == a.Attempt {
					held[d.Worker] = append(held[d.Worker], a)
					asked[d.Worker]--
				}
			}
		}
	}
	for _, w := range workers {
		asked[w] += 3
		take(h.pull(w, 3))
	}
	tasks := testTasks(4)
	take(h.add(JobSpec{ID: "j", Subtasks: tasks}))
	counted := map[api.WorkerID]int{}
	var total uint64
	for tick := 1; tick <= 10*len(tasks); tick++ {
		for _, w := range workers {
			if len(held[w]) == 0 {
				continue
			}
			a := held[w][0]
			held[w] = held[w][1:]
			ds := h.ok(a, w, truth(a.Ref.Index))
			counted[w]++
			if d, ok := find(ds, DecideJobDone); ok {
				total = d.Total
			}
			take(ds)
			if total != 0 {
				if total != truthSum(len(tasks)) {
					t.Fatalf("job total %d, the subtasks' truths sum to %d", total, truthSum(len(tasks)))
				}
				return counted, tick
			}
			if n := window - len(held[w]) - asked[w]; n > 0 {
				asked[w] += n
				take(h.pull(w, n))
			}
		}
		take(h.tick(1))
	}
	t.Fatalf("the job did not end in %d ticks; counted %v", 10*len(tasks), counted)
	return nil, 0
}

// The first job of a fresh cluster spreads over its workers even when
// the first worker to report asks for far more than its share: each holds
// at most its part of the outstanding work, so the job ends in about
// 64/N ticks on N workers. Without the fair share (the old behaviour) the
// first worker to ask took 61 of the 64 subtasks.
func TestSchedulerFirstJobSpreads(t *testing.T) {
	for _, workers := range [][]api.WorkerID{{"a", "b"}, {"a", "b", "c", "d"}} {
		n := len(workers)
		counted, ticks := fairRun(t, nil, workers, 1+maxWindow)
		for _, w := range workers {
			if c := counted[w]; c < 64/n*3/4 || c > 64/n*5/4 {
				t.Errorf("%d workers: %s counted %d of 64 subtasks (%v), want about %d", n, w, c, counted, 64/n)
			}
		}
		if ticks > 64/n+4 {
			t.Errorf("%d workers: the job took %d ticks, want at most %d", n, ticks, 64/n+4)
		}
		old, _ := fairRun(t, func(c *Config) { c.NoFairShare = true }, workers, 1+maxWindow)
		if old["a"] <= 64/n*5/4 {
			t.Errorf("%d workers without the fair share: a counted %d (%v); the run no longer shows the old imbalance", n, old["a"], old)
		}
	}
}

// maxWindow is the most a worker of one slot asks to hold ahead
// (worker.DefaultMaxPrefetch; the scheduler does not import the worker).
const maxWindow = 256

// A worker with more slots holds a larger share: two slots against one
// take two thirds of a job that both ask for entirely.
func TestSchedulerFairShareBySlots(t *testing.T) {
	h := newHarness(t)
	h.rec(h.s.WorkerJoined(api.Hello{Worker: "big", Slots: 2}))
	h.join("small")
	h.add(JobSpec{ID: "j", Subtasks: testTasks(3)}) // 27 subtasks
	big := assigned(h.pull("big", 100), "big")
	small := assigned(h.pull("small", 100), "small")
	if len(big) != 18 || len(small) != 9 {
		t.Fatalf("big (2 slots) got %d, small (1 slot) %d of 27; want 18 and 9", len(big), len(small))
	}
	// As big reports, it gets more of what is left only within its share.
	for _, a := range big[:3] {
		h.ok(a, "big", truth(a.Ref.Index))
	}
	if got := assigned(h.pull("big", 1), "big"); len(got) != 0 {
		t.Fatalf("big got %d more with nothing left to hand out", len(got))
	}
}
