package worker

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// refLibrary builds the plain-C reference library of the CUDA library's
// ABI (kernels/cuda/ref) with gcc, presenting devices fake devices
// (TG_REF_DEVICES), or skips the test where gcc is missing (fails in CI).
func refLibrary(t *testing.T, devices int) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		if testgraphs.InCI() {
			t.Fatal("no gcc: cannot build the reference library")
		}
		t.Skip("no gcc: cannot build the reference library")
	}
	src := filepath.Join("..", "kernels", "cuda")
	files, _ := filepath.Glob(filepath.Join(src, "ref", "*.c"))
	lib := filepath.Join(t.TempDir(), "libtrigrid_ref.so")
	args := append([]string{"-O2", "-std=c11", "-fPIC", "-shared", "-I", src, fmt.Sprintf("-DTG_REF_DEVICES=%d", devices), "-o", lib}, files...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return lib
}

// gpuSlots are the worker slots of the selected devices of lib, and the
// counters they made.
type gpuSlots struct {
	slots []Slot
	mu    sync.Mutex
	made  []*gpu.Counter
}

func newGPUSlots(t *testing.T, lib string, devices []int, memLimit uint64) *gpuSlots {
	t.Helper()
	sel, err := gpu.Select("gpu", "auto", gpu.SelectOptions{Library: gpu.Options{Path: lib, MemLimit: memLimit}, Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	g := &gpuSlots{}
	for _, s := range sel.Slots {
		g.slots = append(g.slots, Slot{Device: api.Device{Kind: "gpu", Name: s.Device}, NewCounter: func(string) (kernels.Counter, error) {
			c, err := s.New()
			if gc, ok := c.(*gpu.Counter); ok && err == nil {
				g.mu.Lock()
				g.made = append(g.made, gc)
				g.mu.Unlock()
			}
			return c, err
		}})
	}
	return g
}

func (g *gpuSlots) uploads() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, c := range g.made {
		n += c.Uploads()
	}
	return n
}

// shardStore partitions fwd into a file store of p x p blocks and returns
// its directory, manifest and subtasks.
func shardStore(t *testing.T, fwd *graph.CSR, p int) (string, *storage.Manifest, []partition.Subtask) {
	t.Helper()
	dir := t.TempDir()
	st, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := partitionInto(t, st, fwd, storage.SchemeHash, p)
	return dir, m, partition.Subtasks(m)
}

// One worker with three devices (the reference library presenting three)
// counts a store's subtasks on all of them, one stream each, exactly; each
// result names the device that counted it.
func TestRunSeveralDevicesOfTheReferenceLibrary(t *testing.T) {
	lib := refLibrary(t, 3)
	fwd := testForward(t, 11, 3)
	dir, _, tasks := shardStore(t, fwd, 4)
	g := newGPUSlots(t, lib, []int{0, 1, 2}, 0)
	// A slot whose stream runs dry takes another's work, so a slot that
	// starts late may find nothing left; each device's first count waits
	// until every device has begun one, so each counts some.
	all := newFirstCountBarrier(len(g.slots))
	for n := range g.slots {
		next := g.slots[n].NewCounter
		g.slots[n].NewCounter = func(k string) (kernels.Counter, error) {
			c, err := next(k)
			if gc, ok := c.(*gpu.Counter); ok && err == nil {
				return &barrierCounter{Counter: gc, all: all}, nil
			}
			return c, err
		}
	}
	as := assignments("j", dir, tasks)
	conn := newFakeConn(as)
	cfg := testConfig(t, conn, g.slots, nil)
	cfg.Prefetch, cfg.Loaders = 8, 4
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rs := conn.check(t, as)
	if got, want := sumResults(t, rs), referenceCount(t, fwd); got != want {
		t.Fatalf("three devices counted %d, the reference %d", got, want)
	}
	per := make([]int, 3)
	for _, r := range rs {
		if r.Device < 0 || r.Device >= 3 {
			t.Fatalf("result of subtask %d names device %d", r.Ref.Index, r.Device)
		}
		per[r.Device]++
	}
	st := w.Stats()
	for d, n := range per {
		if n == 0 {
			t.Errorf("device %d counted nothing (%v)", d, per)
		}
		if st.Slots[d].Subtasks != n {
			t.Errorf("device %d: stats say %d subtasks, results %d", d, st.Slots[d].Subtasks, n)
		}
	}
}

// firstCountBarrier opens once n counters have each begun a count, or
// after a bound, so that a test that needs every slot to count is not at
// the mercy of which goroutine the machine runs first.
type firstCountBarrier struct {
	mu    sync.Mutex
	left  int
	open  chan struct{}
	bound time.Duration
}

func newFirstCountBarrier(n int) *firstCountBarrier {
	return &firstCountBarrier{left: n, open: make(chan struct{}), bound: 30 * time.Second}
}

func (b *firstCountBarrier) arrive() {
	b.mu.Lock()
	if b.left--; b.left == 0 {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-time.After(b.bound):
	}
}

// barrierCounter is a device counter whose first count waits at all; the
// embedded counter keeps every capability the worker looks for.
type barrierCounter struct {
	*gpu.Counter
	all  *firstCountBarrier
	once sync.Once
}

func (c *barrierCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	c.once.Do(c.all.arrive)
	return c.Counter.Count(ctx, t)
}

// The device keeps the blocks its subtasks share: with room for every
// block each is uploaded once; under a budget of three blocks at a time
// blocks are given up and uploaded again mid-run, and the count stays
// exact.
func TestRunDeviceBlockCacheUnderABudget(t *testing.T) {
	lib := refLibrary(t, 1)
	fwd := testForward(t, 11, 5)
	dir, m, tasks := shardStore(t, fwd, 4)
	want := referenceCount(t, fwd)
	var most int64
	for _, s := range m.Shards {
		most = max(most, gpu.BlockBytes(int64(s.Rows), int64(s.Edges)))
	}
	for _, tc := range []struct {
		name   string
		limit  uint64
		evicts bool
	}{
		{"room for all", 0, false},
		{"three blocks", uint64(gpu.ContextBytes + 3*most + 4096), true},
	} {
		g := newGPUSlots(t, lib, []int{0}, tc.limit)
		as := assignments("j", dir, tasks)
		conn := newFakeConn(as)
		cfg := testConfig(t, conn, g.slots, nil)
		cfg.Prefetch, cfg.Loaders = 16, 4
		runWorker(t, cfg)
		if got := sumResults(t, conn.check(t, as)); got != want {
			t.Fatalf("%s: counted %d, the reference %d", tc.name, got, want)
		}
		n, blocks := g.uploads(), len(m.Shards)
		switch {
		case !tc.evicts && n != blocks:
			t.Errorf("%s: %d uploads of %d blocks, want each once", tc.name, n, blocks)
		case tc.evicts && n <= blocks:
			t.Errorf("%s: %d uploads of %d blocks, want blocks given up and uploaded again", tc.name, n, blocks)
		}
	}
}
