package worker

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// slowSource serves a partition's blocks, each load taking delay, and
// records how many loads ran at once at most and how often each block
// was loaded.
type slowSource struct {
	src   Source
	delay time.Duration

	mu       sync.Mutex
	now, top int
	loads    map[[2]int]int
}

func (s *slowSource) Block(ctx context.Context, i, j int) (*graph.CSR, LoadTimes, error) {
	s.mu.Lock()
	s.now++
	s.top = max(s.top, s.now)
	s.loads[[2]int{i, j}]++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.now--
		s.mu.Unlock()
	}()
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, LoadTimes{}, ctx.Err()
	}
	b, lt, err := s.src.Block(ctx, i, j)
	lt.Decode += s.delay
	return b, lt, err
}

// noLeak fails t when more goroutines run than before once the ones a run
// stopped have had time to end.
func noLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines before the run, %d after:\n%s", before, runtime.NumGoroutine(), buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The loaders fetch the blocks of the held assignments several at a time,
// each block once, ahead of the one slot; the count is exact and the
// figures add up.
func TestLoadersLoadAheadInParallel(t *testing.T) {
	fwd := testForward(t, 10, 5)
	part, err := partition.Split(fwd, storage.SchemeHash, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := &slowSource{src: PartitionSource{Part: part}, delay: 20 * time.Millisecond, loads: map[[2]int]int{}}
	as := assignments("j", "", part.Subtasks())
	conn := newFakeConn(as)
	cfg := testConfig(t, conn, cpuSlots(1, "merge"), src)
	cfg.Prefetch, cfg.Loaders, cfg.CacheBytes = 16, 4, 1<<40
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := sumResults(t, conn.check(t, as)), referenceCount(t, fwd); got != want {
		t.Fatalf("count %d, whole graph %d", got, want)
	}
	if src.top < 2 {
		t.Errorf("at most %d loads ran at once with 4 loaders", src.top)
	}
	for ij, n := range src.loads {
		if n != 1 {
			t.Errorf("block %v loaded %d times", ij, n)
		}
	}
	st := w.Stats()
	if st.Loaders != 4 || st.Loads != len(src.loads) || len(st.Slots) != 1 || st.Slots[0].Subtasks != len(as) {
		t.Fatalf("stats %+v: want 4 loaders, %d loads, one slot of %d subtasks", st, len(src.loads), len(as))
	}
	if st.Decode < time.Duration(len(src.loads))*src.delay {
		t.Errorf("decode time %v below the loads' %v", st.Decode, time.Duration(len(src.loads))*src.delay)
	}
}

// A shard damaged on disk fails, mid-run, the subtasks that read it, with
// an error that names the shard; every other subtask counts exactly; the
// run's goroutines (loaders included) all end.
func TestLoadersCorruptShardMidRun(t *testing.T) {
	fwd := testForward(t, 10, 7)
	dir := t.TempDir()
	st, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := partitionInto(t, st, fwd, storage.SchemeHash, 3)
	bad := [2]int{1, 2}
	info, ok := m.Shard(bad[0], bad[1])
	if !ok {
		t.Fatalf("no shard %v", bad)
	}
	path := filepath.Join(dir, info.File)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	tasks := part.Subtasks()
	as := assignments("j", dir, tasks)
	before := runtime.NumGoroutine()
	conn := newFakeConn(as)
	cfg := testConfig(t, conn, cpuSlots(2, "merge"), nil)
	cfg.Prefetch, cfg.Loaders = 8, 4
	runWorker(t, cfg)
	failed := 0
	for x, r := range conn.check(t, as) {
		uses := false
		for _, ij := range blocksOf(as[x]) {
			uses = uses || ij == bad
		}
		switch {
		case uses && !strings.Contains(r.Err, info.File):
			t.Fatalf("subtask %v reads the damaged shard; error %q does not name %s", tasks[x], r.Err, info.File)
		case uses:
			failed++
		case r.Err != "":
			t.Fatalf("subtask %v failed: %s", tasks[x], r.Err)
		default:
			s := tasks[x]
			n, err := kernels.Reference(kernels.Subtask{IJ: part.Block(s.I, s.J), IK: part.Block(s.I, s.K), JK: part.Block(s.J, s.K),
				Clip: s.Clip, TailOffset: s.TailOffset})
			if err != nil || n != r.Triangles {
				t.Fatalf("subtask %v: counted %d, reference %d (%v)", tasks[x], r.Triangles, n, err)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no subtask read the damaged shard")
	}
	noLeak(t, before)
}

// A run cancelled while its loaders wait on slow loads stops them: Run
// returns, the loads in flight end with the run, and no goroutine stays.
func TestLoadersStopWithTheRun(t *testing.T) {
	fwd := testForward(t, 9, 3)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := &slowSource{src: PartitionSource{Part: part}, delay: time.Hour, loads: map[[2]int]int{}}
	as := assignments("j", "", part.Subtasks())
	before := runtime.NumGoroutine()
	conn := newFakeConn(as)
	cfg := testConfig(t, conn, cpuSlots(1, "merge"), src)
	cfg.Prefetch, cfg.Loaders = 8, 4
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		src.mu.Lock()
		n := src.now
		src.mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the loaders never started")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v after a cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	for _, r := range conn.results {
		if !r.HandedBack {
			t.Fatalf("subtask %d: %+v; want it handed back", r.Ref.Index, r)
		}
	}
	noLeak(t, before)
}

// stagingCounter is a counter whose device readies blocks (Stager): it
// records the blocks staged and counts with the reference kernel.
type stagingCounter struct {
	mu     sync.Mutex
	staged map[*graph.CSR]int
	calls  atomic.Int64
}

func (c *stagingCounter) Name() string { return "staging" }
func (c *stagingCounter) Stage(b *graph.CSR) {
	c.mu.Lock()
	c.staged[b]++
	c.mu.Unlock()
}
func (c *stagingCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	c.calls.Add(1)
	n, err := kernels.Reference(t)
	return kernels.Result{Triangles: n, KernelTime: time.Microsecond, Upload: time.Microsecond}, err
}

// The loaders stage each block they load for a GPU slot's device once,
// and none for a CPU slot; the slot's busy time is its uploads and
// kernels, and each result says which device counted it.
func TestLoadersStageForGPUSlots(t *testing.T) {
	fwd := testForward(t, 9, 6)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"gpu", "cpu"} {
		c := &stagingCounter{staged: map[*graph.CSR]int{}}
		slots := []Slot{{Device: api.Device{Kind: kind, Name: "dev"}, NewCounter: func(string) (kernels.Counter, error) { return c, nil }}}
		as := assignments("j", "", part.Subtasks())
		conn := newFakeConn(as)
		// Loads that take a while, so that the loaders get ahead of the
		// slot (a block the slot loads itself is not staged: its counter
		// readies it on its way).
		src := &slowSource{src: PartitionSource{Part: part}, delay: 3 * time.Millisecond, loads: map[[2]int]int{}}
		cfg := testConfig(t, conn, slots, src)
		cfg.Prefetch, cfg.Loaders, cfg.CacheBytes = 8, 3, 1<<40
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		rs := conn.check(t, as)
		if got, want := sumResults(t, rs), referenceCount(t, fwd); got != want {
			t.Fatalf("%s: count %d, whole graph %d", kind, got, want)
		}
		for b, n := range c.staged {
			if n != 1 {
				t.Errorf("%s: a block of %d edges staged %d times", kind, b.NumEdges(), n)
			}
		}
		if kind == "cpu" && len(c.staged) > 0 {
			t.Errorf("cpu: %d blocks staged for a CPU slot", len(c.staged))
		}
		if kind == "gpu" && len(c.staged) == 0 {
			t.Error("gpu: the loaders staged no block")
		}
		for _, r := range rs {
			if r.Busy != r.Upload+r.KernelTime || r.Upload != time.Microsecond || r.Device != 0 {
				t.Fatalf("%s: result %+v: want busy = upload + kernel, device 0", kind, r)
			}
		}
		s := w.Stats().Slots[0]
		if s.Busy != time.Duration(len(as))*2*time.Microsecond {
			t.Errorf("%s: slot busy %v, want %v", kind, s.Busy, time.Duration(len(as))*2*time.Microsecond)
		}
	}
}

// A worker with a GPU slot loads, beside the blocks of the one assignment
// it holds, the other blocks of its (I, J) group and of the groups after
// it in its row while the cache has room for them, and none without room;
// a CPU worker loads only what it holds.
func TestLoadersLoadTheGroupAhead(t *testing.T) {
	fwd := testForward(t, 10, 8)
	st, err := storage.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := StoreSource{Store: st, Manifest: partitionInto(t, st, fwd, storage.SchemeHash, 4)}
	one := []api.Assignment{{Ref: api.SubtaskRef{Job: "j", Index: 0}, Attempt: 1, I: 1, J: 2, K: 3}}
	for _, tc := range []struct {
		kind  string
		cache int64
		loads int // rows 1 and 2 of the group and row 3 of (1, 3), or the subtask's three blocks
	}{
		{"gpu", 1 << 40, 12},
		{"gpu", 1, 3},
		{"cpu", 1 << 40, 3},
	} {
		c := &stagingCounter{staged: map[*graph.CSR]int{}}
		slots := []Slot{{Device: api.Device{Kind: tc.kind, Name: "dev"}, NewCounter: func(string) (kernels.Counter, error) { return c, nil }}}
		conn := newFakeConn(one)
		src := &layoutSource{countingSource{src: store, loads: map[[2]int]int{}, bad: [2]int{-1, -1}}, store}
		cfg := testConfig(t, conn, slots, src)
		cfg.Loaders, cfg.CacheBytes = 2, tc.cache
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r := conn.check(t, one)[0]; r.Err != "" {
			t.Fatal(r.Err)
		}
		// Distinct blocks loaded (a cache of one byte loads some twice).
		if got := len(src.loads); got != tc.loads {
			t.Errorf("%s worker, cache %d: %d blocks loaded (%v), want %d", tc.kind, tc.cache, got, src.loads, tc.loads)
		}
		for ij := range src.loads {
			if ij[0] == 0 {
				t.Errorf("%s worker: block %v loaded, outside the group and the row's later ones", tc.kind, ij)
			}
		}
	}
}

// layoutSource is a countingSource that knows its layout.
type layoutSource struct {
	countingSource
	l Layouter
}

func (s *layoutSource) Layout() (int, func(i, j int) int64) { return s.l.Layout() }

// A cache made before its workers keeps what Preload loads for them, each
// block once, within its bound; shared by three workers it holds three
// times the bytes.
func TestBlocksPreloadAndShare(t *testing.T) {
	fwd := testForward(t, 9, 11)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := &layoutSource{countingSource{src: PartitionSource{Part: part}, loads: map[[2]int]int{}, bad: [2]int{-1, -1}}, PartitionSource{Part: part}}
	var order [][2]int
	for i := range 3 {
		for j := range 3 {
			order = append(order, [2]int{i, j}, [2]int{i, j})
		}
	}
	b := NewBlocks(1 << 40)
	b.Preload(context.Background(), src, order, 3)
	if s := b.Stats(); len(src.loads) != 9 || s.Loads != 9 {
		t.Fatalf("preloaded %d blocks (%d loads), want the 9 once each", len(src.loads), s.Loads)
	}
	for ij, n := range src.loads {
		if n != 1 || !b.cache.has(blockKey{"", ij[0], ij[1]}) {
			t.Fatalf("block %v loaded %d times, kept %v", ij, n, b.cache.has(blockKey{"", ij[0], ij[1]}))
		}
	}
	small := NewBlocks(1)
	small.Preload(context.Background(), src, order, 2)
	if s := small.Stats(); s.Loads != 0 {
		t.Fatalf("a cache of one byte preloaded %d blocks", s.Loads)
	}
	small.Share(3)
	if small.cache.limit != 3 {
		t.Fatalf("shared by 3, the bound is %d bytes, want 3", small.cache.limit)
	}
}

// groupBlocks: a group's rows, then up to groupRowsAhead rows after both.
func TestGroupBlocks(t *testing.T) {
	rows := func(bs [][2]int) []int {
		var out []int
		for x, b := range bs {
			if b[1] == 0 {
				out = append(out, b[0])
			}
			if x > 0 && b == bs[x-1] {
				t.Fatalf("block %v listed twice in a row", b)
			}
		}
		return out
	}
	for _, tc := range []struct {
		p, i, j int
		rows    []int
	}{
		{4, 0, 0, []int{0, 1, 2}},
		{4, 0, 2, []int{0, 2, 3}},
		{4, 3, 1, []int{3, 1}},
		{8, 1, 1, []int{1, 2, 3}},
		{0, 0, 0, nil},
	} {
		got := groupBlocks(tc.p, tc.i, tc.j)
		if r := rows(got); !slices.Equal(r, tc.rows) || len(got) != tc.p*len(tc.rows) {
			t.Errorf("groupBlocks(%d, %d, %d): rows %v (%d blocks), want %v", tc.p, tc.i, tc.j, r, len(got), tc.rows)
		}
	}
}
