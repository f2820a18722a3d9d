package dashboard

import (
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
	"github.com/trigrid/trigrid/partition"
)

// scene drives a real scheduler (the pure core, on a fake clock) into a
// job with a restored subtask, a counted one, a failure and its retry in
// flight, a hand-back by a draining worker, and a worker that left; then
// reads it as the coordinator would.
type scene struct {
	t     *testing.T
	s     *scheduler.Scheduler
	start time.Time
	// counted is the sum of the counts returned.
	counted uint64
}

const (
	tick     = 100 * time.Millisecond
	restored = uint64(5_000_000_000_000) // beyond 2^32: sums need 64 bits
)

func newScene(t *testing.T) *scene {
	cfg := scheduler.DefaultConfig()
	cfg.LeaseTicks, cfg.NoSpeculation = 1000, true
	s, err := scheduler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &scene{t: t, s: s, start: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
}

func subtasks(p int) []partition.Subtask {
	var out []partition.Subtask
	for i := range p {
		for j := range p {
			for k := range p {
				out = append(out, partition.Subtask{I: i, J: j, K: k, Edges: 10, Work: 100})
			}
		}
	}
	return out
}

func (c *scene) ticks(n int) {
	for range n {
		c.s.Tick()
	}
}

func one(t *testing.T, ds []scheduler.Decision) api.Assignment {
	t.Helper()
	for _, d := range ds {
		if d.Kind == scheduler.DecideAssign {
			return d.Assignment
		}
	}
	t.Fatalf("no assignment in %+v", ds)
	return api.Assignment{}
}

// run builds the scene: job "j" of 8 subtasks (P = 2), subtask 7
// restored; workers a (counts one), b (fails one, hands one back while
// draining), c (retries b's failure, still running), d (left).
func (c *scene) run() (failed, retry api.Assignment) {
	t := c.t
	if _, err := c.s.AddJob(scheduler.JobSpec{ID: "j", Subtasks: subtasks(2), Settled: map[int]uint64{7: restored}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []api.WorkerID{"a", "b", "c", "d"} {
		c.s.WorkerJoined(api.Hello{Worker: id, Slots: 1, Version: "v1", Devices: []api.Device{{Kind: "gpu", Name: "H200", Memory: 140 << 30}}})
	}
	c.ticks(2)
	x := one(t, c.s.Pull("a", 1))
	c.ticks(3)
	c.s.Result(api.Result{Ref: x.Ref, Attempt: x.Attempt, Worker: "a", Triangles: 1_000_003})
	c.counted += 1_000_003
	failed = one(t, c.s.Pull("b", 1))
	c.s.Result(api.Result{Ref: failed.Ref, Attempt: failed.Attempt, Worker: "b", Err: "boom"})
	retry = one(t, c.s.Pull("c", 1))
	if retry.Ref != failed.Ref {
		t.Fatalf("c got %+v, not the retry of %+v", retry, failed)
	}
	c.ticks(4)
	h := one(t, c.s.Pull("b", 1))
	c.s.Result(api.Result{Ref: h.Ref, Attempt: h.Attempt, Worker: "b", HandedBack: true, Err: api.HandBackDraining})
	c.s.WorkerLeft("d", "membership: dead")
	c.ticks(3)
	return failed, retry
}

// input reads the scheduler as coordinator.DashboardInput does; every
// worker was heard 200 ms ago.
func (c *scene) input() Input {
	now := c.start.Add(time.Duration(c.s.Now()) * tick)
	in := Input{Now: now, NowTick: c.s.Now(), Tick: tick, Heartbeat: time.Second, Departed: c.s.Departed()}
	for _, js := range c.s.Jobs() {
		sts, _ := c.s.Subtasks(js.ID)
		st := api.JobStatus{Job: js.ID, State: api.JobRunning, Source: "/data/g.txt", Partitions: 2, Scheme: "hash",
			Subtasks: int64(js.Subtasks), Queued: int64(js.Queued), Running: int64(js.Running), Done: int64(js.Done),
			Attempts: int64(js.Attempts), Requeued: int64(js.Requeued), Created: c.start, Elapsed: now.Sub(c.start)}
		in.Jobs = append(in.Jobs, JobInput{Status: st, Sched: &js, Subtasks: sts})
	}
	for _, ws := range c.s.Workers() {
		in.Workers = append(in.Workers, WorkerInput{Status: ws, Peer: "10.1.2.3:4567", Heard: now.Add(-200 * time.Millisecond)})
	}
	return in
}

func TestSnapshotJob(t *testing.T) {
	c := newScene(t)
	c.run()
	in := c.input()
	// The overview reads the scheduler's totals, never the subtasks (the
	// coordinator gathers those only for a job's detail).
	in.Jobs[0].Subtasks = nil
	o := Snapshot(in)
	if o.Version != Version || len(o.Jobs) != 1 {
		t.Fatalf("overview %+v", o)
	}
	j := o.Jobs[0]
	want := strconv.FormatUint(restored+c.counted, 10)
	if j.TrianglesSoFar != want || j.Triangles != "" {
		t.Fatalf("triangles so far %q (final %q), want %s", j.TrianglesSoFar, j.Triangles, want)
	}
	if j.Subtasks != 8 || j.Done != 2 || j.Restored != 1 || j.Running != 1 || j.Failures != 1 || j.Requeued != 2 {
		t.Fatalf("job %+v", j)
	}
	// One subtask counted in this run, since the first hand-out at tick
	// 2; now is tick 12: 1 s for one, 6 left.
	if j.RemainingSeconds == nil || math.Abs(*j.RemainingSeconds-6) > 1e-9 {
		t.Fatalf("remaining %v, want 6 s", j.RemainingSeconds)
	}
	// The same job done: the total is the final count; no time left.
	in.Jobs[0].Status.State, in.Jobs[0].Status.Triangles = api.JobDone, 42
	j = Snapshot(in).Jobs[0]
	if j.Triangles != "42" || j.TrianglesSoFar != "42" || j.RemainingSeconds != nil {
		t.Fatalf("done job %+v", j)
	}
}

func TestDetailGridAndInFlight(t *testing.T) {
	c := newScene(t)
	failed, retry := c.run()
	in := c.input()
	d, ok := Detail(in, "j")
	if !ok || d.Grid == nil {
		t.Fatalf("detail %+v", d)
	}
	g := d.Grid
	if g.P != 2 || g.Group != 1 || g.Size != 2 {
		t.Fatalf("grid %+v", g)
	}
	sum := func(xs []int) int {
		n := 0
		for _, x := range xs {
			n += x
		}
		return n
	}
	if sum(g.Total) != 8 || sum(g.Done) != 2 || sum(g.Running) != 1 || sum(g.Failed) != 1 || sum(g.Retried) != 1 || sum(g.Speculative) != 0 {
		t.Fatalf("grid %+v", g)
	}
	st := subtasks(2)[failed.Ref.Index]
	cell := st.I*g.Size + st.J
	if g.Failed[cell] != 1 || g.Retried[cell] != 1 || g.Running[cell] != 1 {
		t.Fatalf("the failed subtask's cell %d: %+v", cell, g)
	}
	if len(d.InFlight) != 1 || d.InFlightTotal != 1 {
		t.Fatalf("in flight %+v", d.InFlight)
	}
	f := d.InFlight[0]
	// c took the retry at tick 5; now is tick 12.
	if f.Worker != "c" || f.Subtask != retry.Ref.Index || f.Attempt != 2 || math.Abs(f.RunningSeconds-0.7) > 1e-9 || f.Speculative {
		t.Fatalf("in flight %+v", f)
	}
	// The failed subtask and the handed-back one are marked; only the
	// first as failed and retried.
	if d.MarkedTotal != 1 || len(d.Marked) != 1 {
		t.Fatalf("marked %+v", d.Marked)
	}
	m := d.Marked[0]
	if m.Subtask != failed.Ref.Index || len(m.Marks) != 2 || m.Marks[0] != "retried" || m.Marks[1] != "failed" ||
		len(m.Tries) != 2 || m.Tries[0].Outcome != "failed: boom" || m.Tries[1].Worker != "c" {
		t.Fatalf("marked %+v", m)
	}
	if _, ok := Detail(in, "nope"); ok {
		t.Fatal("a job that is not there has a detail")
	}
	// A job whose subtasks the coordinator no longer holds has no grid.
	in.Jobs[0].Subtasks = nil
	if d, _ := Detail(in, "j"); d.Grid != nil || d.InFlight == nil || d.Marked == nil {
		t.Fatalf("detail without subtasks %+v", d)
	}
}

// Above MaxGrid blocks a side each cell covers several; none is lost.
func TestDetailGridGroups(t *testing.T) {
	const p = 130
	var sts []scheduler.SubtaskStatus
	for i := range p {
		for j := range p {
			sts = append(sts, scheduler.SubtaskStatus{Index: len(sts), I: i, J: j, K: (i + j) % p, State: "done"})
		}
	}
	in := Input{Jobs: []JobInput{{Status: api.JobStatus{Job: "big", Partitions: p, State: api.JobRunning}, Subtasks: sts}}}
	d, _ := Detail(in, "big")
	g := d.Grid
	if g.Group != 3 || g.Size != 44 || len(g.Total) != 44*44 {
		t.Fatalf("grid group %d size %d cells %d", g.Group, g.Size, len(g.Total))
	}
	n := 0
	for c, v := range g.Total {
		n += v
		if g.Done[c] != v {
			t.Fatalf("cell %d: %d done of %d", c, g.Done[c], v)
		}
	}
	if n != p*p || g.Total[0] != 9 || g.Total[44*44-1] != 1 {
		t.Fatalf("%d subtasks in the grid, corners %d and %d", n, g.Total[0], g.Total[44*44-1])
	}
}

func TestWorkersStates(t *testing.T) {
	c := newScene(t)
	c.run()
	in := c.input()
	ws := Workers(in)
	want := []struct {
		id    api.WorkerID
		state api.WorkerState
	}{{"a", api.WorkerIdle}, {"b", api.WorkerDraining}, {"c", api.WorkerBusy}, {"d", api.WorkerLost}}
	if len(ws) != len(want) {
		t.Fatalf("workers %+v", ws)
	}
	for i, w := range want {
		if ws[i].Worker != w.id || ws[i].State != w.state {
			t.Errorf("worker %d: %s %s, want %s %s", i, ws[i].Worker, ws[i].State, w.id, w.state)
		}
	}
	if a := ws[0]; a.Host != "10.1.2.3" || a.Counted != 1 || a.Heard != 200*time.Millisecond || len(a.Devices) != 1 {
		t.Errorf("a %+v", a)
	}
	if b := ws[1]; b.Failed != 1 {
		t.Errorf("b %+v", b)
	}
	// d left at tick 9, now is 12.
	if d := ws[3]; d.Left != "membership: dead" || d.Heard != 300*time.Millisecond || d.Host != "" {
		t.Errorf("d %+v", d)
	}
	// A worker silent past SilentAfter, or suspect, is lost; a faulty one
	// says why.
	in.Workers[2].Heard = in.Now.Add(-SilentAfter(in.Heartbeat))
	in.Workers[0].Status.Suspect = true
	in.Workers[0].Status.Faulty = errors.New("outvoted")
	ws = Workers(in)
	if ws[2].State != api.WorkerLost || ws[0].State != api.WorkerLost || ws[0].Faulty != "outvoted" {
		t.Fatalf("silent %+v, suspect %+v", ws[2], ws[0])
	}
	// b says hello again (a new process, or a reconnect): not draining now.
	c.s.WorkerJoined(api.Hello{Worker: "b", Slots: 1, Version: "v1"})
	if ws = Workers(c.input()); ws[1].State != api.WorkerIdle {
		t.Fatalf("b said hello again: %+v", ws[1])
	}
}

func TestWorkerStats(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	per := func(sub, edges int64, busy, wall time.Duration) api.WorkerStats {
		return api.WorkerStats{Worker: "a", Subtasks: sub, Edges: edges, Busy: busy, KernelTime: busy / 2, Fetch: time.Second,
			Decode: 2 * time.Second, Wall: wall, FirstStart: t0, LastEnd: t0.Add(wall)}
	}
	in := Input{Jobs: []JobInput{
		{Status: api.JobStatus{Job: "1", State: api.JobDone, PerWorker: []api.WorkerStats{per(3, 3000, 4*time.Second, 5*time.Second)}}},
		{Status: api.JobStatus{Job: "2", State: api.JobDone, PerWorker: []api.WorkerStats{per(1, 1000, 2*time.Second, 5*time.Second)}}},
	}, Workers: []WorkerInput{{Status: scheduler.WorkerStatus{Hello: api.Hello{Worker: "a", Slots: 2}}}}}
	in.Workers[0].Heard = in.Now
	w := WorkerOf(Workers(in)[0])
	if w.Subtasks != 4 || w.KernelSeconds != 3 || w.FetchSeconds != 2 || w.DecodeSeconds != 4 || w.BusySeconds != 6 {
		t.Fatalf("sums %+v", w)
	}
	// 4000 edges over 10 s of spans; 6 s busy of 10 s on 2 slots.
	if w.EdgesPerSecond == nil || *w.EdgesPerSecond != 400 || w.BusyShare == nil || *w.BusyShare != 0.3 {
		t.Fatalf("rates %v %v", w.EdgesPerSecond, w.BusyShare)
	}
	in.Jobs = nil
	if w := WorkerOf(Workers(in)[0]); w.EdgesPerSecond != nil || w.BusyShare != nil || w.Devices == nil {
		t.Fatalf("no stats yet: %+v", w)
	}
}
