package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/partition"
)

// harness drives a Scheduler directly; ticks are the fake clock.
type harness struct {
	t   *testing.T
	s   *Scheduler
	all []Decision
}

func newHarness(t *testing.T, opts ...func(*Config)) *harness {
	t.Helper()
	cfg := DefaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, s: s}
}

func (h *harness) rec(ds []Decision) []Decision {
	h.all = append(h.all, ds...)
	return ds
}

func (h *harness) add(spec JobSpec) []Decision {
	h.t.Helper()
	ds, err := h.s.AddJob(spec)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.rec(ds)
}

func (h *harness) join(ids ...api.WorkerID) {
	for _, id := range ids {
		h.rec(h.s.WorkerJoined(api.Hello{Worker: id, Slots: 1}))
	}
}

func (h *harness) pull(id api.WorkerID, n int) []Decision { return h.rec(h.s.Pull(id, n)) }

func (h *harness) tick(n int) []Decision {
	var out []Decision
	for range n {
		out = append(out, h.rec(h.s.Tick())...)
	}
	return out
}

func (h *harness) ok(a api.Assignment, w api.WorkerID, v uint64) []Decision {
	return h.rec(h.s.Result(api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: w, Triangles: v}))
}

func (h *harness) fail(a api.Assignment, w api.WorkerID, msg string) []Decision {
	return h.rec(h.s.Result(api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: w, Err: msg}))
}

// assigned returns the assignments in ds given to w ("" for any).
func assigned(ds []Decision, w api.WorkerID) []api.Assignment {
	var out []api.Assignment
	for _, d := range ds {
		if d.Kind == DecideAssign && (w == "" || d.Worker == w) {
			out = append(out, d.Assignment)
		}
	}
	return out
}

func find(ds []Decision, k DecisionKind) (Decision, bool) {
	for _, d := range ds {
		if d.Kind == k {
			return d, true
		}
	}
	return Decision{}, false
}

func count(ds []Decision, k DecisionKind) int {
	n := 0
	for _, d := range ds {
		if d.Kind == k {
			n++
		}
	}
	return n
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

func TestSchedulerCountsEachSubtaskOnce(t *testing.T) {
	h := newHarness(t)
	tasks := testTasks(2)
	h.add(JobSpec{ID: "j1", Subtasks: tasks, Store: "file:///s", Kernel: "hash"})
	h.join("a", "b")
	out := append(h.pull("a", 2), h.pull("b", 2)...)
	var total uint64
	var done Decision
	for len(out) > 0 {
		as := assigned(out, "")
		if len(as) == 0 {
			break
		}
		out = nil
		for _, a := range as {
			if a.Store != "file:///s" || a.Kernel != "hash" || a.Attempt != 1 {
				t.Fatalf("assignment %+v", a)
			}
			w := api.WorkerID("a")
			for _, d := range h.all {
				if d.Kind == DecideAssign && d.Assignment == a {
					w = d.Worker
				}
			}
			ds := h.ok(a, w, truth(a.Ref.Index))
			if d, ok := find(ds, DecideJobDone); ok {
				done = d
			}
			out = append(out, ds...)
			out = append(out, h.pull(w, 1)...)
		}
	}
	for _, d := range h.all {
		if d.Kind == DecideSubtaskDone {
			total += d.Triangles
		}
	}
	if done.Kind != DecideJobDone || done.Total != truthSum(len(tasks)) || total != done.Total {
		t.Fatalf("job done %+v, summed %d, want %d", done, total, truthSum(len(tasks)))
	}
	if n := count(h.all, DecideAssign); n != len(tasks) {
		t.Fatalf("%d assignments for %d subtasks", n, len(tasks))
	}
	js, _ := h.s.Job("j1")
	if js.State != JobDone || js.Done != len(tasks) || js.Attempts != len(tasks) || js.Total != done.Total {
		t.Fatalf("status %+v", js)
	}
}

func TestSchedulerLeaseExpiryAndHeartbeat(t *testing.T) {
	tests := []struct {
		name      string
		heartbeat bool
		requeued  bool
	}{
		{"lapses without heartbeats", false, true},
		{"renewed by heartbeats", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.LeaseTicks = 5; c.NoSpeculation = true })
			h.add(JobSpec{ID: "j", Subtasks: testTasks(1)})
			h.join("a", "b")
			a := assigned(h.pull("a", 1), "a")[0]
			h.pull("b", 1)
			var got []Decision
			for range 12 {
				for _, x := range h.s.Workers() {
					if x.Hello.Worker == "b" && x.Running > 0 {
						h.rec(h.s.Heartbeat(api.Heartbeat{Worker: "b", Running: []api.SubtaskRef{a.Ref}}))
					}
				}
				if tc.heartbeat {
					h.rec(h.s.Heartbeat(api.Heartbeat{Worker: "a", Running: []api.SubtaskRef{a.Ref}}))
				}
				got = append(got, h.tick(1)...)
			}
			bs := assigned(got, "b")
			if tc.requeued != (len(bs) == 1) {
				t.Fatalf("assignments to b after the lease: %+v", bs)
			}
			if !tc.requeued {
				if ds := h.ok(a, "a", 7); find2(ds, DecideJobDone).Total != 7 {
					t.Fatalf("decisions %+v", ds)
				}
				return
			}
			if bs[0].Attempt != 2 || bs[0].Ref != a.Ref {
				t.Fatalf("requeued as %+v", bs[0])
			}
			// a stalled worker gets nothing more until it shows life, and
			// keeps what it asked for.
			if ws := h.s.Workers(); !ws[0].Suspect {
				t.Fatalf("stalled worker not suspect: %+v", ws[0])
			}
			// The late answer of the lapsed attempt is still a valid count;
			// the second, agreeing, changes nothing.
			ds := h.ok(a, "a", 7)
			if d := find2(ds, DecideJobDone); d.Total != 7 {
				t.Fatalf("late result: %+v", ds)
			}
			if _, ok := find(ds, DecideCancel); !ok {
				t.Fatalf("b's copy not cancelled: %+v", ds)
			}
			if ds := h.ok(bs[0], "b", 7); count(ds, DecideJobDone) != 0 {
				t.Fatalf("second result changed the job: %+v", ds)
			}
			if js, _ := h.s.Job("j"); js.Attempts != 2 || js.Requeued != 1 {
				t.Fatalf("status %+v", js)
			}
		})
	}
}

