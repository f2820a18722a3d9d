package coordinator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
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

func cpuFactory(workers int) func() (kernels.Counter, error) {
	return func() (kernels.Counter, error) {
		return kernels.NewCPU("merge", kernels.CPUOptions{Workers: workers})
	}
}

func wholeCount(t testing.TB, fwd *graph.CSR) uint64 {
	t.Helper()
	// The reference kernel is the independent count (a different method
	// from the merge kernel the runner uses).
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

func TestRunLocalMatchesWholeGraph(t *testing.T) {
	fwd := testForward(t, 11, 5)
	want := wholeCount(t, fwd)
	if want == 0 {
		t.Fatal("test graph has no triangles")
	}
	for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
		for _, p := range []int{1, 2, 3, 5} {
			for _, workers := range []int{1, 3} {
				t.Run(fmt.Sprintf("%v/P%d/w%d", sc, p, workers), func(t *testing.T) {
					part, err := partition.Split(fwd, sc, p, 2)
					if err != nil {
						t.Fatal(err)
					}
					tasks := part.Subtasks()
					var calls atomic.Int64
					res, err := RunLocal(context.Background(), PartitionSource{Part: part}, tasks, LocalConfig{
						Workers:    workers,
						NewCounter: cpuFactory(1),
						CacheBytes: 1 << 12, // tiny: exercise eviction
						Progress:   func(done, total int) { calls.Add(1) },
					})
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
					}
				})
			}
		}
	}
}

// countingSource counts loads per block and can fail one block.
type countingSource struct {
	src   BlockSource
	mu    sync.Mutex
	loads map[[2]int]int
	bad   [2]int
}

func (s *countingSource) Block(ctx context.Context, i, j int) (*graph.CSR, error) {
	s.mu.Lock()
	s.loads[[2]int{i, j}]++
	s.mu.Unlock()
	if [2]int{i, j} == s.bad {
		return nil, &storage.ShardError{Shard: storage.ShardName(i, j), Reason: "test damage", Err: storage.ErrChecksum}
	}
	return s.src.Block(ctx, i, j)
}

