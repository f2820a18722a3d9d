package clustertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// joinedWorkers counts the coordinator's "worker joined" log lines by
// worker name.
func joinedWorkers(c *coord) map[string]int { return workerLines(c, "worker joined") }

// workerLines counts the coordinator's log lines of message msg by their
// worker field.
func workerLines(c *coord, msg string) map[string]int {
	names := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(c.out.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == msg {
			if n, ok := m["worker"].(string); ok {
				names[n]++
			}
		}
	}
	return names
}

// Three workers started on one host without --name (as srun starts one
// task per GPU) take names of their own and count one job together.
func TestWorkersOnOneHostWithoutNames(t *testing.T) {
	t.Parallel()
	c := startCoordinator(t)
	for i := range 3 {
		start(t, fmt.Sprintf("unnamed%d", i+1), "worker", "--join", c.gossip, "--gossip", "127.0.0.1:0",
			"--device", "cpu", "--log-format", "json", "--fault-delay", "20ms")
	}
	waitFor(t, 20*time.Second, "three workers of distinct names", func() bool { return len(joinedWorkers(c)) == 3 })
	r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "4", grqc(t))
	checkDone(t, r, err, stderr, grqcTriangles)
	if r.Workers != 3 {
		t.Errorf("%d workers counted, want 3", r.Workers)
	}
	if strings.Contains(c.out.String(), "replaced") {
		t.Errorf("a worker's connection was replaced by another's")
	}
}

// A second live worker under a name already in use is refused with an
// error naming the cause; the first keeps its session and counts.
func TestDuplicateWorkerNameRefused(t *testing.T) {
	t.Parallel()
	c := startCoordinator(t)
	first := startWorker(t, c, "dup")
	first.logLine("connected to the coordinator", 30*time.Second)
	second := startWorker(t, c, "dup")
	if err := second.wait(20 * time.Second); err == nil {
		t.Fatal("the second worker named dup exited 0")
	} else if strings.Contains(err.Error(), "still running") {
		t.Fatalf("the second worker named dup was not refused: %v", err)
	}
	out := second.out.String()
	if !strings.Contains(out, "worker name dup is already in use by a live worker at 127.0.0.1:") ||
		!strings.Contains(out, "give each worker a unique --name") {
		t.Errorf("the refusal does not say why:\n%s", out)
	}
	if first.exited() {
		t.Fatalf("the first worker exited: %v", first.err)
	}
	r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "2", grqc(t))
	checkDone(t, r, err, stderr, grqcTriangles)
	if n := joinedWorkers(c)["dup"]; n != 1 {
		t.Errorf("dup joined %d times, want once", n)
	}
	if strings.Contains(c.out.String(), "replaced by a new connection") {
		t.Errorf("the refused worker replaced the first one's session")
	}
}

// A worker whose session the coordinator ended (gossip declared it dead
// while it was stopped) reconnects under its name when it runs again,
// and counts.
func TestWorkerReconnectsAfterItsSessionEnded(t *testing.T) {
	c := startCoordinator(t)
	w := startWorker(t, c, "back", "--gossip-timing", "local")
	w.logLine("connected to the coordinator", 30*time.Second)
	w.signal(syscall.SIGSTOP)
	waitFor(t, 30*time.Second, "the coordinator to end back's session", func() bool {
		return workerLines(c, "worker left")["back"] > 0
	})
	w.signal(syscall.SIGCONT)
	waitFor(t, 30*time.Second, "back to join again", func() bool { return joinedWorkers(c)["back"] == 2 })
	r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "2", grqc(t))
	checkDone(t, r, err, stderr, grqcTriangles)
	if r.Workers != 1 || w.exited() {
		t.Errorf("%d workers counted (the reconnected one exited: %v)", r.Workers, w.exited())
	}
}