func find2(ds []Decision, k DecisionKind) Decision {
	d, _ := find(ds, k)
	return d
}

func TestSchedulerDuplicateResultsIgnored(t *testing.T) {
	h := newHarness(t)
	h.add(JobSpec{ID: "j", Subtasks: testTasks(2)[:2]})
	h.join("a")
	as := assigned(h.pull("a", 2), "a")
	h.ok(as[0], "a", 5)
	ds := h.ok(as[0], "a", 5)
	if _, ok := find(ds, DecideIgnore); !ok || count(ds, DecideSubtaskDone) != 0 {
		t.Fatalf("duplicate: %+v", ds)
	}
	// A result naming an attempt another worker holds, or none, is ignored.
	h.join("x")
	if ds := h.ok(as[1], "x", 99); count(ds, DecideIgnore) != 1 || len(ds) != 1 {
		t.Fatalf("forged: %+v", ds)
	}
	bad := as[1]
	bad.Attempt = 9
	if ds := h.ok(bad, "a", 99); count(ds, DecideIgnore) != 1 {
		t.Fatalf("unknown attempt: %+v", ds)
	}
	if d := find2(h.ok(as[1], "a", 6), DecideJobDone); d.Total != 11 {
		t.Fatalf("total %d", d.Total)
	}
	if ds := h.ok(as[1], "a", 6); count(ds, DecideIgnore) != 1 {
		t.Fatalf("after the job: %+v", ds)
	}
}

