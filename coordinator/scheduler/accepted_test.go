package scheduler

import (
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/partition"
)

// ledger replays DecideSubtaskDone and DecideSubtaskReopened as the
// coordinator's per-worker sums do: a settle adds the accepted attempt's
// times and takes Prev's back out; a reopen takes Prev's out.
type ledger struct {
	t       *testing.T
	kernel  map[api.WorkerID]time.Duration
	count   map[api.WorkerID]int
	settled map[int]Accepted
}

func newLedger(t *testing.T) *ledger {
	return &ledger{t: t, kernel: map[api.WorkerID]time.Duration{}, count: map[api.WorkerID]int{}, settled: map[int]Accepted{}}
}

func (l *ledger) apply(ds []Decision) {
	l.t.Helper()
	for _, d := range ds {
		if d.Kind != DecideSubtaskDone && d.Kind != DecideSubtaskReopened {
			continue
		}
		old, had := l.settled[d.Ref.Index]
		switch {
		case had && (d.Prev == nil || *d.Prev != old):
			l.t.Fatalf("subtask %d: %v names the earlier attempt %+v, the ledger holds %+v", d.Ref.Index, d.Kind, d.Prev, old)
		case !had && d.Prev != nil:
			l.t.Fatalf("subtask %d: %v names an earlier attempt %+v that never settled it", d.Ref.Index, d.Kind, d.Prev)
		}
		if had {
			l.kernel[old.Worker] -= old.Times.KernelTime
			l.count[old.Worker]--
			delete(l.settled, d.Ref.Index)
		}
		if d.Kind == DecideSubtaskDone {
			a := Accepted{Worker: d.Worker, Attempt: d.Attempt, Times: d.Times}
			l.settled[d.Ref.Index] = a
			l.kernel[a.Worker] += a.Times.KernelTime
			l.count[a.Worker]++
		}
	}
}

// workerTime is the kernel time a worker reports for subtask idx in these
// tests: unique per worker and subtask, so a sum says whose it is.
func workerTime(w api.WorkerID, idx int) time.Duration {
	return time.Duration(len(w))*time.Second + time.Duration(w[0])*time.Millisecond + time.Duration(idx)*time.Microsecond
}

// A settled subtask's decision carries its accepted attempt's times, and
// every later change of the accepted attempt names the one it replaces:
// when a faulty worker's counts are discarded, the sums move to the
// workers whose counts then settle, each subtask counted once.
func TestSchedulerAcceptedAttemptTimes(t *testing.T) {
	// NoFairShare: one worker takes half of a job of four subtasks.
	h := newHarness(t, func(c *Config) {
		c.LeaseTicks = 1000
		c.SpeculateMinTicks = 1
		c.SpeculateAfter = 0.5
		c.NoFairShare = true
	})
	l := newLedger(t)
	report := func(a api.Assignment, w api.WorkerID, v uint64) {
		l.apply(h.rec(h.s.Result(api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: w, Triangles: v,
			KernelTime: workerTime(w, a.Ref.Index), Upload: time.Nanosecond, Busy: workerTime(w, a.Ref.Index) + 1, Device: 2})))
	}
	tasks := testTasks(1)[:1]
	for range 3 {
		tasks = append(tasks, partition.Subtask{I: 0, J: 0, K: 0, Work: 1})
	}
	h.add(JobSpec{ID: "j", Subtasks: tasks})
	h.join("bad", "good1", "slow", "good2")
	as := assigned(h.pull("bad", 2), "bad")
	report(as[1], "bad", 1000) // settles subtask 1 at a wrong value, for now
	if got := l.settled[1]; got.Worker != "bad" || got.Times.Device != 2 || got.Times.Busy != workerTime("bad", 1)+1 || got.Times.Upload != 1 {
		t.Fatalf("subtask 1 accepted %+v", got)
	}
	report(assigned(h.pull("good1", 1), "good1")[0], "good1", truth(2))
	held := assigned(h.pull("slow", 1), "slow")[0]
	spec := assigned(h.pull("good1", 1), "good1")
	for i := 0; i < 100 && len(spec) == 0; i++ {
		spec = assigned(l.tickApply(h), "good1")
	}
	if len(spec) != 1 {
		t.Fatal("no copy of the straggler")
	}
	report(spec[0], "good1", truth(0))
	report(as[0], "bad", 12345)
	r := assigned(h.pull("good2", 1), "good2")
	report(r[0], "good2", truth(0)) // bad is outvoted: its subtask 1 reopens
	if _, ok := l.settled[1]; ok {
		t.Fatalf("bad's count of subtask 1 still accepted: %+v", l.settled[1])
	}
	r = assigned(h.pull("good2", 1), "")
	report(r[0], "good2", truth(1))
	report(held, "slow", truth(3))
	if _, ok := find(h.all, DecideJobDone); !ok {
		t.Fatal("job not done")
	}
	want := map[api.WorkerID][]int{"good1": {0, 2}, "good2": {1}, "slow": {3}}
	for w, idxs := range want {
		var k time.Duration
		for _, i := range idxs {
			k += workerTime(w, i)
		}
		if l.count[w] != len(idxs) || l.kernel[w] != k {
			t.Errorf("%s: %d subtasks, kernel %v; want %d, %v", w, l.count[w], l.kernel[w], len(idxs), k)
		}
	}
	if l.count["bad"] != 0 || l.kernel["bad"] != 0 {
		t.Errorf("faulty worker keeps %d subtasks, %v", l.count["bad"], l.kernel["bad"])
	}
	for idx, a := range l.settled {
		if a.Times.KernelTime != workerTime(a.Worker, idx) {
			t.Errorf("subtask %d: accepted %+v, not its worker's own times", idx, a)
		}
	}
}

