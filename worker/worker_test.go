package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

func TestRunMatchesWholeGraph(t *testing.T) {
	fwd := testForward(t, 10, 5)
	want := referenceCount(t, fwd)
	if want == 0 {
		t.Fatal("test graph has no triangles")
	}
	ps := []int{1, 3}
	if testlong.Enabled() {
		ps = []int{1, 2, 3, 4}
	}
	for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
		for _, p := range ps {
			for _, sp := range [][2]int{{1, 0}, {3, 2}} {
				slots, prefetch := sp[0], sp[1]
				{
					t.Run(fmt.Sprintf("%v/P%d/slots%d/prefetch%d", sc, p, slots, prefetch), func(t *testing.T) {
						t.Parallel()
						part, err := partition.Split(fwd, sc, p, 2)
						if err != nil {
							t.Fatal(err)
						}
						as := assignments("j", "", part.Subtasks())
						conn := newFakeConn(as)
						cfg := testConfig(t, conn, cpuSlots(slots, "merge"), PartitionSource{Part: part})
						cfg.Prefetch, cfg.MaxPrefetch = prefetch, prefetch
						cfg.CacheBytes = 1 << 12 // tiny: exercise eviction
						runWorker(t, cfg)
						if got := sumResults(t, conn.check(t, as)); got != want {
							t.Fatalf("worker counted %d, whole graph %d", got, want)
						}
						for _, m := range conn.pulls {
							if m < 1 || m > slots*(1+prefetch) {
								t.Fatalf("pulled up to %d with %d slots and prefetch %d", m, slots, prefetch)
							}
						}
						if len(conn.hello) != 1 || conn.hello[0].Slots != slots || len(conn.hello[0].Devices) != slots {
							t.Fatalf("hello %+v", conn.hello)
						}
					})
				}
			}
		}
	}
}

