package clustertest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trigrid/trigrid/internal/testlong"
)

// slowWorker makes each result wait, so a job of 64 subtasks on 4 workers
// lasts about a second and faults land mid-job.
var slowWorker = []string{"--fault-delay", "60ms"}

// killRound SIGKILLs one random worker at a random moment of a job and
// checks the total.
func killRound(t *testing.T, rng *rand.Rand, file string, want uint64) {
	c, ws := startCluster(t, 4, nil, slowWorker...)
	job := submit(t, c, "--partitions", "4", "--scheme", "hash", file)
	victim := ws[rng.IntN(len(ws))]
	// A random moment of the job: once a random share of it (up to 80%) is
	// done, so the kill always lands while subtasks are out.
	frac := rng.Float64() * 0.8
	var at jobStatus
	waitFor(t, time.Minute, "the kill moment", func() bool {
		s, err := status(t, c, job)
		at = s
		return err == nil && s.State == "running" && float64(s.Done) >= frac*float64(s.Subtasks)
	})
	victim.kill()
	t.Logf("killed %s with %d/%d subtasks done, %d running", victim.name, at.Done, at.Subtasks, at.Running)
	r, stderr, err := waitJob(t, c, job)
	checkDone(t, r, err, stderr, want)
}

// waitJob waits for a submitted job through `submit`'s watch path, by
// polling status (the job already exists).
func waitJob(t *testing.T, c *coord, job string) (result, string, error) {
	t.Helper()
	var st jobStatus
	waitFor(t, 2*time.Minute, "job "+job+" to end", func() bool {
		s, err := status(t, c, job)
		if err != nil {
			return false
		}
		st = s
		return st.State == "done" || st.State == "failed" || st.State == "cancelled"
	})
	if st.State != "done" {
		return st.result, "", &jobError{st.State, st.Error}
	}
	return st.result, "", nil
}

type jobError struct{ state, msg string }

func (e *jobError) Error() string { return "job " + e.state + ": " + e.msg }