func TestSchedulerSpeculation(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LeaseTicks = 1000; c.SpeculateMinTicks = 3 })
	tasks := testTasks(2) // 8 subtasks
	h.add(JobSpec{ID: "j", Subtasks: tasks})
	h.join("a", "b")
	// a takes subtask 0 and stalls; b counts the other seven, a tick each.
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
	// b is idle; within a few ticks it gets a speculative copy of the
	// straggler, and the first result wins.
	var spec []api.Assignment
	for i := 0; i < 50 && len(spec) == 0; i++ {
		spec = append(b, assigned(h.tick(1), "b")...)
	}
	if len(spec) != 1 || spec[0].Ref != slow.Ref || spec[0].Attempt != 2 {
		t.Fatalf("speculative copy %+v", spec)
	}
	ds := h.ok(spec[0], "b", truth(0))
	if d := find2(ds, DecideJobDone); d.Total != truthSum(len(tasks)) {
		t.Fatalf("total %+v", ds)
	}
	if c := find2(ds, DecideCancel); c.Worker != "a" || c.Ref != slow.Ref {
		t.Fatalf("straggler not cancelled: %+v", ds)
	}
	if js, _ := h.s.Job("j"); js.Speculated != 1 {
		t.Fatalf("status %+v", js)
	}
	// speculation never doubles a subtask before SpeculateAfter is reached
	h2 := newHarness(t, func(c *Config) { c.LeaseTicks = 1000; c.SpeculateMinTicks = 1 })
	h2.add(JobSpec{ID: "j", Subtasks: tasks[:2]})
	h2.join("a", "b", "c")
	h2.pull("a", 1)
	x := assigned(h2.pull("b", 1), "b")[0]
	h2.tick(3)
	h2.ok(x, "b", 1) // 50% done
	h2.pull("c", 1)
	if ds := h2.tick(100); len(assigned(ds, "")) != 0 {
		t.Fatalf("speculated at 50%%: %+v", ds)
	}
}

func TestSchedulerDisagreementRecount(t *testing.T) {
	// NoFairShare: one worker takes half of a job of four subtasks.
	h := newHarness(t, func(c *Config) {
		c.LeaseTicks = 1000
		c.SpeculateMinTicks = 1
		c.SpeculateAfter = 0.5
		c.NoFairShare = true
	})
	tasks := testTasks(1)[:1]
	for range 3 {
		tasks = append(tasks, partition.Subtask{I: 0, J: 0, K: 0, Work: 1})
	}
	h.add(JobSpec{ID: "j", Subtasks: tasks})
	h.join("bad", "good1", "slow", "good2")
	// bad counts subtasks 0 and 1 wrongly; 1 settles at its wrong value
	// for now (nobody contradicts it yet). slow holds subtask 3 open.
	as := assigned(h.pull("bad", 2), "bad")
	h.ok(as[1], "bad", 1000)
	g := assigned(h.pull("good1", 1), "good1")[0] // subtask 2
	h.ok(g, "good1", truth(2))
	held := assigned(h.pull("slow", 1), "slow")[0]
	// subtask 0 is duplicated (speculation) on good1, which disagrees.
	spec := assigned(h.pull("good1", 1), "good1")
	for i := 0; i < 100 && len(spec) == 0; i++ {
		spec = assigned(h.tick(1), "good1")
	}
	if len(spec) != 1 || spec[0].Ref != as[0].Ref {
		t.Fatalf("no copy of the straggler: %+v", spec)
	}
	h.ok(spec[0], "good1", truth(0))
	ds := h.ok(as[0], "bad", 12345)
	if !hasReopen(ds, 0) {
		t.Fatalf("disagreement did not reopen: %+v", ds)
	}
	// the recount goes to the third worker only.
	ds = h.pull("good2", 1)
	r := assigned(ds, "good2")
	if len(r) != 1 || r[0].Ref != as[0].Ref {
		t.Fatalf("recount: %+v", ds)
	}
	ds = h.ok(r[0], "good2", truth(0))
	f, ok := find(ds, DecideWorkerFaulty)
	if !ok || f.Worker != "bad" {
		t.Fatalf("faulty worker not named: %+v", ds)
	}
	var fe *FaultyWorkerError
	if !errors.As(f.Err, &fe) || fe.Got != 12345 || fe.Agreed != truth(0) {
		t.Fatalf("fault %v", f.Err)
	}
	// bad's other count (subtask 1) is discarded and recounted elsewhere.
	if !hasReopen(ds, 1) {
		t.Fatalf("bad's other count kept: %+v", ds)
	}
	if ds := h.pull("bad", 1); len(assigned(ds, "")) != 0 {
		t.Fatalf("faulty worker got work: %+v", ds)
	}
	r = assigned(h.pull("good2", 1), "")
	if len(r) != 1 || r[0].Ref.Index != 1 {
		t.Fatalf("recount of bad's other subtask: %+v", r)
	}
	h.ok(r[0], "good2", truth(1))
	ds = h.ok(held, "slow", truth(3))
	if d := find2(ds, DecideJobDone); d.Total != truthSum(4) {
		t.Fatalf("total %d, want %d: %+v", d.Total, truthSum(4), ds)
	}
	if js, _ := h.s.Job("j"); js.Recounts != 1 || js.Speculated < 1 {
		t.Fatalf("status %+v", js)
	}
}

