package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
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

// cpuSlots returns n CPU slots counting with kernel on one goroutine each.
func cpuSlots(n int, kernel string) []worker.Slot {
	slots := make([]worker.Slot, n)
	for x := range slots {
		slots[x] = worker.Slot{Device: api.Device{Kind: "cpu", Name: "cpu"}, NewCounter: func(string) (kernels.Counter, error) {
			return kernels.NewCPU(kernel, kernels.CPUOptions{Workers: 1})
		}}
	}
	return slots
}

func testConfig(slots []worker.Slot) Config {
	cfg := DefaultConfig()
	cfg.Slots = slots
	cfg.Workers = 2
	return cfg
}

func wholeCount(t testing.TB, fwd *graph.CSR) uint64 {
	t.Helper()
	// The reference kernel is the independent count (a different method
	// from the kernels the runs use).
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

// bruteForce counts the triangles of an edge list by checking every
// vertex triple of the simple undirected graph it describes.
func bruteForce(edges []graph.Edge) uint64 {
	ids := map[uint64]int{}
	for _, e := range edges {
		for _, v := range []uint64{e.U, e.V} {
			if _, ok := ids[v]; !ok {
				ids[v] = len(ids)
			}
		}
	}
	n := len(ids)
	adj := make([][]bool, n)
	for i := range adj {
		adj[i] = make([]bool, n)
	}
	for _, e := range edges {
		u, v := ids[e.U], ids[e.V]
		if u != v {
			adj[u][v], adj[v][u] = true, true
		}
	}
	var c uint64
	for a := range n {
		for b := a + 1; b < n; b++ {
			if !adj[a][b] {
				continue
			}
			for d := b + 1; d < n; d++ {
				if adj[a][d] && adj[b][d] {
					c++
				}
			}
		}
	}
	return c
}

// TestRunLocalBruteForce runs small graphs through the scheduler and local
// workers, both schemes, P = 2, 3, 4, and checks against brute force.
func TestRunLocalBruteForce(t *testing.T) {
	for seed := range uint64(3) {
		edges, err := gen.RMAT(7, 6, seed+1, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteForce(edges)
		if want == 0 {
			t.Fatalf("seed %d: no triangles", seed)
		}
		fwd, _, _, err := graph.ForwardFromEdges(edges, graph.OrderDegree, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
			for _, p := range []int{2, 3, 4} {
				part, err := partition.Split(fwd, sc, p, 1)
				if err != nil {
					t.Fatal(err)
				}
				res, err := RunLocal(context.Background(), worker.PartitionSource{Part: part}, "", part.Subtasks(), testConfig(cpuSlots(2, "merge")))
				if err != nil {
					t.Fatal(err)
				}
				if res.Triangles != want {
					t.Fatalf("seed %d %v P=%d: local run counted %d, brute force %d", seed, sc, p, res.Triangles, want)
				}
			}
		}
	}
}

func TestRunLocalMatchesWholeGraph(t *testing.T) {
	fwd := testForward(t, 10, 5)
	want := wholeCount(t, fwd)
	if want == 0 {
		t.Fatal("test graph has no triangles")
	}
	for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
		for _, p := range []int{1, 2, 3, 4} {
			for _, slots := range []int{1, 3} {
				t.Run(fmt.Sprintf("%v/P%d/slots%d", sc, p, slots), func(t *testing.T) {
					part, err := partition.Split(fwd, sc, p, 2)
					if err != nil {
						t.Fatal(err)
					}
					tasks := part.Subtasks()
					var calls atomic.Int64
					cfg := testConfig(cpuSlots(slots, "hash"))
					cfg.CacheBytes = 1 << 12 // tiny: exercise eviction
					cfg.Progress = countProgress{&calls}
					res, err := RunLocal(context.Background(), worker.PartitionSource{Part: part}, "", tasks, cfg)
					if err != nil {
						t.Fatal(err)
					}
					if res.Triangles != want {
						t.Fatalf("local run counted %d, whole graph %d", res.Triangles, want)
					}
					if calls.Load() != int64(len(tasks)) || len(res.Subtasks) != len(tasks) {
						t.Fatalf("%d progress calls and %d results for %d subtasks", calls.Load(), len(res.Subtasks), len(tasks))
					}
					for x, r := range res.Subtasks {
						if r.I != tasks[x].I || r.J != tasks[x].J || r.K != tasks[x].K {
							t.Fatalf("result %d is for (%d,%d,%d), task is %+v", x, r.I, r.J, r.K, tasks[x])
						}
						if !strings.HasPrefix(r.Kernel, "hash") {
							t.Fatalf("result %d: kernel %q", x, r.Kernel)
						}
						if !strings.HasPrefix(string(r.Worker), "local-") {
							t.Fatalf("result %d from worker %q", x, r.Worker)
						}
					}
				})
			}
		}
	}
}

type countProgress struct{ n *atomic.Int64 }

func (countProgress) Start(string, string, int64) {}
func (p countProgress) Update(int64, int64)       { p.n.Add(1) }
func (countProgress) Done()                       {}

// failingSource fails one block with a shard error.
type failingSource struct {
	src worker.Source
	bad [2]int
}

func (s failingSource) Block(ctx context.Context, i, j int) (*graph.CSR, worker.LoadTimes, error) {
	if [2]int{i, j} == s.bad {
		return nil, worker.LoadTimes{}, &storage.ShardError{Shard: storage.ShardName(i, j), Reason: "test damage", Err: storage.ErrChecksum}
	}
	return s.src.Block(ctx, i, j)
}

func TestRunLocalErrorNamesSubtaskAndShard(t *testing.T) {
	fwd := testForward(t, 9, 2)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := failingSource{src: worker.PartitionSource{Part: part}, bad: [2]int{2, 1}}
	_, err = RunLocal(context.Background(), src, "", part.Subtasks(), testConfig(cpuSlots(2, "merge")))
	if err == nil {
		t.Fatal("a damaged block gave a count")
	}
	msg := err.Error()
	if !strings.Contains(msg, storage.ShardName(2, 1)) || !strings.Contains(msg, "block (2,1)") || !strings.Contains(msg, "subtask") {
		t.Fatalf("error %q does not name the subtask, block and shard", msg)
	}
}

// failingCounter fails on its at-th call.
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

func TestRunLocalKernelErrorFails(t *testing.T) {
	fwd := testForward(t, 9, 4)
	part, err := partition.Split(fwd, storage.SchemeHash, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	slots := []worker.Slot{{Device: api.Device{Name: "fake"}, NewCounter: func(string) (kernels.Counter, error) {
		return failingCounter{calls: &calls, at: 3}, nil
	}}}
	_, err = RunLocal(context.Background(), worker.PartitionSource{Part: part}, "", part.Subtasks(), testConfig(slots))
	if err == nil || !strings.Contains(err.Error(), "device lost") || !strings.Contains(err.Error(), "kernel failing") {
		t.Fatalf("got %v, want the kernel error", err)
	}
}

func TestRunLocalNoCounter(t *testing.T) {
	part, err := partition.Split(testForward(t, 8, 1), storage.SchemeHash, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	slots := []worker.Slot{{Device: api.Device{Name: "gpu9"}, NewCounter: func(string) (kernels.Counter, error) {
		return nil, errors.New("no such device")
	}}}
	_, err = RunLocal(context.Background(), worker.PartitionSource{Part: part}, "", part.Subtasks(), testConfig(slots))
	if err == nil || !strings.Contains(err.Error(), "no such device") {
		t.Fatalf("got %v, want the slot's error", err)
	}
}

func TestRunLocalCancel(t *testing.T) {
	part, err := partition.Split(testForward(t, 9, 1), storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunLocal(ctx, worker.PartitionSource{Part: part}, "", part.Subtasks(), testConfig(cpuSlots(2, "merge"))); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run = %v", err)
	}
}

// TestRunLocalSumsEachOnce gives every subtask a distinct power of two so
// a double or missing count changes the sum.
func TestRunLocalSumsEachOnce(t *testing.T) {
	tasks := make([]partition.Subtask, 60)
	for x := range tasks {
		tasks[x] = partition.Subtask{I: x, J: 0, K: 0}
	}
	src := blockFunc(func(i, j int) *graph.CSR {
		if j == 0 && i < len(tasks) {
			return &graph.CSR{Offsets: make([]uint64, i+1)} // rows encode the task
		}
		return &graph.CSR{Offsets: []uint64{0}}
	})
	slots := make([]worker.Slot, 7)
	for x := range slots {
		slots[x] = worker.Slot{NewCounter: func(string) (kernels.Counter, error) { return rowBitCounter{}, nil }}
	}
	res, err := RunLocal(context.Background(), src, "", tasks, testConfig(slots))
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(1)<<60 - 1; res.Triangles != want {
		t.Fatalf("sum %x, want %x", res.Triangles, want)
	}
}

type blockFunc func(i, j int) *graph.CSR

func (f blockFunc) Block(ctx context.Context, i, j int) (*graph.CSR, worker.LoadTimes, error) {
	return f(i, j), worker.LoadTimes{}, nil
}

// rowBitCounter reports 2^(rows of IJ).
type rowBitCounter struct{}

func (rowBitCounter) Name() string { return "rowbit" }
func (rowBitCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	return kernels.Result{Triangles: 1 << uint(t.IJ.NumRows())}, nil
}

func TestRunLocalFromStore(t *testing.T) {
	fwd := testForward(t, 10, 13)
	ctx := context.Background()
	url := "mem://pipeline-" + t.Name()
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
	want := wholeCount(t, fwd)
	// Through a source, and through the store URL the workers open.
	for _, tc := range []struct {
		src   worker.Source
		store string
	}{{worker.StoreSource{Store: st, Manifest: m}, ""}, {nil, url}} {
		res, err := RunLocal(ctx, tc.src, tc.store, partition.Subtasks(m), testConfig(cpuSlots(2, "merge")))
		if err != nil {
			t.Fatal(err)
		}
		if res.Triangles != want {
			t.Fatalf("count through shards %d, whole graph %d", res.Triangles, want)
		}
		var decode int64
		for _, s := range res.Subtasks {
			decode += int64(s.Decode)
		}
		if decode == 0 {
			t.Fatal("no decode time reported")
		}
	}
}

// BenchmarkRunLocal counts rmat (P = 4, kernel "auto") in memory and
// through shards with one CPU slot and a parallel kernel, next to the
// whole-graph count. TRIGRID_BENCH_SCALE sets the R-MAT scale (edge
// factor 16); default 16.
func BenchmarkRunLocal(b *testing.B) {
	scale := 16
	if s, err := strconv.Atoi(os.Getenv("TRIGRID_BENCH_SCALE")); err == nil && s > 0 {
		scale = s
	}
	edges, err := gen.RMAT(scale, 16, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	fwd, _, _, err := graph.ForwardFromEdges(edges, graph.OrderDegree, 0)
	if err != nil {
		b.Fatal(err)
	}
	edges = nil
	ctx := context.Background()
	procs := runtime.GOMAXPROCS(0)
	slot := worker.Slot{NewCounter: func(string) (kernels.Counter, error) {
		return kernels.NewCPU("auto", kernels.CPUOptions{Workers: procs})
	}}
	var want uint64
	b.Run("whole", func(b *testing.B) {
		c, _ := slot.NewCounter("")
		for b.Loop() {
			r, err := c.Count(ctx, kernels.Whole(fwd))
			if err != nil {
				b.Fatal(err)
			}
			want = r.Triangles
		}
	})
	for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
		part, err := partition.Split(fwd, sc, 4, 0)
		if err != nil {
			b.Fatal(err)
		}
		st := storage.NewMemStore()
		if _, err := partition.PartitionGraph(ctx, fwd, storage.GraphStats{Vertices: fwd.NumRows(), Edges: fwd.NumEdges()}, st,
			partition.Config{Scheme: sc, P: 4}); err != nil {
			b.Fatal(err)
		}
		m, err := storage.ReadManifest(ctx, st)
		if err != nil {
			b.Fatal(err)
		}
		srcs := []struct {
			name string
			src  worker.Source
		}{{"mem", worker.PartitionSource{Part: part}}, {"shards", worker.StoreSource{Store: st, Manifest: m}}}
		for _, s := range srcs {
			for _, ahead := range []int{0, 2} {
				b.Run(fmt.Sprintf("%v/P4/%s/prefetch%d", sc, s.name, ahead), func(b *testing.B) {
					cfg := DefaultConfig()
					cfg.Slots, cfg.Prefetch = []worker.Slot{slot}, ahead
					for b.Loop() {
						res, err := RunLocal(ctx, s.src, "", part.Subtasks(), cfg)
						if err != nil {
							b.Fatal(err)
						}
						if want != 0 && res.Triangles != want {
							b.Fatalf("counted %d, whole graph %d", res.Triangles, want)
						}
					}
				})
			}
		}
	}
}