// SIGKILL a random worker at a random moment: the count stays exact. Two
// rounds run by default, ten with the long tests.
func TestChaosKillWorker(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	want := uint64(grqcTriangles)
	rounds := 2
	if testlong.Enabled() {
		rounds = 10
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range rounds {
		t.Run(fmt.Sprintf("round%d", i), func(t *testing.T) { killRound(t, rng, file, want) })
	}
}

// A stalled worker (SIGSTOP) holds its attempts until their leases lapse;
// the others finish the job.
func TestStalledWorker(t *testing.T) {
	file := grqc(t)
	c, ws := startCluster(t, 3, nil, slowWorker...)
	job := submit(t, c, "--partitions", "4", "--scheme", "range", file)
	waitFor(t, time.Minute, "the job to be under way", func() bool {
		s, err := status(t, c, job)
		return err == nil && s.State == "running" && s.Done > 0
	})
	ws[0].signal(syscall.SIGSTOP)
	r, stderr, err := waitJob(t, c, job)
	checkDone(t, r, err, stderr, grqcTriangles)
}

// A worker that joins mid-job gets work.
func TestWorkerJoinsMidJob(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	// 150 ms a subtask: the first worker alone takes about ten seconds
	// over the 64, ample time for the late one to start and join on a
	// loaded machine.
	slow := []string{"--fault-delay", "150ms"}
	c, _ := startCluster(t, 1, nil, slow...)
	job := submit(t, c, "--partitions", "4", "--scheme", "hash", file)
	waitFor(t, 30*time.Second, "some progress", func() bool {
		s, err := status(t, c, job)
		return err == nil && s.Done > 0
	})
	late := startWorker(t, c, "late", slow...)
	late.logLine("connected to the coordinator", time.Minute)
	if s, err := status(t, c, job); err == nil && s.State != "running" {
		t.Fatalf("the job was %s before the late worker joined: the test proves nothing", s.State)
	}
	r, stderr, err := waitJob(t, c, job)
	checkDone(t, r, err, stderr, grqcTriangles)
	_, lines := metrics(t, c)
	if n := sample(lines, "trigrid_coordinator_attempts_total", `worker="late"`); n == 0 {
		t.Errorf("the late worker got no attempts; metrics:\n%s", strings.Join(lines, "\n"))
	}
}

// Kill the coordinator mid-job and restart it on the same state and
// addresses: the job resumes, and subtasks settled before the kill are
// not handed out again.
func TestCoordinatorRestart(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	c, _ := startCluster(t, 3, nil, slowWorker...)
	job := submit(t, c, "--partitions", "4", "--scheme", "hash", file)
	var before jobStatus
	waitFor(t, 60*time.Second, "a quarter of the job", func() bool {
		s, err := status(t, c, job)
		before = s
		return err == nil && s.Done*4 >= s.Subtasks && s.Subtasks > 0
	})
	c.kill()
	// Same state directory and the same gRPC, gossip and metrics ports.
	args := append([]string(nil), c.args...)
	for i := range args {
		switch args[i] {
		case "--listen":
			args[i+1] = c.grpc
		case "--gossip":
			args[i+1] = c.gossip
		case "--metrics":
			args[i+1] = c.metrics
		}
	}
	c2 := launchCoordinator(t, args)
	restored, err := status(t, c2, job)
	if err != nil {
		t.Fatalf("status after restart: %v", err)
	}
	if restored.Done < before.Done {
		t.Fatalf("restart lost settled subtasks: %d done before the kill, %d after", before.Done, restored.Done)
	}
	r, stderr, err := waitJob(t, c2, job)
	checkDone(t, r, err, stderr, grqcTriangles)
	sums, _ := metrics(t, c2)
	handed := sums["trigrid_coordinator_attempts_total"]
	// Every hand-out of the new process beyond the subtasks that were open
	// at restart is a retry or a speculative copy, which it counts.
	open := float64(restored.Subtasks - restored.Done)
	if extra := handed - open; extra > sums["trigrid_coordinator_requeued_total"]+sums["trigrid_coordinator_speculated_total"] {
		t.Errorf("the restarted coordinator handed out %v attempts for %v open subtasks: settled subtasks were recounted", handed, open)
	}
	if settled := sums["trigrid_coordinator_subtasks_done_total"]; settled > open {
		t.Errorf("the restarted coordinator settled %v subtasks, only %v were open", settled, open)
	}
}

// A worker that reports a wrong count for one subtask is outvoted by the
// recount, named as faulty, and the total stays exact. The coordinator
// verifies every subtask on two workers; with only the liar and one honest
// worker up, both count subtask 5, so the lie is certain to meet a
// disagreement, and a third worker, started once the lie is told, breaks
// the tie.
func TestWrongCountCaught(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	c := startCoordinator(t, "--verify")
	liar := startWorker(t, c, "liar", "--fault-wrong-count", "5")
	startWorker(t, c, "honest1")
	job := submit(t, c, "--partitions", "4", "--scheme", "hash", file)
	liar.logLine("FAULT INJECTION: reporting a wrong count", time.Minute)
	startWorker(t, c, "honest2")
	r, stderr, err := waitJob(t, c, job)
	checkDone(t, r, err, stderr, grqcTriangles)
	named := false
	for _, f := range r.Faulty {
		named = named || f.Worker == "liar"
		if f.Worker != "liar" {
			t.Errorf("honest worker %s named faulty: %s", f.Worker, f.Reason)
		}
	}
	if !named {
		t.Errorf("the faulty worker was not named: %+v", r)
	}
}

// SIGTERM drains a worker: it finishes or hands back what it holds, leaves
// the cluster and exits 0, and the job still counts exactly.
func TestWorkerDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	c, ws := startCluster(t, 2, nil, slowWorker...)
	job := submit(t, c, "--partitions", "4", "--scheme", "hash", file)
	waitFor(t, time.Minute, "the job to be under way", func() bool {
		s, err := status(t, c, job)
		return err == nil && s.State == "running" && s.Done > 0
	})
	from := ws[0].out.Len()
	ws[0].signal(syscall.SIGTERM)
	if err := ws[0].wait(45 * time.Second); err != nil {
		t.Errorf("drained worker: %v, want exit status 0", err)
	}
	for _, l := range ws[0].linesAtOrAbove(from, "WARN") {
		if !slowLeave(l) {
			t.Errorf("an orderly drain logged %s", l)
		}
	}
	r, stderr, err := waitJob(t, c, job)
	checkDone(t, r, err, stderr, grqcTriangles)
	// A drained worker leaves; on a loaded machine the failure detector
	// may declare it dead first (a probe unanswered while it drains).
	// Either removes it, and the coordinator treats both alike.
	waitFor(t, 30*time.Second, "the coordinator to see the worker leave", func() bool {
		out := c.out.String()
		return strings.Contains(out, `"msg":"member left","worker":"w1"`) || strings.Contains(out, `"msg":"member dead","worker":"w1"`)
	})
}