func hasReopen(ds []Decision, idx int) bool {
	for _, d := range ds {
		if d.Kind == DecideSubtaskReopened && d.Ref.Index == idx {
			return true
		}
	}
	return false
}

func TestSchedulerNoMajorityFails(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Verify = true })
	h.add(JobSpec{ID: "j", Subtasks: testTasks(1)})
	h.join("a", "b", "c")
	a := assigned(h.pull("a", 1), "a")[0]
	b := assigned(h.pull("b", 1), "b")[0]
	if a.Ref != b.Ref {
		t.Fatalf("verification copy went elsewhere: %+v %+v", a, b)
	}
	h.ok(a, "a", 1)
	h.ok(b, "b", 2)
	c := assigned(h.pull("c", 1), "c")
	if len(c) != 1 {
		t.Fatal("no third count")
	}
	ds := h.ok(c[0], "c", 3)
	d, ok := find(ds, DecideJobFailed)
	var de *DisagreementError
	if !ok || !errors.As(d.Err, &de) || len(de.Counts) != 3 {
		t.Fatalf("decisions %+v", ds)
	}
	for _, w := range []string{"on a: counted 1", "on b: counted 2", "on c: counted 3", "I=0 J=0 K=0"} {
		if !strings.Contains(d.Err.Error(), w) {
			t.Errorf("error %q lacks %q", d.Err, w)
		}
	}
}

func TestSchedulerVerifyAgrees(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Verify = true })
	tasks := testTasks(2)
	h.add(JobSpec{ID: "j", Subtasks: tasks})
	h.join("a", "b")
	out := append(h.pull("a", 1), h.pull("b", 1)...)
	var done Decision
	for range 100 {
		as := h.s.Workers()
		_ = as
		var next []Decision
		for _, d := range out {
			if d.Kind == DecideAssign {
				ds := h.ok(d.Assignment, d.Worker, truth(d.Assignment.Ref.Index))
				if j, ok := find(ds, DecideJobDone); ok {
					done = j
				}
				next = append(next, ds...)
				next = append(next, h.pull(d.Worker, 1)...)
			}
		}
		out = next
		if len(out) == 0 {
			break
		}
	}
	if done.Total != truthSum(len(tasks)) {
		t.Fatalf("total %d, want %d", done.Total, truthSum(len(tasks)))
	}
	js, _ := h.s.Job("j")
	if js.Attempts != 2*len(tasks) || js.Counted["a"] != len(tasks) || js.Counted["b"] != len(tasks) {
		t.Fatalf("status %+v", js)
	}
}

