package scheduler

import (
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
)

// A job naming a kernel goes only to workers whose hello lists it (or
// lists none); the others get the jobs they can run.
func TestSchedulerKernelMatching(t *testing.T) {
	h := newHarness(t)
	h.add(JobSpec{ID: "gpu", Subtasks: testTasks(2), Kernel: "wetric"})
	h.add(JobSpec{ID: "cpu", Subtasks: testTasks(2), Kernel: "merge"})
	h.rec(h.s.WorkerJoined(api.Hello{Worker: "c", Slots: 1, Kernels: []string{"auto", "merge", "hash"}}))
	h.rec(h.s.WorkerJoined(api.Hello{Worker: "g", Slots: 1, Kernels: []string{"wetric"}}))
	h.rec(h.s.WorkerJoined(api.Hello{Worker: "any", Slots: 1}))
	for _, c := range []struct {
		w   api.WorkerID
		job api.JobID
	}{{"c", "cpu"}, {"g", "gpu"}} {
		as := assigned(h.pull(c.w, 3), c.w)
		if len(as) != 3 {
			t.Fatalf("%s got %d subtasks, want 3", c.w, len(as))
		}
		for _, a := range as {
			if a.Ref.Job != c.job {
				t.Fatalf("%s got a subtask of job %s (kernel %q)", c.w, a.Ref.Job, a.Kernel)
			}
		}
	}
	// A worker that lists no kernels takes either.
	if as := assigned(h.pull("any", 100), "any"); len(as) == 0 {
		t.Fatal("a worker that lists no kernels got no work")
	}
}

// A job whose kernel no connected worker has fails after RecountWaitTicks
// with an error naming the kernel and the kernels the workers have; a
// worker with it joining in time lets the job go on.
func TestSchedulerNoWorkerHasKernel(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RecountWaitTicks = 10 })
	h.add(JobSpec{ID: "j", Subtasks: testTasks(1), Kernel: "wetric"})
	h.rec(h.s.WorkerJoined(api.Hello{Worker: "c", Slots: 1, Kernels: []string{"merge", "hash"}}))
	if as := assigned(h.pull("c", 4), "c"); len(as) != 0 {
		t.Fatalf("a worker without the kernel got %+v", as)
	}
	if _, failed := find(h.tick(5), DecideJobFailed); failed {
		t.Fatal("the job failed before the wait ran out")
	}
	ds := h.tick(20)
	d, ok := find(ds, DecideJobFailed)
	if !ok || !strings.Contains(d.Err.Error(), `kernel "wetric"`) || !strings.Contains(d.Err.Error(), "hash, merge") {
		t.Fatalf("decisions %+v", ds)
	}

	h2 := newHarness(t, func(c *Config) { c.RecountWaitTicks = 10 })
	h2.add(JobSpec{ID: "j", Subtasks: testTasks(1), Kernel: "wetric"})
	h2.rec(h2.s.WorkerJoined(api.Hello{Worker: "c", Slots: 1, Kernels: []string{"merge"}}))
	h2.pull("c", 4)
	h2.tick(8)
	h2.rec(h2.s.WorkerJoined(api.Hello{Worker: "g", Slots: 1, Kernels: []string{"wetric"}}))
	as := assigned(h2.pull("g", 4), "g")
	if len(as) != 1 {
		t.Fatalf("the worker with the kernel got %d subtasks", len(as))
	}
	if _, failed := find(h2.tick(20), DecideJobFailed); failed {
		t.Fatal("the job failed with a worker that has its kernel")
	}
	h2.ok(as[0], "g", truth(as[0].Ref.Index))
	if _, done := find(h2.all, DecideJobDone); !done {
		t.Fatal("the job did not finish")
	}
}