func (l *ledger) tickApply(h *harness) []Decision {
	ds := h.tick(1)
	l.apply(ds)
	return ds
}

// With Verify, the accepted attempt is the first of the agreeing counts,
// and a late duplicate changes nothing.
func TestSchedulerAcceptedOnceWithVerify(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Verify = true })
	l := newLedger(t)
	h.add(JobSpec{ID: "j", Subtasks: testTasks(1)})
	h.join("a", "b")
	a := assigned(h.pull("a", 1), "a")[0]
	b := assigned(h.pull("b", 1), "b")[0]
	for _, x := range []struct {
		as api.Assignment
		w  api.WorkerID
	}{{a, "a"}, {b, "b"}, {b, "b"}} {
		l.apply(h.rec(h.s.Result(api.Result{Ref: x.as.Ref, Attempt: x.as.Attempt, Worker: x.w, Triangles: 1, KernelTime: workerTime(x.w, 0)})))
	}
	if count(h.all, DecideSubtaskDone) != 1 || l.count["a"] != 1 || l.count["b"] != 0 || l.kernel["a"] != workerTime("a", 0) {
		t.Fatalf("accepted %+v, decisions %+v", l.settled, h.all)
	}
}

// When a speculative copy settles a subtask, the straggler's late count
// (the same value) leaves the copy's attempt accepted: no second
// settlement, the straggler's times counted nowhere.
func TestSchedulerAcceptedCopyStands(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LeaseTicks = 1000; c.SpeculateMinTicks = 3 })
	l := newLedger(t)
	h.add(JobSpec{ID: "j", Subtasks: testTasks(2)})
	h.join("a", "c", "b")
	slow := assigned(h.pull("a", 1), "a")[0]
	held := assigned(h.pull("c", 1), "c")[0] // keeps the job open
	report := func(a api.Assignment, w api.WorkerID) []Decision {
		ds := h.rec(h.s.Result(api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: w, Triangles: truth(a.Ref.Index), KernelTime: workerTime(w, a.Ref.Index)}))
		l.apply(ds)
		return ds
	}
	b := assigned(h.pull("b", 1), "b")
	var spec []api.Assignment
	for i := 0; i < 200 && len(spec) == 0; i++ {
		l.tickApply(h)
		if len(b) > 0 && b[0].Ref == slow.Ref {
			spec = b
			break
		}
		if len(b) > 0 {
			report(b[0], "b")
		}
		b = assigned(append(h.pull("b", 1), l.tickApply(h)...), "b")
	}
	if len(spec) != 1 || spec[0].Ref != slow.Ref {
		t.Fatalf("no copy of the straggler: %+v", spec)
	}
	report(spec[0], "b")
	report(slow, "a")
	n := 0
	for _, d := range h.all {
		if d.Kind == DecideSubtaskDone && d.Ref == slow.Ref {
			n++
		}
	}
	if got := l.settled[slow.Ref.Index]; n != 1 || got.Worker != "b" || l.kernel["a"] != 0 {
		t.Fatalf("subtask %d settled %d times, accepted %+v; a's kernel time %v", slow.Ref.Index, n, got, l.kernel["a"])
	}
	report(held, "c")
	if _, ok := find(h.all, DecideJobDone); !ok {
		t.Fatal("job not done")
	}
}