func TestSchedulerAttemptLimit(t *testing.T) {
	h := newHarness(t)
	h.add(JobSpec{ID: "j", Subtasks: testTasks(2)[5:6]})
	h.join("a", "b")
	var last Decision
	workers := []api.WorkerID{"a", "b"}
	for i := range 4 {
		w := workers[i%2]
		as := assigned(h.pull(w, 1), w)
		if len(as) != 1 || as[0].Attempt != i+1 {
			t.Fatalf("attempt %d: %+v", i+1, as)
		}
		ds := h.fail(as[0], w, fmt.Sprintf("device error %d", i+1))
		if d, ok := find(ds, DecideJobFailed); ok {
			last = d
		}
	}
	var fe *SubtaskFailedError
	if !errors.As(last.Err, &fe) || len(fe.Tries) != 4 {
		t.Fatalf("job failure %+v", last)
	}
	msg := last.Err.Error()
	for _, w := range []string{"subtask 0 (I=1 J=0 K=1)", "4 attempts failed", "1 on a: failed: device error 1", "4 on b: failed: device error 4"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
}

func TestSchedulerAvoidsFailedWorker(t *testing.T) {
	h := newHarness(t)
	h.add(JobSpec{ID: "j", Subtasks: testTasks(1)})
	h.join("a", "b")
	a := assigned(h.pull("a", 1), "a")[0]
	h.fail(a, "a", "oom")
	if ds := h.pull("a", 1); len(assigned(ds, "")) != 0 {
		t.Fatalf("given back to the worker that failed it while b exists: %+v", ds)
	}
	if b := assigned(h.pull("b", 1), "b"); len(b) != 1 || b[0].Attempt != 2 {
		t.Fatalf("b: %+v", b)
	}
	// With b gone, a is the only one left and gets it again.
	ds := h.rec(h.s.WorkerLeft("b", "stream broke"))
	if as := assigned(ds, "a"); len(as) != 1 || as[0].Attempt != 3 {
		t.Fatalf("after b left: %+v", ds)
	}
}

func TestSchedulerAffinity(t *testing.T) {
	h := newHarness(t)
	tasks := testTasks(3) // groups (0,0), (0,1), ... of 3 subtasks each
	h.add(JobSpec{ID: "j", Subtasks: tasks})
	h.join("a", "b")
	seq := map[api.WorkerID][]partition.Subtask{}
	outstanding := append(h.pull("a", 1), h.pull("b", 1)...)
	for range 8 {
		var next []Decision
		for _, d := range outstanding {
			if d.Kind != DecideAssign {
				continue
			}
			a := d.Assignment
			seq[d.Worker] = append(seq[d.Worker], partition.Subtask{I: a.I, J: a.J, K: a.K})
			next = append(next, h.ok(a, d.Worker, 1)...)
			next = append(next, h.pull(d.Worker, 1)...)
		}
		outstanding = next
	}
	// Each worker walks whole (I, J) groups, K ascending, and the two
	// never share a group.
	groupsOf := map[api.WorkerID]map[[2]int]bool{}
	for w, s := range seq {
		groupsOf[w] = map[[2]int]bool{}
		for i, t2 := range s {
			groupsOf[w][[2]int{t2.I, t2.J}] = true
			if i%3 != t2.K || (i > 0 && i%3 != 0 && (s[i-1].I != t2.I || s[i-1].J != t2.J)) {
				t.Fatalf("worker %s order %+v", w, s)
			}
		}
	}
	for g := range groupsOf["a"] {
		if groupsOf["b"][g] {
			t.Fatalf("group %v shared: a %+v b %+v", g, seq["a"], seq["b"])
		}
	}
}

func TestSchedulerWorkerLeft(t *testing.T) {
	h := newHarness(t)
	h.add(JobSpec{ID: "j", Subtasks: testTasks(1)})
	h.join("a", "b")
	a := assigned(h.pull("a", 1), "a")[0]
	h.pull("b", 1)
	ds := h.rec(h.s.WorkerLeft("a", "memberlist: dead"))
	b := assigned(ds, "b")
	if len(b) != 1 || b[0].Ref != a.Ref || b[0].Attempt != 2 {
		t.Fatalf("not requeued to b: %+v", ds)
	}
	if ds := h.ok(a, "a", 3); count(ds, DecideSubtaskDone) != 1 {
		t.Fatalf("late result of the lost attempt: %+v", ds)
	}
	if ds := h.rec(h.s.WorkerLeft("a", "again")); count(ds, DecideIgnore) != 1 {
		t.Fatalf("unknown worker left: %+v", ds)
	}
}

func TestSchedulerJobsFIFOAndCancel(t *testing.T) {
	// NoFairShare: b takes both subtasks of the second job.
	h := newHarness(t, func(c *Config) { c.NoFairShare = true })
	h.add(JobSpec{ID: "first", Subtasks: testTasks(1)})
	h.add(JobSpec{ID: "second", Subtasks: testTasks(2)[:2]})
	h.join("a", "b", "c")
	a := assigned(h.pull("a", 1), "a")[0]
	b := assigned(h.pull("b", 2), "b")
	if a.Ref.Job != "first" || len(b) != 2 || b[0].Ref.Job != "second" {
		t.Fatalf("a %+v b %+v", a, b)
	}
	ds, err := h.s.CancelJob("second")
	if err != nil || count(ds, DecideCancel) != 2 || count(ds, DecideJobCancelled) != 1 {
		t.Fatalf("cancel: %v %+v", err, ds)
	}
	if ds := h.ok(b[0], "b", 1); count(ds, DecideIgnore) != 1 {
		t.Fatalf("result after cancel: %+v", ds)
	}
	if ds := h.pull("c", 1); len(assigned(ds, "")) != 0 {
		t.Fatalf("cancelled job handed out: %+v", ds)
	}
	if _, err := h.s.CancelJob("none"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("cancel unknown: %v", err)
	}
	if d := find2(h.ok(a, "a", 9), DecideJobDone); d.Job != "first" || d.Total != 9 {
		t.Fatalf("first job: %+v", d)
	}
	js := h.s.Jobs()
	if len(js) != 2 || js[0].State != JobDone || js[1].State != JobCancelled {
		t.Fatalf("jobs %+v", js)
	}
	if _, err := h.s.AddJob(JobSpec{ID: "first"}); !errors.Is(err, ErrJobExists) {
		t.Fatalf("duplicate id: %v", err)
	}
}

func TestSchedulerRestoredSubtasks(t *testing.T) {
	h := newHarness(t)
	tasks := testTasks(2)
	settled := map[int]uint64{}
	for i := 0; i < len(tasks); i += 2 {
		settled[i] = truth(i)
	}
	h.add(JobSpec{ID: "j", Subtasks: tasks, Settled: settled})
	h.join("a")
	ds := h.pull("a", 100)
	as := assigned(ds, "a")
	if len(as) != len(tasks)/2 {
		t.Fatalf("%d handed out, want %d", len(as), len(tasks)/2)
	}
	var done Decision
	for _, a := range as {
		if a.Ref.Index%2 == 0 {
			t.Fatalf("restored subtask %d handed out", a.Ref.Index)
		}
		if d, ok := find(h.ok(a, "a", truth(a.Ref.Index)), DecideJobDone); ok {
			done = d
		}
	}
	if done.Total != truthSum(len(tasks)) {
		t.Fatalf("total %d want %d", done.Total, truthSum(len(tasks)))
	}
	if js, _ := h.s.Job("j"); js.Restored != len(settled) {
		t.Fatalf("status %+v", js)
	}
	// all settled: done at once; an empty job too.
	all := map[int]uint64{0: 5}
	ds = h.add(JobSpec{ID: "k", Subtasks: testTasks(1), Settled: all})
	if d := find2(ds, DecideJobDone); d.Total != 5 {
		t.Fatalf("fully restored job: %+v", ds)
	}
	if d := find2(h.add(JobSpec{ID: "empty"}), DecideJobDone); d.Job != "empty" || d.Total != 0 {
		t.Fatalf("empty job: %+v", d)
	}
	if _, err := h.s.AddJob(JobSpec{ID: "bad", Subtasks: testTasks(1), Settled: map[int]uint64{3: 1}}); err == nil {
		t.Fatal("settled index out of range accepted")
	}
}

func TestSchedulerRecountStarves(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Verify = true; c.RecountWaitTicks = 10 })
	h.add(JobSpec{ID: "j", Subtasks: testTasks(1)})
	h.join("a")
	a := assigned(h.pull("a", 2), "a")
	if len(a) != 1 {
		t.Fatalf("one worker got %d copies", len(a))
	}
	h.ok(a[0], "a", 1)
	ds := h.tick(20)
	d, ok := find(ds, DecideJobFailed)
	if !ok || !strings.Contains(d.Err.Error(), "has not counted it") {
		t.Fatalf("decisions %+v", ds)
	}
}

func TestSchedulerConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{LeaseTicks: -1}, {MaxAttempts: -2}, {SpeculateAfter: 2}, {SpeculateFactor: 0.5}, {RecountWaitTicks: -1},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	var c Config
	if err := c.Validate(); err != nil || c != DefaultConfig() {
		t.Fatalf("zero config: %v %+v", err, c)
	}
}

func TestSchedulerPartialOfWinner(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Verify = true })
	h.add(JobSpec{ID: "j", Subtasks: testTasks(1), PerVertex: true, PerEdge: true})
	h.join("a", "b")
	a := assigned(h.pull("a", 1), "a")[0]
	b := assigned(h.pull("b", 1), "b")[0]
	if !a.PerVertex || !a.PerEdge {
		t.Fatalf("flags not passed on: %+v", a)
	}
	pa, pb := &api.Partial{VI: []uint64{1}}, &api.Partial{VI: []uint64{1}}
	h.rec(h.s.Result(api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: "a", Triangles: 1, Partial: pa}))
	ds := h.rec(h.s.Result(api.Result{Ref: b.Ref, Attempt: b.Attempt, Worker: "b", Triangles: 1, Partial: pb}))
	d, ok := find(ds, DecideSubtaskDone)
	if !ok || d.Partial != pa || d.Worker != "a" || d.Attempt != 1 || count(ds, DecideSubtaskDone) != 1 {
		t.Fatalf("decisions %+v", ds)
	}
}

