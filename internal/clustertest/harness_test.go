package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trigrid/trigrid/internal/testnet"
)

// bin is the trigrid binary under test, built by TestMain.
var bin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "trigrid-clustertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "trigrid")
	build := exec.Command("go", "build", "-tags", "trigrid_faults", "-o", bin, "github.com/trigrid/trigrid/cmd/trigrid")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building trigrid: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// syncBuffer collects a process's output for the test to search.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Len is how many bytes were written so far.
func (b *syncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is one process of the binary under test. It is killed (SIGKILL, by
// its own pid) when the test ends, and its output is logged if the test
// failed.
type proc struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// env is the environment every process gets: no inherited TRIGRID_*
// settings, so a developer's environment cannot change a test.
func env() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TRIGRID_") {
			out = append(out, kv)
		}
	}
	return out
}

func start(t testing.TB, name string, args ...string) *proc {
	t.Helper()
	return startOn(t, nil, name, args...)
}

// startOn starts a process of the binary on node, a network namespace of
// a testnet lab; nil is the test's own (loopback).
func startOn(t testing.TB, node *testnet.Node, name string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, out: &syncBuffer{}, done: make(chan struct{})}
	if node != nil {
		p.cmd = node.Command(context.Background(), bin, args...)
	} else {
		p.cmd = exec.Command(bin, args...)
	}
	p.cmd.Env = env()
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGCONT)
		p.kill()
		if t.Failed() || testing.Verbose() {
			t.Logf("---- %s (%v) output:\n%s", name, args, p.out.String())
		}
	})
	return p
}

func (p *proc) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(sig)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	p.signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Errorf("%s: still running 10 s after SIGKILL", p.name)
	}
}

