package clustertest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// freeGossipPort returns a loopback port free for both TCP and UDP (the
// gossip binds both) at the time of the call.
func freeGossipPort(t *testing.T) string {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		u, err := net.ListenPacket("udp", addr)
		l.Close()
		if err != nil {
			continue
		}
		u.Close()
		return addr
	}
	t.Fatal("no loopback port free for TCP and UDP")
	return ""
}

// A worker started before the coordinator retries its join with backoff
// and counts once the coordinator is up.
func TestWorkerStartsBeforeCoordinator(t *testing.T) {
	t.Parallel()
	gossip := freeGossipPort(t)
	w := start(t, "early", "worker", "--join", gossip, "--gossip", "127.0.0.1:0", "--name", "early",
		"--device", "cpu", "--log-format", "json", "--join-timeout", "30s")
	// Three failed attempts show the worker backing off and retrying,
	// not giving up.
	waitFor(t, 10*time.Second, "a third join attempt", func() bool {
		if w.exited() {
			t.Fatalf("the worker gave up before the coordinator started: %v", w.err)
		}
		return w.logCount("joining the cluster failed; retrying") >= 3
	})
	if w.exited() {
		t.Fatalf("the worker gave up before the coordinator started: %v", w.err)
	}
	args := append([]string{"coordinator", "--listen", "127.0.0.1:0", "--gossip", gossip,
		"--metrics", "127.0.0.1:0", "--log-format", "json", "--state", t.TempDir()}, fastTimings...)
	args = append(args, dataDirs()...)
	c := launchCoordinator(t, args)
	w.logLine("worker ready", 30*time.Second)
	r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "2", grqc(t))
	checkDone(t, r, err, stderr, grqcTriangles)
	if r.Workers != 1 {
		t.Errorf("%d workers counted, want the one started early", r.Workers)
	}
}

// A worker whose join never succeeds gives up after --join-timeout with
// an error naming the address.
func TestWorkerJoinTimesOut(t *testing.T) {
	t.Parallel()
	gossip := freeGossipPort(t)
	w := start(t, "lonely", "worker", "--join", gossip, "--gossip", "127.0.0.1:0", "--name", "lonely",
		"--device", "cpu", "--log-format", "json", "--join-timeout", "1s")
	if err := w.wait(20 * time.Second); err == nil {
		t.Fatal("the worker exited 0 without a cluster")
	}
	if out := w.out.String(); !strings.Contains(out, "--join "+gossip) {
		t.Errorf("the error does not name the --join address:\n%s", out)
	}
}

// Kill the coordinator mid-job and restart it on the same state and
// gossip address but another gRPC port: the workers follow it through
// gossip and the job finishes exactly.
func TestWorkerFollowsMovedCoordinator(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	c, _ := startCluster(t, 2, nil, slowWorker...)
	job := submit(t, c, "--partitions", "4", "--scheme", "hash", file)
	waitFor(t, 60*time.Second, "a quarter of the job", func() bool {
		s, err := status(t, c, job)
		return err == nil && s.Done*4 >= s.Subtasks && s.Subtasks > 0
	})
	c.kill()
	args := append([]string(nil), c.args...)
	for i := range args {
		if args[i] == "--gossip" {
			args[i+1] = c.gossip
		}
	}
	c2 := launchCoordinator(t, args)
	if c2.grpc == c.grpc {
		t.Fatalf("the restarted coordinator got the same gRPC address %s", c.grpc)
	}
	t.Logf("coordinator moved from %s to %s", c.grpc, c2.grpc)
	r, stderr, err := waitJob(t, c2, job)
	checkDone(t, r, err, stderr, grqcTriangles)
}

// A coordinator reads submitted graph files only under its --data-dir;
// a path outside, or a link leading outside, is refused naming the path.
func TestSubmitOutsideDataDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	data, other := filepath.Join(root, "data"), filepath.Join(root, "other")
	for _, d := range []string{data, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(other, "g.txt.gz")
	raw, err := os.ReadFile(grqc(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(data, "g.txt.gz")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"coordinator", "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0",
		"--log-format", "json", "--state", t.TempDir(), "--data-dir", data}, fastTimings...)
	c := launchCoordinator(t, args)
	for _, p := range []string{outside, link} {
		_, stderr, err := cli(t, 30*time.Second, "submit", "--coordinator", c.grpc, "--partitions", "2", p)
		if err == nil || !strings.Contains(stderr, p) || !strings.Contains(stderr, "data directories") {
			t.Errorf("submit %s: %v, want a refusal naming it\n%s", p, err, stderr)
		}
	}
}

// A job naming a kernel no connected worker has (a GPU kernel with only
// CPU workers) is not handed to them; it fails naming the kernel and the
// kernels they have.
func TestJobKernelNoWorkerHasIt(t *testing.T) {
	t.Parallel()
	c, _ := startCluster(t, 1, []string{"--recount-wait-ticks", "25"})
	r, stderr, err := submitWait(t, c, time.Minute, "--partitions", "2", "--kernel", "wetric", grqc(t))
	if err == nil || r.Triangles != nil {
		t.Fatalf("job with no worker for its kernel: %+v, %v", r, err)
	}
	msg := r.Error + stderr
	if !strings.Contains(msg, `kernel "wetric"`) || !strings.Contains(msg, "merge") {
		t.Fatalf("the error does not name the kernel and the workers' kernels: %q", msg)
	}
	if r.Attempts != 0 {
		t.Errorf("%d attempts were handed to a worker without the kernel", r.Attempts)
	}
}
