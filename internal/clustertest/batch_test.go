package clustertest

import (
	"encoding/json"
	"testing"
	"time"
)

// A worker killed (SIGKILL) while it holds many assignments pulled ahead
// and results not yet sent in their batch: its attempts are requeued and
// counted elsewhere, the total is exact, and every subtask's times are
// counted once, for the one attempt whose count was accepted.
func TestKilledWorkerMidBatch(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	// Results wait 300 µs each: a worker counts some 3,000 subtasks a
	// second, several to a batch, and pulls tens ahead.
	c, ws := startCluster(t, 3, nil, "--fault-delay", "300us")
	job := submit(t, c, "--partitions", "16", "--scheme", "hash", file)
	var at jobStatus
	waitFor(t, 2*time.Minute, "a fifth of the job", func() bool {
		s, err := status(t, c, job)
		at = s
		return err == nil && s.State == "running" && s.Done*5 >= s.Subtasks && s.Subtasks > 0
	})
	ws[0].kill()
	t.Logf("killed %s with %d/%d subtasks done, %d running", ws[0].name, at.Done, at.Subtasks, at.Running)
	r, stderr, err := waitJob(t, c, job)
	checkDone(t, r, err, stderr, grqcTriangles)
	if r.Requeued == 0 {
		t.Errorf("nothing requeued after a worker holding assignments was killed: %+v", r)
	}
	out, stderr, err := cli(t, 30*time.Second, "status", "--coordinator", c.grpc, "--json", job)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, stderr)
	}
	var st struct {
		Subtasks  int64 `json:"subtasks"`
		PerWorker []struct {
			Worker   string `json:"worker"`
			Subtasks int64  `json:"subtasks"`
		} `json:"per_worker"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status output %q: %v", out, err)
	}
	var sum int64
	for _, w := range st.PerWorker {
		sum += w.Subtasks
	}
	if st.Subtasks != 4096 || sum != st.Subtasks {
		t.Errorf("per worker %+v: %d subtasks counted, want each of %d once", st.PerWorker, sum, st.Subtasks)
	}
}