// SIGINT stops an idle worker in order: exit status 0, and nothing from
// the signal on is logged above info (the end of its stream to the
// coordinator is the drain's own doing, not a fault).
func TestWorkerStopsQuietlyOnSIGINT(t *testing.T) {
	t.Parallel()
	c := startCoordinator(t)
	w := startWorker(t, c, "w1")
	w.logLine("connected to the coordinator", time.Minute)
	from := w.out.Len()
	w.signal(syscall.SIGINT)
	if err := w.wait(45 * time.Second); err != nil {
		t.Fatalf("worker stopped by SIGINT: %v, want exit status 0", err)
	}
	if w.logCount("worker stopped") != 1 {
		t.Errorf("no \"worker stopped\" line")
	}
	for _, l := range w.linesAtOrAbove(from, "WARN") {
		if !slowLeave(l) {
			t.Errorf("an orderly stop logged %s", l)
		}
	}
}

// slowLeave says whether a warning is gossip's leave message not spreading
// within its timeout: a machine too loaded to gossip in time, rightly
// warned of, not a fault of the stop.
func slowLeave(line string) bool {
	return (strings.Contains(line, `"msg":"leaving the cluster"`) || strings.Contains(line, `"msg":"could not announce leaving"`)) &&
		strings.Contains(line, "timeout")
}

// Heartbeats keep the leases of subtasks that run longer than a lease: the
// worker heartbeats at the interval its coordinator asks for, and no
// attempt is requeued.
func TestLongSubtasksKeepTheirLeases(t *testing.T) {
	// 0.8 s leases, heartbeats every 0.1 s: a lease lapses only if eight
	// heartbeats in a row are late, which a loaded machine does not do;
	// each subtask takes longer than a lease.
	c := startCoordinator(t, "--lease-ticks", "40", "--heartbeat", "100ms", "--no-speculation")
	startWorker(t, c, "w1", "--fault-delay", "1s")
	r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "2", grqc(t))
	checkDone(t, r, err, stderr, grqcTriangles)
	if r.Requeued != 0 || r.Attempts != r.Subtasks {
		t.Errorf("%d attempts (%d requeued) for %d subtasks: leases lapsed while heartbeats were due", r.Attempts, r.Requeued, r.Subtasks)
	}
}

// A stalled worker whose leases would outlast the test is still replaced:
// gossip declares it dead and the coordinator requeues its attempts
// (membership, not leases).
func TestDeadByGossip(t *testing.T) {
	c := startCoordinator(t, "--lease-ticks", "6000", "--gossip-timing", "local") // 120 s leases
	local := append([]string{"--gossip-timing", "local"}, slowWorker...)
	stalled := startWorker(t, c, "stalled", local...)
	startWorker(t, c, "healthy", local...)
	job := submit(t, c, "--partitions", "4", "--scheme", "hash", grqc(t))
	waitFor(t, time.Minute, "the job to be under way", func() bool {
		s, err := status(t, c, job)
		return err == nil && s.State == "running" && s.Done > 0
	})
	stalled.signal(syscall.SIGSTOP)
	start := time.Now()
	r, stderr, err := waitJob(t, c, job)
	checkDone(t, r, err, stderr, grqcTriangles)
	if !strings.Contains(c.out.String(), `"msg":"member dead","worker":"stalled"`) {
		t.Errorf("the coordinator did not see the stalled worker die")
	}
	if d := time.Since(start); d > 90*time.Second {
		t.Errorf("the job took %v after the stall: waited for leases, not gossip", d)
	}
}