func TestRunLocalCacheLoadsOnce(t *testing.T) {
	fwd := testForward(t, 10, 9)
	part, err := partition.Split(fwd, storage.SchemeHash, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := &countingSource{src: PartitionSource{Part: part}, loads: map[[2]int]int{}, bad: [2]int{-1, -1}}
	res, err := RunLocal(context.Background(), src, part.Subtasks(), LocalConfig{Workers: 4, NewCounter: cpuFactory(1), CacheBytes: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	if res.Triangles != wholeCount(t, fwd) {
		t.Fatalf("count %d, whole graph %d", res.Triangles, wholeCount(t, fwd))
	}
	for ij, n := range src.loads {
		if n != 1 {
			t.Fatalf("block %v loaded %d times with an unbounded cache", ij, n)
		}
	}
}

func TestRunLocalErrorNamesSubtaskAndShard(t *testing.T) {
	fwd := testForward(t, 9, 2)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := &countingSource{src: PartitionSource{Part: part}, loads: map[[2]int]int{}, bad: [2]int{2, 1}}
	_, err = RunLocal(context.Background(), src, part.Subtasks(), LocalConfig{Workers: 2, NewCounter: cpuFactory(1)})
	var se *SubtaskError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SubtaskError", err)
	}
	if !errors.Is(err, storage.ErrChecksum) {
		t.Fatalf("error %v lost its cause", err)
	}
	uses := se.I == 2 && se.J == 1 || se.I == 2 && se.K == 1 || se.J == 2 && se.K == 1
	if !uses {
		t.Fatalf("failed subtask (%d,%d,%d) does not read block (2,1)", se.I, se.J, se.K)
	}
	if msg := err.Error(); !strings.Contains(msg, storage.ShardName(2, 1)) {
		t.Fatalf("error %q does not name the shard", msg)
	}
}

// failingCounter fails on its n-th call.
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

func TestRunLocalKernelErrorCancels(t *testing.T) {
	fwd := testForward(t, 9, 4)
	part, err := partition.Split(fwd, storage.SchemeHash, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	tasks := part.Subtasks()
	_, err = RunLocal(context.Background(), PartitionSource{Part: part}, tasks, LocalConfig{
		Workers:    2,
		NewCounter: func() (kernels.Counter, error) { return failingCounter{calls: &calls, at: 3}, nil },
	})
	if err == nil || !strings.Contains(err.Error(), "device lost") || !strings.Contains(err.Error(), "kernel failing") {
		t.Fatalf("got %v, want the kernel error", err)
	}
	if n := calls.Load(); n >= int64(len(tasks)) {
		t.Fatalf("%d of %d subtasks ran after the failure", n, len(tasks))
	}
}

// TestRunLocalSumsEachOnce gives every subtask a distinct power of two so
// a double or missing count changes the sum.
func TestRunLocalSumsEachOnce(t *testing.T) {
	tasks := make([]partition.Subtask, 60)
	for x := range tasks {
		tasks[x] = partition.Subtask{I: x, J: 0, K: 0}
	}
	blocks := map[int]*graph.CSR{}
	for x := range tasks {
		blocks[x] = &graph.CSR{Offsets: make([]uint64, x+1)} // rows encode the task
	}
	src := blockFunc(func(i, j int) *graph.CSR {
		if j == 0 && i < len(tasks) {
			return blocks[i]
		}
		return &graph.CSR{Offsets: []uint64{0}}
	})
	res, err := RunLocal(context.Background(), src, tasks, LocalConfig{
		Workers: 7,
		NewCounter: func() (kernels.Counter, error) {
			return rowBitCounter{}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(1)<<60 - 1; res.Triangles != want {
		t.Fatalf("sum %x, want %x", res.Triangles, want)
	}
}

type blockFunc func(i, j int) *graph.CSR

func (f blockFunc) Block(ctx context.Context, i, j int) (*graph.CSR, error) { return f(i, j), nil }

// rowBitCounter reports 2^(rows of IJ).
type rowBitCounter struct{}

func (rowBitCounter) Name() string { return "rowbit" }
func (rowBitCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	return kernels.Result{Triangles: 1 << uint(t.IJ.NumRows())}, nil
}

func TestRunLocalFromStore(t *testing.T) {
	fwd := testForward(t, 10, 13)
	ctx := context.Background()
	st := storage.NewMemStore()
	if _, err := partition.PartitionGraph(ctx, fwd, storage.GraphStats{Vertices: fwd.NumRows(), Edges: fwd.NumEdges()}, st,
		partition.Config{Scheme: storage.SchemeRange, P: 3, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	m, err := storage.ReadManifest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunLocal(ctx, StoreSource{Store: st, Manifest: m}, partition.Subtasks(m), LocalConfig{Workers: 2, NewCounter: cpuFactory(1)})
	if err != nil {
		t.Fatal(err)
	}
	if want := wholeCount(t, fwd); res.Triangles != want {
		t.Fatalf("count through shards %d, whole graph %d", res.Triangles, want)
	}
}

// BenchmarkRunLocalWorkers compares subtasks one at a time with a
// parallel kernel against several subtasks at once with serial kernels
// (P = 4), next to the whole-graph count, in memory and through shards.
// TRIGRID_BENCH_SCALE sets the R-MAT scale (edge factor 16); default 16.
// The kernel is "auto", the CLI's default.
func BenchmarkRunLocalWorkers(b *testing.B) {
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
	factory := func(workers int) func() (kernels.Counter, error) {
		return func() (kernels.Counter, error) { return kernels.NewCPU("auto", kernels.CPUOptions{Workers: workers}) }
	}
	var want uint64
	b.Run("whole", func(b *testing.B) {
		c, err := kernels.NewCPU("auto", kernels.CPUOptions{Workers: procs})
		if err != nil {
			b.Fatal(err)
		}
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
			src  BlockSource
		}{{"mem", PartitionSource{Part: part}}, {"shards", StoreSource{Store: st, Manifest: m}}}
		for _, s := range srcs {
			for _, w := range []struct{ tasks, kernel, ahead int }{{1, procs, 2}, {1, procs, 0}, {procs, 1, 2}, {procs, procs, 2}, {2 * procs, 1, 2}} {
				if w.ahead == 0 && s.name == "mem" {
					continue // nothing to decode
				}
				b.Run(fmt.Sprintf("%v/P4/%s/tasks%d-kernel%d-ahead%d", sc, s.name, w.tasks, w.kernel, w.ahead), func(b *testing.B) {
					defer func(a int) { prefetchAhead = a }(prefetchAhead)
					prefetchAhead = w.ahead
					for b.Loop() {
						res, err := RunLocal(ctx, s.src, part.Subtasks(), LocalConfig{Workers: w.tasks, NewCounter: factory(w.kernel)})
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
