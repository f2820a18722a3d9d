package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/internal/testlong"
)

// flight is an assignment a simulated worker holds.
type flight struct {
	a       api.Assignment
	w       api.WorkerID
	stalled bool // sends no heartbeats for it
}

// randomRun drives a scheduler with random interleavings of results,
// errors, stalls, duplicates, cancels ignored, workers leaving and
// rejoining, and (with verify) one worker that lies, until every job
// ends. It returns an error when any job does not end with its exact
// total, counted once.
func randomRun(seed uint64, verify bool, caught *int) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s, err := New(randomConfig(rng, verify))
	if err != nil {
		return err
	}
	jobs, err := addRandomJobs(rng, s)
	if err != nil {
		return err
	}
	stable := []api.WorkerID{"s1", "s2", "s3", "s4"}
	flaky := []api.WorkerID{"f1", "f2"}
	liar := api.WorkerID("")
	if verify {
		liar = "s4"
	}
	connected := map[api.WorkerID]bool{}
	var inflight []flight
	var delivered []api.Result
	done := map[api.JobID]uint64{}
	settled := map[api.SubtaskRef]uint64{}
	var fail error
	handle := func(ds []Decision) {
		if fail == nil {
			fail = checkTallies(s)
		}
		for _, d := range ds {
			switch d.Kind {
			case DecideAssign:
				inflight = append(inflight, flight{a: d.Assignment, w: d.Worker, stalled: rng.IntN(20) == 0})
			case DecideCancel:
				if rng.IntN(2) == 0 { // half the cancels arrive
					for i, f := range inflight {
						if f.a.Ref == d.Ref && f.a.Attempt == d.Attempt {
							inflight = append(inflight[:i], inflight[i+1:]...)
							break
						}
					}
				}
			case DecideSubtaskDone:
				settled[d.Ref] = d.Triangles
			case DecideSubtaskReopened:
				delete(settled, d.Ref)
			case DecideJobDone:
				if _, ok := done[d.Job]; ok {
					fail = fmt.Errorf("job %s done twice", d.Job)
				}
				done[d.Job] = d.Total
			case DecideJobFailed:
				fail = fmt.Errorf("job %s failed: %v", d.Job, d.Err)
			case DecideWorkerFaulty:
				if d.Worker != liar {
					fail = fmt.Errorf("honest worker %s called faulty: %v", d.Worker, d.Err)
				}
				*caught++
			}
		}
	}
	join := func(w api.WorkerID) {
		connected[w] = true
		handle(s.WorkerJoined(api.Hello{Worker: w, Slots: 2}))
		handle(s.Pull(w, 1+rng.IntN(2)))
	}
	for _, w := range append(stable, flaky...) {
		join(w)
	}
	for step := 0; step < 200000 && fail == nil && len(done) < len(jobs); step++ {
		switch r := rng.IntN(100); {
		case r < 45 && len(inflight) > 0:
			i := rng.IntN(len(inflight))
			f := inflight[i]
			inflight = append(inflight[:i], inflight[i+1:]...)
			res := api.Result{Ref: f.a.Ref, Attempt: f.a.Attempt, Worker: f.w, Triangles: truth(f.a.Ref.Index)}
			switch e := rng.IntN(20); {
			case e == 0:
				res.Triangles, res.Err = 0, "device lost"
			case e == 1:
				res.Triangles, res.HandedBack, res.Err = 0, true, "draining"
			case f.w == liar && e < 8:
				res.Triangles++ // a silent fault
			}
			delivered = append(delivered, res)
			handle(s.Result(res))
			if connected[f.w] {
				handle(s.Pull(f.w, 1))
			}
		case r < 50 && len(delivered) > 0:
			handle(s.Result(delivered[rng.IntN(len(delivered))])) // duplicate
		case r < 80:
			for w := range connected {
				var running []api.SubtaskRef
				for _, f := range inflight {
					if f.w == w && !f.stalled {
						running = append(running, f.a.Ref)
					}
				}
				handle(s.Heartbeat(api.Heartbeat{Worker: w, Running: running}))
			}
			handle(s.Tick())
		case r < 85:
			w := flaky[rng.IntN(len(flaky))]
			if connected[w] {
				delete(connected, w)
				if rng.IntN(2) == 0 { // sometimes its results were still on the way
					inflight = dropWorker(inflight, w)
				}
				handle(s.WorkerLeft(w, "killed"))
			} else {
				join(w)
			}
		case r < 90:
			handle(s.Tick())
		default:
			// a stalled worker wakes and pulls again
			w := stable[rng.IntN(len(stable))]
			handle(s.Pull(w, 1))
		}
	}
	if fail == nil {
		fail = checkTallies(s)
	}
	if fail != nil {
		return fail
	}
	return checkRandomJobs(s, jobs, done, settled)
}

func dropWorker(in []flight, w api.WorkerID) []flight {
	out := in[:0]
	for _, f := range in {
		if f.w != w {
			out = append(out, f)
		}
	}
	return out
}

func TestSchedulerRandomInterleavings(t *testing.T) {
	seeds := uint64(60)
	if testlong.Enabled() {
		seeds = 2000
	}
	caught := 0
	for seed := range seeds {
		for _, verify := range []bool{false, true} {
			if err := randomRun(seed, verify, &caught); err != nil {
				t.Fatalf("seed %d verify %v: %v", seed, verify, err)
			}
		}
	}
	if caught == 0 {
		t.Fatal("the lying worker was never caught: the fault path went untested")
	}
	t.Logf("liar caught in %d of %d verified runs", caught, seeds)
}