// wait waits up to timeout for the process to exit and returns its error.
func (p *proc) wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		return fmt.Errorf("%s: still running after %v", p.name, timeout)
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logLine waits up to timeout for a JSON log line whose msg is msg and
// returns its fields; it fails the test if the process exits first.
func (p *proc) logLine(msg string, timeout time.Duration) map[string]any {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		sc := bufio.NewScanner(strings.NewReader(p.out.String()))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == msg {
				return m
			}
		}
		if p.exited() {
			p.t.Fatalf("%s exited (%v) before logging %q", p.name, p.err, msg)
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: no %q log line within %v", p.name, msg, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// linesAtOrAbove returns the JSON log lines written from byte offset from
// on whose level is level or more severe (slog's DEBUG < INFO < WARN <
// ERROR).
func (p *proc) linesAtOrAbove(from int, level string) []string {
	rank := map[string]int{"DEBUG": 0, "INFO": 1, "WARN": 2, "ERROR": 3}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(p.out.String()[from:]))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			Level string `json:"level"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			if r, ok := rank[m.Level]; ok && r >= rank[level] {
				out = append(out, sc.Text())
			}
		}
	}
	return out
}

// logCount returns how many JSON log lines so far have msg as their msg.
func (p *proc) logCount(msg string) int {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(p.out.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == msg {
			n++
		}
	}
	return n
}

// coord is a running coordinator and its addresses.
type coord struct {
	*proc
	grpc, gossip, metrics string
	args                  []string
	// node is the lab namespace the coordinator runs in (nil: loopback);
	// client commands run there too and metrics are scraped from there.
	node *testnet.Node
}

// fastTimings make failure handling quick on loopback: 20 ms ticks, 0.6 s
// leases, heartbeats every 100 ms, and gossip that notices a dead or
// silent member in about a second (memberlist's LAN defaults take
// several).
var fastTimings = []string{"--tick", "20ms", "--lease-ticks", "30", "--heartbeat", "100ms", "--gossip-timing", "local"}

// fastWorker is the worker's half of fastTimings; a test's own flags come
// after it and win.
var fastWorker = []string{"--gossip-timing", "local"}

func startCoordinator(t testing.TB, extra ...string) *coord {
	t.Helper()
	args := append([]string{"coordinator", "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0",
		"--metrics", "127.0.0.1:0", "--log-format", "json", "--state", t.TempDir()}, fastTimings...)
	args = append(args, dataDirs()...)
	args = append(args, extra...)
	return launchCoordinator(t, args)
}

func launchCoordinator(t testing.TB, args []string) *coord {
	t.Helper()
	return launchCoordinatorOn(t, nil, "coordinator", args)
}

func launchCoordinatorOn(t testing.TB, node *testnet.Node, name string, args []string) *coord {
	t.Helper()
	p := startOn(t, node, name, args...)
	ready := p.logLine("coordinator ready", 30*time.Second)
	c := &coord{proc: p, args: args, node: node}
	c.grpc, _ = ready["grpc"].(string)
	c.gossip, _ = ready["gossip"].(string)
	c.metrics, _ = ready["metrics"].(string)
	if c.grpc == "" || c.gossip == "" {
		t.Fatalf("coordinator ready line without addresses: %v", ready)
	}
	return c
}

// startWorker starts a CPU worker that joins c's gossip.
func startWorker(t testing.TB, c *coord, name string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"worker", "--join", c.gossip, "--gossip", "127.0.0.1:0", "--name", name,
		"--device", "cpu", "--log-format", "json"}, fastWorker...)
	args = append(args, extra...)
	return start(t, name, args...)
}

// result is `trigrid submit --wait --json`'s object.
type result struct {
	Job        string  `json:"job"`
	State      string  `json:"state"`
	Triangles  *uint64 `json:"triangles"`
	Subtasks   int64   `json:"subtasks"`
	Workers    int     `json:"workers"`
	Seconds    float64 `json:"seconds"`
	Attempts   int64   `json:"attempts"`
	Requeued   int64   `json:"requeued"`
	Speculated int64   `json:"speculated"`
	Error      string  `json:"error"`
	Faulty     []struct {
		Worker string `json:"worker"`
		Reason string `json:"reason"`
	} `json:"faulty_workers"`
}

// cli runs one client command of the binary with a time limit and returns
// stdout, stderr and the exit error.
func cli(t testing.TB, timeout time.Duration, args ...string) (string, string, error) {
	t.Helper()
	return cliOn(t, nil, timeout, args...)
}

// cliOn is cli on node (nil: loopback).
func cliOn(t testing.TB, node *testnet.Node, timeout time.Duration, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var cmd *exec.Cmd
	if node != nil {
		cmd = node.Command(ctx, bin, args...)
	} else {
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	cmd.Env = env()
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("trigrid %v: still running after %v\n%s", args, timeout, errb.String())
	}
	return out.String(), errb.String(), err
}

// submitWait submits a job, waits for it and decodes the result; the exit
// error is returned with it (a failed job exits 1).
func submitWait(t testing.TB, c *coord, timeout time.Duration, args ...string) (result, string, error) {
	t.Helper()
	out, stderr, err := cliOn(t, c.node, timeout, append([]string{"submit", "--coordinator", c.grpc, "--wait", "--json"}, args...)...)
	var r result
	if jerr := json.Unmarshal([]byte(out), &r); jerr != nil && err == nil {
		t.Fatalf("submit output %q: %v\n%s", out, jerr, stderr)
	}
	return r, stderr, err
}

// submit submits a job without waiting and returns its id.
func submit(t testing.TB, c *coord, args ...string) string {
	t.Helper()
	out, stderr, err := cliOn(t, c.node, 30*time.Second, append([]string{"submit", "--coordinator", c.grpc}, args...)...)
	if err != nil {
		t.Fatalf("submit %v: %v\n%s", args, err, stderr)
	}
	return strings.TrimSpace(out)
}

// jobStatus is `trigrid status --json JOB`'s object.
type jobStatus struct {
	result
	Queued  int64 `json:"queued"`
	Running int64 `json:"running"`
	Done    int64 `json:"done"`
}

func status(t testing.TB, c *coord, job string) (jobStatus, error) {
	t.Helper()
	out, stderr, err := cliOn(t, c.node, 30*time.Second, "status", "--coordinator", c.grpc, "--json", job)
	if err != nil {
		return jobStatus{}, fmt.Errorf("status: %v: %s", err, stderr)
	}
	var s jobStatus
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		return jobStatus{}, fmt.Errorf("status output %q: %v", out, err)
	}
	return s, nil
}

// metrics scrapes the coordinator's /metrics and sums every sample of
// each metric name over its labels; byLabel keeps the samples whose
// labels contain a given string.
func metrics(t testing.TB, c *coord) (sums map[string]float64, lines []string) {
	t.Helper()
	resp, err := c.httpClient().Get("http://" + c.metrics + "/metrics")
	if err != nil {
		t.Fatalf("scrape metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	sums = map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		name := line[:sp]
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		sums[name] += v
		lines = append(lines, line)
	}
	return sums, lines
}

// httpClient reaches the coordinator's metrics address.
func (c *coord) httpClient() *http.Client {
	if c.node != nil {
		return c.node.HTTPClient()
	}
	return http.DefaultClient
}

// sample returns the sum of the samples of name whose labels contain
// label.
func sample(lines []string, name, label string) float64 {
	var sum float64
	for _, line := range lines {
		if !strings.HasPrefix(line, name+"{") || !strings.Contains(line, label) {
			continue
		}
		v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		sum += v
	}
	return sum
}

// wholeCount counts a graph file in one process on the CPU (P = 1, no
// partitioning, no network): the independent count the distributed runs
// must match.
func wholeCount(t testing.TB, file string) uint64 {
	t.Helper()
	out, stderr, err := cli(t, 2*time.Minute, "count", "--json", "--device", "cpu", "--progress", "none", file)
	if err != nil {
		t.Fatalf("count %s: %v\n%s", file, err, stderr)
	}
	var rep struct {
		Triangles uint64 `json:"triangles"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("count output %q: %v", out, err)
	}
	return rep.Triangles
}

// repoFile returns a path in the repository from this package's directory.
func repoFile(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

// grqc is the shipped ca-GrQc graph; 48260 is SNAP's published count (also
// in shared/datasets/MANIFEST.tsv), checked here against wholeCount too.
const grqcTriangles = 48260

func grqc(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(repoFile("testdata", "ca-GrQc.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// genGraph writes an rmat graph with the binary and returns its path.
func genGraph(t testing.TB, scale, edgeFactor int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), fmt.Sprintf("rmat%d.bin", scale))
	if _, stderr, err := cli(t, 2*time.Minute, "gen", "rmat", "--scale", strconv.Itoa(scale), "--edge-factor", strconv.Itoa(edgeFactor), "--seed", "7", "-o", p); err != nil {
		t.Fatalf("gen: %v\n%s", err, stderr)
	}
	return p
}

// partitionShards partitions file into a shard store and returns its
// directory.
func partitionShards(t testing.TB, file string, p int, scheme string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shards")
	if _, stderr, err := cli(t, 2*time.Minute, "partition", file, "-o", dir, "-P", strconv.Itoa(p), "--scheme", scheme, "--progress", "none"); err != nil {
		t.Fatalf("partition: %v\n%s", err, stderr)
	}
	return dir
}

// waitFor polls cond every 20 ms until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dataDirs are the --data-dir flags that let a test coordinator read the
// repository's test graphs and the graphs tests write to their temporary
// directories.
func dataDirs() []string {
	testdata, err := filepath.Abs(repoFile("testdata"))
	if err != nil {
		panic(err)
	}
	return []string{"--data-dir", testdata, "--data-dir", os.TempDir()}
}
