package worker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
)

func testForward(t testing.TB, scale int, seed uint64) *graph.CSR {
	t.Helper()
	edges, err := gen.RMAT(scale, 8, seed, 2)
	if err != nil {
		t.Fatal(err)
	}
	fwd, _, _, err := graph.ForwardFromEdges(edges, graph.OrderDegree, 2)
	if err != nil {
		t.Fatal(err)
	}
	return fwd
}

// referenceCount is the independent count: the reference kernel on the
// whole graph (a different method from the kernels the worker runs).
func referenceCount(t testing.TB, fwd *graph.CSR) uint64 {
	t.Helper()
	ref, err := kernels.NewCPU("reference", kernels.CPUOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ref.Count(context.Background(), kernels.Whole(fwd))
	if err != nil {
		t.Fatal(err)
	}
	return r.Triangles
}

// assignments turns subtasks into the assignments of one job.
func assignments(job api.JobID, store string, tasks []partition.Subtask) []api.Assignment {
	as := make([]api.Assignment, len(tasks))
	for x, s := range tasks {
		as[x] = api.Assignment{Ref: api.SubtaskRef{Job: job, Index: x}, Attempt: 1, I: s.I, J: s.J, K: s.K,
			Clip: s.Clip, TailOffset: s.TailOffset, Edges: s.Edges, Work: s.Work, Store: store}
	}
	return as
}

// fakeConn hands out a fixed list of assignments, then ErrNoMoreWork,
// and records what comes back. With hold set, Pull blocks once the list
// is empty until ctx ends instead of saying there is no more work.
type fakeConn struct {
	mu      sync.Mutex
	todo    []api.Assignment
	hold    bool
	hello   []api.Hello
	results []api.Result
	beats   []api.Heartbeat
	pulls   []int // max of each Pull
	pullErr error
	// gave is closed once every assignment has been handed out.
	gave chan struct{}
}

func newFakeConn(as []api.Assignment) *fakeConn {
	c := &fakeConn{todo: append([]api.Assignment(nil), as...), gave: make(chan struct{})}
	if len(as) == 0 {
		close(c.gave)
	}
	return c
}

func (c *fakeConn) Hello(ctx context.Context, h api.Hello) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hello = append(c.hello, h)
	return nil
}

func (c *fakeConn) Pull(ctx context.Context, max int) ([]api.Assignment, error) {
	c.mu.Lock()
	c.pulls = append(c.pulls, max)
	if err := ctx.Err(); err != nil {
		c.mu.Unlock()
		return nil, err // as a stream whose context has ended
	}
	if c.pullErr != nil {
		c.mu.Unlock()
		return nil, c.pullErr
	}
	if len(c.todo) == 0 {
		c.mu.Unlock()
		if c.hold {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, ErrNoMoreWork
	}
	n := min(max, len(c.todo))
	out := c.todo[:n:n]
	c.todo = c.todo[n:]
	if len(c.todo) == 0 {
		close(c.gave)
	}
	c.mu.Unlock()
	return out, nil
}

func (c *fakeConn) Report(ctx context.Context, r api.Result) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.results = append(c.results, r)
	return nil
}

func (c *fakeConn) Heartbeat(ctx context.Context, hb api.Heartbeat) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.beats = append(c.beats, hb)
	return nil
}

// check fails t unless every assignment of as got exactly one result, and
// returns the results by index.
func (c *fakeConn) check(t *testing.T, as []api.Assignment) []api.Result {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	byIndex := make([]api.Result, len(as))
	seen := make([]bool, len(as))
	for _, r := range c.results {
		x := r.Ref.Index
		if x < 0 || x >= len(as) || r.Ref != as[x].Ref {
			t.Fatalf("result for unknown subtask %+v", r.Ref)
		}
		if seen[x] {
			t.Fatalf("subtask %d reported twice", x)
		}
		if r.Attempt != as[x].Attempt {
			t.Fatalf("subtask %d: result for attempt %d, assignment was %d", x, r.Attempt, as[x].Attempt)
		}
		seen[x] = true
		byIndex[x] = r
	}
	for x, ok := range seen {
		if !ok {
			t.Fatalf("subtask %d (%d,%d,%d) got no result (%d results)", x, as[x].I, as[x].J, as[x].K, len(c.results))
		}
	}
	return byIndex
}

func sumResults(t *testing.T, rs []api.Result) uint64 {
	t.Helper()
	var sum uint64
	for _, r := range rs {
		if r.Err != "" || r.HandedBack {
			t.Fatalf("subtask %d (attempt %d): failed: %s", r.Ref.Index, r.Attempt, r.Err)
		}
		sum += r.Triangles
	}
	return sum
}

// cpuSlots returns n CPU slots counting with kernel (serial kernels).
func cpuSlots(n int, kernel string) []Slot {
	slots := make([]Slot, n)
	for x := range slots {
		slots[x] = Slot{Device: api.Device{Kind: "cpu", Name: fmt.Sprintf("cpu%d", x)},
			NewCounter: func(k string) (kernels.Counter, error) {
				if k == "" {
					k = kernel
				}
				return kernels.NewCPU(k, kernels.CPUOptions{Workers: 1})
			}}
	}
	return slots
}

func testConfig(t *testing.T, conn Conn, slots []Slot, src Source) Config {
	cfg := DefaultConfig()
	cfg.ID = "test-worker"
	cfg.Conn = conn
	cfg.Slots = slots
	cfg.Source = src
	cfg.HeartbeatInterval = 0
	cfg.Logger = slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return cfg
}

// tWriter sends log lines to t.Log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

func runWorker(t *testing.T, cfg Config) {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}