// randomConfig is a scheduler configuration with random lease and
// speculation ticks; errors are random here, not a subtask's fault, so
// attempts are all but unbounded.
func randomConfig(rng *rand.Rand, verify bool) Config {
	cfg := DefaultConfig()
	cfg.LeaseTicks = int64(3 + rng.IntN(10))
	cfg.MaxAttempts = 1000
	cfg.SpeculateMinTicks = int64(1 + rng.IntN(4))
	cfg.Verify = verify
	return cfg
}

// addRandomJobs adds one to three jobs of 1 to 40 subtasks to s and
// returns each job's subtask count.
func addRandomJobs(rng *rand.Rand, s *Scheduler) (map[api.JobID]int, error) {
	jobs := map[api.JobID]int{}
	for j := range 1 + rng.IntN(3) {
		id := api.JobID(fmt.Sprintf("job%d", j))
		n := 1 + rng.IntN(40)
		jobs[id] = n
		if _, err := s.AddJob(JobSpec{ID: id, Subtasks: testTasks(4)[:n]}); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// checkRandomJobs: every job finished with the true total, each subtask
// settled at its true count, and the settled counts sum to the total.
func checkRandomJobs(s *Scheduler, jobs map[api.JobID]int, done map[api.JobID]uint64, settled map[api.SubtaskRef]uint64) error {
	for id, n := range jobs {
		total, ok := done[id]
		if !ok {
			js, _ := s.Job(id)
			return fmt.Errorf("job %s did not finish: %+v", id, js)
		}
		if total != truthSum(n) {
			return fmt.Errorf("job %s: total %d, want %d", id, total, truthSum(n))
		}
		var sum uint64
		for i := range n {
			v, ok := settled[api.SubtaskRef{Job: id, Index: i}]
			if !ok || v != truth(i) {
				return fmt.Errorf("job %s subtask %d settled at %d (%v), want %d", id, i, v, ok, truth(i))
			}
			sum += v
		}
		if sum != total {
			return fmt.Errorf("job %s: persisted values sum to %d, total %d", id, sum, total)
		}
	}
	return nil
}

// walkStatus is a job's status counted over its subtasks and their
// attempts, as the tallies must show it.
func walkStatus(j *job) JobStatus {
	var js JobStatus
	for i := range j.tasks {
		st := &j.tasks[i]
		running := 0
		for k := range st.tries {
			if st.tries[k].state == tryRunning {
				running++
			}
			if st.tries[k].failure() {
				js.Failures++
			}
		}
		switch {
		case st.settled:
			js.Done++
			js.Sum += st.value
			if st.restored {
				js.Restored++
			}
		case running > 0:
			js.Running++
		default:
			js.Queued++
		}
		js.Requeued += st.requeued
		js.Speculated += st.speculated
		js.Attempts += len(st.tries)
	}
	return js
}

// checkTallies holds every job's status to walkStatus.
func checkTallies(s *Scheduler) error {
	for _, j := range s.order {
		got, want := s.jobStatus(j), walkStatus(j)
		g := [9]uint64{uint64(got.Queued), uint64(got.Running), uint64(got.Done), uint64(got.Restored), got.Sum,
			uint64(got.Requeued), uint64(got.Speculated), uint64(got.Attempts), uint64(got.Failures)}
		w := [9]uint64{uint64(want.Queued), uint64(want.Running), uint64(want.Done), uint64(want.Restored), want.Sum,
			uint64(want.Requeued), uint64(want.Speculated), uint64(want.Attempts), uint64(want.Failures)}
		if g != w {
			return fmt.Errorf("job %s at tick %d: status (queued, running, done, restored, sum, requeued, speculated, attempts, failures) %v, its subtasks say %v",
				j.spec.ID, s.now, g, w)
		}
	}
	return nil
}

// A job restored with settled subtasks shows them in its tallies, and
// they stay equal to its subtasks' as the rest is counted.
func TestTalliesOfARestoredJob(t *testing.T) {
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tasks := testTasks(4)[:10]
	if _, err := s.AddJob(JobSpec{ID: "r", Subtasks: tasks, Settled: map[int]uint64{0: truth(0), 3: truth(3)}}); err != nil {
		t.Fatal(err)
	}
	if err := checkTallies(s); err != nil {
		t.Fatal(err)
	}
	if js, _ := s.Job("r"); js.Restored != 2 || js.Done != 2 || js.Sum != truth(0)+truth(3) || js.Queued != 8 {
		t.Fatalf("restored job: %+v", js)
	}
	ds := s.WorkerJoined(api.Hello{Worker: "w", Slots: 1})
	ds = append(ds, s.Pull("w", 20)...)
	for len(ds) > 0 {
		var next []Decision
		for _, d := range ds {
			if d.Kind == DecideAssign {
				next = append(next, s.Result(api.Result{Worker: "w", Ref: d.Ref, Attempt: d.Attempt, Triangles: truth(d.Ref.Index)})...)
				next = append(next, s.Pull("w", 1)...)
			}
		}
		if err := checkTallies(s); err != nil {
			t.Fatal(err)
		}
		ds = next
	}
	if js, _ := s.Job("r"); js.State != JobDone || js.Total != truthSum(10) || js.Restored != 2 {
		t.Fatalf("finished job: %+v", js)
	}
}
