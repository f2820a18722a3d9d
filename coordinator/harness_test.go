package coordinator

import (
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
	"github.com/trigrid/trigrid/partition"
)

// harness drives a scheduler directly, as the state tests resume jobs
// from their records; ticks are the fake clock.
type harness struct {
	t *testing.T
	s *scheduler.Scheduler
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	s, err := scheduler.New(scheduler.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, s: s}
}

func (h *harness) add(spec scheduler.JobSpec) []scheduler.Decision {
	h.t.Helper()
	ds, err := h.s.AddJob(spec)
	if err != nil {
		h.t.Fatal(err)
	}
	return ds
}

func (h *harness) join(ids ...api.WorkerID) {
	for _, id := range ids {
		h.s.WorkerJoined(api.Hello{Worker: id, Slots: 1})
	}
}

func (h *harness) pull(id api.WorkerID, n int) []scheduler.Decision { return h.s.Pull(id, n) }

func (h *harness) ok(a api.Assignment, w api.WorkerID, v uint64) []scheduler.Decision {
	return h.s.Result(api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: w, Triangles: v})
}

// assigned returns the assignments in ds given to w ("" for any).
func assigned(ds []scheduler.Decision, w api.WorkerID) []api.Assignment {
	var out []api.Assignment
	for _, d := range ds {
		if d.Kind == scheduler.DecideAssign && (w == "" || d.Worker == w) {
			out = append(out, d.Assignment)
		}
	}
	return out
}

func find(ds []scheduler.Decision, k scheduler.DecisionKind) (scheduler.Decision, bool) {
	for _, d := range ds {
		if d.Kind == k {
			return d, true
		}
	}
	return scheduler.Decision{}, false
}

// testTasks lists p^3 subtasks in (I, J) groups with K ascending, the
// order partition.Enumerate produces; Work grows with the index.
func testTasks(p int) []partition.Subtask {
	var out []partition.Subtask
	for i := range p {
		for j := range p {
			for k := range p {
				out = append(out, partition.Subtask{I: i, J: j, K: k, Edges: 10, Work: int64(100 + len(out))})
			}
		}
	}
	return out
}

// truth is the count of subtask idx: large, so that sums need 64 bits.
func truth(idx int) uint64 { return 1<<40 + uint64(idx)*977 }

func truthSum(n int) uint64 {
	var s uint64
	for i := range n {
		s += truth(i)
	}
	return s
}