// TestRunFromStore counts through shards named by the assignments' store
// URL, which the worker opens itself.
func TestRunFromStore(t *testing.T) {
	fwd := testForward(t, 10, 13)
	ctx := context.Background()
	url := "mem://worker-test-" + t.Name()
	st, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := partition.PartitionGraph(ctx, fwd, storage.GraphStats{Vertices: fwd.NumRows(), Edges: fwd.NumEdges()}, st,
		partition.Config{Scheme: storage.SchemeRange, P: 3, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	m, err := storage.ReadManifest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	as := assignments("j", url, partition.Subtasks(m))
	conn := newFakeConn(as)
	runWorker(t, testConfig(t, conn, cpuSlots(2, "hash"), nil))
	rs := conn.check(t, as)
	if got, want := sumResults(t, rs), referenceCount(t, fwd); got != want {
		t.Fatalf("count through shards %d, whole graph %d", got, want)
	}
	var fetch, decode time.Duration
	for _, r := range rs {
		fetch += r.Fetch
		decode += r.Decode
		if r.Kernel != "hash" || r.Worker != "test-worker" {
			t.Fatalf("result %+v: kernel or worker wrong", r)
		}
	}
	if fetch <= 0 || decode <= 0 {
		t.Fatalf("fetch %v, decode %v: load times not reported", fetch, decode)
	}
}

// countingSource counts loads per block and can fail one block.
type countingSource struct {
	src   Source
	mu    sync.Mutex
	loads map[[2]int]int
	bad   [2]int
}

func (s *countingSource) Block(ctx context.Context, i, j int) (*graph.CSR, LoadTimes, error) {
	s.mu.Lock()
	s.loads[[2]int{i, j}]++
	s.mu.Unlock()
	if [2]int{i, j} == s.bad {
		return nil, LoadTimes{}, &storage.ShardError{Shard: storage.ShardName(i, j), Reason: "test damage", Err: storage.ErrChecksum}
	}
	return s.src.Block(ctx, i, j)
}

func TestRunCacheLoadsOnce(t *testing.T) {
	fwd := testForward(t, 10, 9)
	part, err := partition.Split(fwd, storage.SchemeHash, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := &countingSource{src: PartitionSource{Part: part}, loads: map[[2]int]int{}, bad: [2]int{-1, -1}}
	as := assignments("j", "", part.Subtasks())
	conn := newFakeConn(as)
	cfg := testConfig(t, conn, cpuSlots(4, "merge"), src)
	cfg.CacheBytes = 1 << 40
	runWorker(t, cfg)
	if got, want := sumResults(t, conn.check(t, as)), referenceCount(t, fwd); got != want {
		t.Fatalf("count %d, whole graph %d", got, want)
	}
	for ij, n := range src.loads {
		if n != 1 {
			t.Fatalf("block %v loaded %d times with an unbounded cache", ij, n)
		}
	}
}

// TestRunBadBlockFailsItsSubtasks: a damaged shard fails exactly the
// subtasks that read it, with an error naming the shard, and the worker
// goes on with the others.
func TestRunBadBlockFailsItsSubtasks(t *testing.T) {
	fwd := testForward(t, 9, 2)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	bad := [2]int{2, 1}
	src := &countingSource{src: PartitionSource{Part: part}, loads: map[[2]int]int{}, bad: bad}
	as := assignments("j", "", part.Subtasks())
	conn := newFakeConn(as)
	runWorker(t, testConfig(t, conn, cpuSlots(2, "merge"), src))
	failed := 0
	for x, r := range conn.check(t, as) {
		a := as[x]
		uses := false
		for _, ij := range blocksOf(a) {
			uses = uses || ij == bad
		}
		if uses != (r.Err != "") {
			t.Fatalf("subtask (%d,%d,%d): reads the bad block %v, error %q", a.I, a.J, a.K, uses, r.Err)
		}
		if r.HandedBack {
			t.Fatalf("subtask %d handed back, not failed", x)
		}
		if uses {
			failed++
			if !strings.Contains(r.Err, storage.ShardName(2, 1)) || !strings.Contains(r.Err, "block (2,1)") {
				t.Fatalf("error %q does not name the shard and block", r.Err)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no subtask reads the bad block")
	}
}

// failingCounter fails on its at-th call and counts 1 otherwise.
type failingCounter struct {
	calls *atomic.Int64
	at    int64
}

func (f failingCounter) Name() string { return "failing" }
func (f failingCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	if f.calls.Add(1) == f.at {
		return kernels.Result{}, errors.New("device lost")
	}
	return kernels.Result{Triangles: 1}, nil
}

func TestRunKernelErrorIsAResult(t *testing.T) {
	fwd := testForward(t, 9, 4)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	slots := []Slot{{Device: api.Device{Kind: "gpu", Name: "fake"}, NewCounter: func(string) (kernels.Counter, error) {
		return failingCounter{calls: &calls, at: 3}, nil
	}}}
	as := assignments("j", "", part.Subtasks())
	conn := newFakeConn(as)
	runWorker(t, testConfig(t, conn, slots, PartitionSource{Part: part}))
	var failed int
	for _, r := range conn.check(t, as) {
		switch {
		case r.Err != "":
			failed++
			if !strings.Contains(r.Err, "device lost") || !strings.Contains(r.Err, "kernel failing on fake") {
				t.Fatalf("error %q does not carry the kernel's", r.Err)
			}
		case r.Triangles != 1:
			t.Fatalf("result %+v", r)
		}
	}
	if failed != 1 {
		t.Fatalf("%d failed results, want 1", failed)
	}
}

// TestRunSumsEachOnce gives every subtask a distinct power of two so a
// double or missing result changes the sum.
func TestRunSumsEachOnce(t *testing.T) {
	as := make([]api.Assignment, 60)
	for x := range as {
		as[x] = api.Assignment{Ref: api.SubtaskRef{Job: "bits", Index: x}, Attempt: 2, I: x}
	}
	src := blockFunc(func(i, j int) *graph.CSR {
		if j == 0 {
			return &graph.CSR{Offsets: make([]uint64, i+1)} // rows encode the task
		}
		return &graph.CSR{Offsets: []uint64{0}}
	})
	slots := make([]Slot, 7)
	for x := range slots {
		slots[x] = Slot{Device: api.Device{Kind: "gpu", Name: fmt.Sprint("g", x)}, NewCounter: func(string) (kernels.Counter, error) { return rowBitCounter{}, nil }}
	}
	conn := newFakeConn(as)
	runWorker(t, testConfig(t, conn, slots, src))
	var sum uint64
	for _, r := range conn.check(t, as) {
		sum += r.Triangles
	}
	if want := uint64(1)<<60 - 1; sum != want {
		t.Fatalf("sum %x, want %x", sum, want)
	}
}

type blockFunc func(i, j int) *graph.CSR

func (f blockFunc) Block(ctx context.Context, i, j int) (*graph.CSR, LoadTimes, error) {
	return f(i, j), LoadTimes{}, nil
}

// rowBitCounter reports 2^(rows of IJ).
type rowBitCounter struct{}

func (rowBitCounter) Name() string { return "rowbit" }
func (rowBitCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	return kernels.Result{Triangles: 1 << uint(t.IJ.NumRows())}, nil
}

// slotCounter records how many of its slot's counts run at once and how
// many run across all slots.
type slotCounter struct {
	mine, all *atomic.Int64
	maxMine   *atomic.Int64
	maxAll    *atomic.Int64
	used      *atomic.Int64
	// The slot's first count waits at start until every slot has begun
	// one: a slot whose queue runs dry takes another's work, so without it
	// a slot whose goroutine starts late may find nothing left.
	first *sync.Once
	start *firstCountBarrier
}

func (c slotCounter) Name() string { return "slot" }
func (c slotCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	c.first.Do(c.start.arrive)
	raise := func(v, m *atomic.Int64) {
		for x := v.Load(); ; x = v.Load() {
			old := m.Load()
			if x <= old || m.CompareAndSwap(old, x) {
				return
			}
		}
	}
	c.mine.Add(1)
	c.all.Add(1)
	raise(c.mine, c.maxMine)
	raise(c.all, c.maxAll)
	c.used.Add(1)
	time.Sleep(2 * time.Millisecond)
	c.mine.Add(-1)
	c.all.Add(-1)
	return kernels.Result{Triangles: 1}, nil
}

// TestRunSlots: every slot counts, each one assignment at a time, and no
// more run at once than there are slots.
func TestRunSlots(t *testing.T) {
	const nslots = 3
	var all, maxAll atomic.Int64
	mine := make([]atomic.Int64, nslots)
	maxMine := make([]atomic.Int64, nslots)
	used := make([]atomic.Int64, nslots)
	slots := make([]Slot, nslots)
	made := make([]atomic.Int64, nslots)
	first := make([]sync.Once, nslots)
	start := newFirstCountBarrier(nslots)
	for x := range slots {
		slots[x] = Slot{Device: api.Device{Kind: "gpu", Name: fmt.Sprint("gpu", x), Memory: 1 << 30}, NewCounter: func(string) (kernels.Counter, error) {
			made[x].Add(1)
			return slotCounter{mine: &mine[x], all: &all, maxMine: &maxMine[x], maxAll: &maxAll, used: &used[x],
				first: &first[x], start: start}, nil
		}}
	}
	as := make([]api.Assignment, 40)
	for x := range as {
		as[x] = api.Assignment{Ref: api.SubtaskRef{Job: "s", Index: x}, Attempt: 1}
	}
	src := blockFunc(func(i, j int) *graph.CSR { return &graph.CSR{Offsets: []uint64{0}} })
	conn := newFakeConn(as)
	runWorker(t, testConfig(t, conn, slots, src))
	conn.check(t, as)
	if maxAll.Load() > nslots {
		t.Fatalf("%d counts at once on %d slots", maxAll.Load(), nslots)
	}
	for x := range slots {
		if maxMine[x].Load() != 1 || used[x].Load() == 0 || made[x].Load() != 1 {
			t.Fatalf("slot %d: %d at once, %d counts, %d counters", x, maxMine[x].Load(), used[x].Load(), made[x].Load())
		}
	}
	if h := conn.hello[0]; len(h.Devices) != nslots || h.Devices[2].Name != "gpu2" || h.Slots != nslots {
		t.Fatalf("hello %+v", h)
	}
}

// blockingCounter counts 1 once release is closed or fails with ctx's
// error when ctx ends first; started receives one value per call.
type blockingCounter struct {
	started chan struct{}
	release chan struct{}
}

func (blockingCounter) Name() string { return "blocking" }
func (c blockingCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	c.started <- struct{}{}
	select {
	case <-c.release:
		return kernels.Result{Triangles: 1}, nil
	case <-ctx.Done():
		return kernels.Result{}, ctx.Err()
	}
}

func drainTest(t *testing.T, drain time.Duration, releaseAfterCancel bool) []api.Result {
	t.Helper()
	c := blockingCounter{started: make(chan struct{}, 100), release: make(chan struct{})}
	slots := []Slot{
		{Device: api.Device{Name: "a"}, NewCounter: func(string) (kernels.Counter, error) { return c, nil }},
		{Device: api.Device{Name: "b"}, NewCounter: func(string) (kernels.Counter, error) { return c, nil }},
	}
	as := make([]api.Assignment, 20)
	for x := range as {
		as[x] = api.Assignment{Ref: api.SubtaskRef{Job: "d", Index: x}, Attempt: 1}
	}
	conn := newFakeConn(as)
	conn.hold = true
	cfg := testConfig(t, conn, slots, blockFunc(func(i, j int) *graph.CSR { return &graph.CSR{Offsets: []uint64{0}} }))
	cfg.Prefetch = 3
	cfg.DrainTimeout = drain
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	<-c.started
	<-c.started // both slots counting
	cancel()
	if releaseAfterCancel {
		time.Sleep(10 * time.Millisecond)
		close(c.release)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	held := map[int]bool{}
	for _, r := range conn.results {
		if held[r.Ref.Index] {
			t.Fatalf("subtask %d reported twice", r.Ref.Index)
		}
		held[r.Ref.Index] = true
	}
	// Everything pulled is answered: 2 slots x (1 + 3 ahead).
	if len(conn.results) != 8 {
		t.Fatalf("%d results after drain, want the 8 pulled", len(conn.results))
	}
	return append([]api.Result(nil), conn.results...)
}

func TestRunCancelHandsBack(t *testing.T) {
	for _, r := range drainTest(t, 0, false) {
		if !r.HandedBack || !strings.Contains(r.Err, "draining") || r.Triangles != 0 {
			t.Fatalf("result %+v: want handed back", r)
		}
	}
}

func TestRunDrainFinishesRunning(t *testing.T) {
	counted, back := 0, 0
	for _, r := range drainTest(t, 10*time.Second, true) {
		switch {
		case r.HandedBack:
			back++
		case r.Err == "" && r.Triangles == 1:
			counted++
		default:
			t.Fatalf("result %+v", r)
		}
	}
	if counted != 2 || back != 6 {
		t.Fatalf("%d counted, %d handed back; want the 2 running counted and 6 queued handed back", counted, back)
	}
}

func TestRunPullErrorIsFatal(t *testing.T) {
	conn := newFakeConn(nil)
	conn.pullErr = errors.New("stream broken")
	w, err := New(testConfig(t, conn, cpuSlots(1, "merge"), nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "stream broken") {
		t.Fatalf("Run = %v, want the pull error", err)
	}
	if err := w.Run(context.Background()); err == nil {
		t.Fatal("a second Run succeeded")
	}
}

func TestRunNewCounterError(t *testing.T) {
	slots := cpuSlots(2, "merge")
	slots[1].Device.Name = "gpu7"
	slots[1].NewCounter = func(string) (kernels.Counter, error) { return nil, errors.New("no such device") }
	conn := newFakeConn([]api.Assignment{{Ref: api.SubtaskRef{Job: "x"}}})
	w, err := New(testConfig(t, conn, slots, nil))
	if err != nil {
		t.Fatal(err)
	}
	err = w.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "slot 1 (gpu7)") || !strings.Contains(err.Error(), "no such device") {
		t.Fatalf("Run = %v, want the slot's error", err)
	}
	if len(conn.hello) != 0 || len(conn.results) != 0 {
		t.Fatal("the worker said hello without its counters")
	}
}

func TestRunKernelPerAssignment(t *testing.T) {
	fwd := testForward(t, 9, 3)
	part, err := partition.Split(fwd, storage.SchemeHash, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	as := assignments("k", "", part.Subtasks())
	for x := range as {
		if x%2 == 1 {
			as[x].Kernel = "reference"
		}
	}
	conn := newFakeConn(as)
	runWorker(t, testConfig(t, conn, cpuSlots(1, "merge"), PartitionSource{Part: part}))
	rs := conn.check(t, as)
	for x, r := range rs {
		want := "merge"
		if x%2 == 1 {
			want = "reference"
		}
		if r.Kernel != want {
			t.Fatalf("subtask %d ran %q, asked for %q", x, r.Kernel, want)
		}
	}
	if got, want := sumResults(t, rs), referenceCount(t, fwd); got != want {
		t.Fatalf("count %d, whole graph %d", got, want)
	}
	as = []api.Assignment{{Ref: api.SubtaskRef{Job: "k"}, Attempt: 1, Kernel: "nosuch"}}
	conn = newFakeConn(as)
	runWorker(t, testConfig(t, conn, cpuSlots(1, "merge"), PartitionSource{Part: part}))
	if r := conn.check(t, as)[0]; !strings.Contains(r.Err, "nosuch") {
		t.Fatalf("unknown kernel: result %+v", r)
	}
}

func TestRunHeartbeats(t *testing.T) {
	c := blockingCounter{started: make(chan struct{}, 10), release: make(chan struct{})}
	slots := []Slot{{Device: api.Device{Name: "a"}, NewCounter: func(string) (kernels.Counter, error) { return c, nil }}}
	as := []api.Assignment{{Ref: api.SubtaskRef{Job: "h", Index: 0}, Attempt: 1}}
	conn := newFakeConn(as)
	cfg := testConfig(t, conn, slots, blockFunc(func(i, j int) *graph.CSR { return &graph.CSR{Offsets: []uint64{0}} }))
	cfg.HeartbeatInterval = time.Millisecond
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	<-c.started
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn.mu.Lock()
		n := len(conn.beats)
		var last api.Heartbeat
		if n > 0 {
			last = conn.beats[n-1]
		}
		conn.mu.Unlock()
		if n >= 3 {
			if last.Worker != "test-worker" || len(last.Running) != 1 || last.Running[0] != as[0].Ref {
				t.Fatalf("heartbeat %+v", last)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no heartbeats")
		}
		time.Sleep(time.Millisecond)
	}
	close(c.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	conn.check(t, as)
}

func TestConfigValidate(t *testing.T) {
	conn := newFakeConn(nil)
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"no conn", func(c *Config) { c.Conn = nil }, "no Conn"},
		{"no slots", func(c *Config) { c.Slots = nil }, "no slots"},
		{"nil counter", func(c *Config) { c.Slots = []Slot{{}} }, "no NewCounter"},
		{"negative prefetch", func(c *Config) { c.Prefetch = -1 }, "Prefetch"},
		{"negative drain", func(c *Config) { c.DrainTimeout = -1 }, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, conn, cpuSlots(1, "merge"), nil)
			tc.mod(&cfg)
			if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want %q", err, tc.want)
			}
		})
	}
	cfg := Config{Conn: conn, Slots: cpuSlots(1, "merge")}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.ID != "worker" || cfg.CacheBytes != DefaultCacheBytes || cfg.Logger == nil || cfg.OpenStore == nil || cfg.Cores < 1 {
		t.Fatalf("zero values not filled in: %+v", cfg)
	}
}

// cancelConn is a fakeConn that carries cancels.
type cancelConn struct {
	*fakeConn
	ch chan api.Cancel
}

func (c cancelConn) Cancels() <-chan api.Cancel { return c.ch }

// TestRunCancelledAttempts: a cancelled attempt, running or queued, is
// dropped without a result; the others are counted.
func TestRunCancelledAttempts(t *testing.T) {
	c := blockingCounter{started: make(chan struct{}, 10), release: make(chan struct{})}
	slots := []Slot{{Device: api.Device{Name: "a"}, NewCounter: func(string) (kernels.Counter, error) { return c, nil }}}
	as := make([]api.Assignment, 3)
	for x := range as {
		as[x] = api.Assignment{Ref: api.SubtaskRef{Job: "c", Index: x}, Attempt: 1}
	}
	conn := cancelConn{newFakeConn(as), make(chan api.Cancel)}
	cfg := testConfig(t, conn, slots, blockFunc(func(i, j int) *graph.CSR { return &graph.CSR{Offsets: []uint64{0}} }))
	cfg.Prefetch = 2
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	<-c.started // subtask 0 counts; 1 and 2 wait
	for held := 0; held < 3; {
		w.heldMu.Lock()
		held = len(w.held)
		w.heldMu.Unlock()
		time.Sleep(time.Millisecond)
	}
	conn.ch <- api.Cancel{Ref: as[2].Ref, Attempt: 2, Reason: "another attempt"} // not the held attempt: ignored
	conn.ch <- api.Cancel{Ref: as[2].Ref, Attempt: 1, Reason: "settled"}
	conn.ch <- api.Cancel{Ref: as[0].Ref, Attempt: 1, Reason: "settled"}
	<-c.started // subtask 1 starts once 0 is stopped
	close(c.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if len(conn.results) != 1 || conn.results[0].Ref.Index != 1 || conn.results[0].Triangles != 1 {
		t.Fatalf("results %+v, want subtask 1 alone", conn.results)
	}
}

// gatedConn's Pull waits for gate before handing out its assignments.
type gatedConn struct {
	cancelConn
	gate chan struct{}
}

func (c gatedConn) Pull(ctx context.Context, max int) ([]api.Assignment, error) {
	<-c.gate
	return c.cancelConn.Pull(ctx, max)
}

// TestRunCancelBeforeAssignment: a cancel that arrives before its
// assignment still drops it.
func TestRunCancelBeforeAssignment(t *testing.T) {
	as := []api.Assignment{{Ref: api.SubtaskRef{Job: "e", Index: 0}, Attempt: 3}, {Ref: api.SubtaskRef{Job: "e", Index: 1}, Attempt: 3}}
	conn := gatedConn{cancelConn{newFakeConn(as), make(chan api.Cancel)}, make(chan struct{})}
	slots := []Slot{{NewCounter: func(string) (kernels.Counter, error) { return rowBitCounter{}, nil }}}
	w, err := New(testConfig(t, conn, slots, blockFunc(func(i, j int) *graph.CSR { return &graph.CSR{Offsets: []uint64{0}} })))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	conn.ch <- api.Cancel{Ref: as[0].Ref, Attempt: 3}
	// The cancel arrives before its assignment: recorded before Pull
	// hands the assignments out.
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		w.heldMu.Lock()
		_, early := w.early[api.Cancel{Ref: as[0].Ref, Attempt: 3}]
		w.heldMu.Unlock()
		if early {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the worker did not record the early cancel")
		}
	}
	close(conn.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(conn.results) != 1 || conn.results[0].Ref.Index != 1 {
		t.Fatalf("results %+v, want subtask 1 alone", conn.results)
	}
}

// cancellingConn ends the worker's context inside Pull, returning its
// assignments all the same.
type cancellingConn struct {
	*fakeConn
	cancel context.CancelFunc
}

func (c cancellingConn) Pull(ctx context.Context, max int) ([]api.Assignment, error) {
	as, err := c.fakeConn.Pull(ctx, max)
	if err == nil {
		c.cancel()
	}
	return as, err
}

// TestRunAssignmentsAtDrainAreHandedBack: assignments that arrive as the
// worker starts draining get a result (handed back), never silence.
func TestRunAssignmentsAtDrainAreHandedBack(t *testing.T) {
	as := make([]api.Assignment, 4)
	for x := range as {
		as[x] = api.Assignment{Ref: api.SubtaskRef{Job: "d", Index: x}, Attempt: 1}
	}
	ctx, cancel := context.WithCancel(context.Background())
	conn := cancellingConn{newFakeConn(as), cancel}
	cfg := testConfig(t, conn, cpuSlots(1, "merge"), blockFunc(func(i, j int) *graph.CSR { return &graph.CSR{Offsets: []uint64{0}} }))
	cfg.Prefetch = 3
	cfg.DrainTimeout = 0
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range conn.check(t, as) {
		if !r.HandedBack {
			t.Fatalf("result %+v: want handed back", r)
		}
	}
}

// interruptedReportConn's first Report waits for its context to end and
// fails with its error, as a Report does that a drain cuts short; later
// Reports are recorded.
type interruptedReportConn struct {
	*fakeConn
	once      sync.Once
	reporting chan struct{} // closed when the first Report waits
}

func (c *interruptedReportConn) Report(ctx context.Context, r api.Result) error {
	first := false
	c.once.Do(func() { first = true })
	if first {
		close(c.reporting)
		<-ctx.Done()
		return ctx.Err()
	}
	return c.fakeConn.Report(ctx, r)
}

// TestRunDrainDeliversResultOnItsWay: a result whose Report the drain cut
// short is sent again and delivered, not dropped.
func TestRunDrainDeliversResultOnItsWay(t *testing.T) {
	as := []api.Assignment{{Ref: api.SubtaskRef{Job: "d", Index: 0}, Attempt: 1}}
	fc := newFakeConn(as)
	fc.hold = true
	conn := &interruptedReportConn{fakeConn: fc, reporting: make(chan struct{})}
	cfg := testConfig(t, conn, cpuSlots(1, "merge"), blockFunc(func(i, j int) *graph.CSR { return &graph.CSR{Offsets: []uint64{0}} }))
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case <-conn.reporting:
	case <-time.After(time.Minute):
		t.Fatal("no result reported")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel = %v, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after cancel")
	}
	r := fc.check(t, as)[0]
	if r.HandedBack || r.Err != "" {
		t.Fatalf("result %+v, want the count delivered", r)
	}
}