func TestSchedulerStalledWorkerWakes(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LeaseTicks = 2; c.NoSpeculation = true })
	h.add(JobSpec{ID: "j", Subtasks: testTasks(2)[:3]})
	h.join("a", "b")
	a := assigned(h.pull("a", 1), "a")[0]
	h.tick(2) // a's lease lapses; a asked for one more meanwhile
	if ds := h.pull("a", 1); len(assigned(ds, "")) != 1 {
		t.Fatalf("a pulling shows life and gets work: %+v", ds)
	}
	h.tick(2) // lapses again, a stays silent
	if ws := h.s.Workers(); !ws[0].Suspect || ws[0].Running != 0 {
		t.Fatalf("a after its second lapse: %+v", ws[0])
	}
	b := assigned(h.pull("b", 3), "b")
	if len(b) != 3 {
		t.Fatalf("b got %+v", b)
	}
	for _, x := range b {
		if x.Ref == a.Ref && x.Attempt != 2 {
			t.Fatalf("requeued attempt %+v", x)
		}
	}
	var done Decision
	for _, x := range b {
		if d, ok := find(h.ok(x, "b", truth(x.Ref.Index)), DecideJobDone); ok {
			done = d
		}
	}
	if done.Total != truthSum(3) {
		t.Fatalf("total %d, want %d", done.Total, truthSum(3))
	}
}

func TestSchedulerForget(t *testing.T) {
	h := newHarness(t)
	if h.s.Holds("j") {
		t.Fatal("holds a job never added")
	}
	h.add(JobSpec{ID: "j", Subtasks: testTasks(1)})
	h.join("a")
	a := assigned(h.pull("a", 1), "a")[0]
	if err := h.s.Forget("j"); err == nil || !h.s.Holds("j") {
		t.Fatalf("a running job forgotten (%v)", err)
	}
	h.ok(a, "a", 1)
	if err := h.s.Forget("j"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.s.Job("j"); ok || len(h.s.Jobs()) != 0 || h.s.Holds("j") {
		t.Fatal("forgotten job still shown")
	}
	if ds := h.ok(a, "a", 1); count(ds, DecideIgnore) != 1 {
		t.Fatalf("result for a forgotten job: %+v", ds)
	}
	if err := h.s.Forget("j"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("forgetting twice: %v", err)
	}
}

// A job grouped by JK hands a lone worker whole (J, K) groups in the
// order the list first names them, each group's subtasks in list order.
func TestSchedulerGroupJK(t *testing.T) {
	h := newHarness(t)
	var tasks []partition.Subtask
	for j := range 2 {
		for k := range 2 {
			for i := range 3 {
				tasks = append(tasks, partition.Subtask{I: i, J: j, K: k})
			}
		}
	}
	h.add(JobSpec{ID: "j", Subtasks: tasks, GroupJK: true})
	h.join("a")
	var seq []partition.Subtask
	ds := h.pull("a", 1)
	for range len(tasks) {
		as := assigned(ds, "a")
		if len(as) != 1 {
			t.Fatalf("after %d: %+v", len(seq), ds)
		}
		seq = append(seq, partition.Subtask{I: as[0].I, J: as[0].J, K: as[0].K})
		ds = append(h.ok(as[0], "a", 1), h.pull("a", 1)...)
	}
	for i, s := range seq {
		if s != tasks[i] {
			t.Fatalf("order %+v, want %+v", seq, tasks)
		}
	}
}
