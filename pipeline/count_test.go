package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

// writeEdges writes a messy edge list (duplicates, both directions, a
// self-loop, sparse ids) and returns its path and brute-force count.
func writeEdges(t *testing.T) (string, uint64) {
	t.Helper()
	var b strings.Builder
	var edges []graph.Edge
	add := func(u, v uint64) {
		fmt.Fprintf(&b, "%d %d\n", u, v)
		edges = append(edges, graph.Edge{U: u, V: v})
	}
	b.WriteString("# test graph\n")
	for u := uint64(0); u < 40; u++ {
		for v := u + 1; v < 40; v++ {
			if (u*7+v*13)%5 < 2 {
				add(u*1000+3, v*1000+3)
			}
		}
	}
	add(3, 1003)      // duplicate
	add(2003, 3)      // reversed
	add(77777, 77777) // self-loop of an id seen nowhere else
	path := filepath.Join(t.TempDir(), "g.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, bruteForce(edges)
}

func TestCountFileEveryMode(t *testing.T) {
	ctx := context.Background()
	path, want := writeEdges(t)
	whole, err := CountFile(ctx, path, testConfig(cpuSlots(1, "hash")))
	if err != nil {
		t.Fatal(err)
	}
	if whole.Triangles != want || whole.Removed.SelfLoops != 1 || whole.Removed.IsolatedIDs != 1 || whole.Removed.Duplicates == 0 {
		t.Fatalf("whole graph: %+v, want %d triangles, 1 loop, 1 isolated id, duplicates", whole, want)
	}
	for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
		for _, p := range []int{2, 3, 4} {
			cfg := testConfig(cpuSlots(2, "merge"))
			cfg.Scheme, cfg.P, cfg.Verify = sc, p, true
			rep, err := CountFilePartitioned(ctx, path, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Triangles != want || !rep.Verified || rep.Partition == nil || rep.Partition.P != p || len(rep.Partition.Subtasks) == 0 {
				t.Fatalf("%v P=%d: %d triangles (want %d), report %+v", sc, p, rep.Triangles, want, rep.Partition)
			}
			if rep.Edges != whole.Edges || *rep.Removed != *whole.Removed || rep.Wedges != whole.Wedges {
				t.Fatalf("%v P=%d: the partitioned count's statistics differ from the whole count's", sc, p)
			}

			st := storage.NewMemStore()
			sum, err := PartitionFile(ctx, path, st, testConfig(nil), partition.Config{Scheme: sc, P: p, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Graph.Edges != whole.Edges || sum.Clean == nil || sum.Clean.Duplicates != whole.Removed.Duplicates {
				t.Fatalf("%v P=%d: partition summary %+v disagrees with the count's statistics", sc, p, sum)
			}
			sh, err := CountShards(ctx, st, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if sh.Triangles != want || !sh.Verified {
				t.Fatalf("%v P=%d: shards counted %d (verified %v), want %d", sc, p, sh.Triangles, sh.Verified, want)
			}
		}
	}
}

// TestCountFileAutoP chooses P from a budget.
func TestCountFileAutoP(t *testing.T) {
	path, want := writeEdges(t)
	cfg := testConfig(cpuSlots(1, "hash"))
	cfg.P = 0
	if _, err := CountFilePartitioned(context.Background(), path, cfg); err == nil {
		t.Fatal("P = 0 without a budget was accepted")
	}
	var last *Report
	for cfg.Budget = 1 << 30; cfg.Budget > 0; cfg.Budget /= 2 {
		rep, err := CountFilePartitioned(context.Background(), path, cfg)
		if err != nil {
			if !strings.Contains(err.Error(), "choosing P") {
				t.Fatal(err)
			}
			break
		}
		if rep.Triangles != want {
			t.Fatalf("budget %d: %d triangles at P=%d, want %d", cfg.Budget, rep.Triangles, rep.Partition.P, want)
		}
		last = rep
	}
	if last == nil {
		t.Fatal("no budget chose a P")
	}
}

func TestCountDatasets(t *testing.T) {
	for _, d := range testgraphs.Datasets(t) {
		if d.Edges > 100000 || d.Edges > 15000 && !testlong.Enabled() {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			cfg := testConfig(cpuSlots(2, "auto"))
			cfg.Scheme, cfg.P = storage.SchemeRange, 3
			rep, err := CountFilePartitioned(context.Background(), d.Path, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Triangles != d.Triangles || rep.Edges != d.Edges {
				t.Fatalf("%d triangles, %d edges; the manifest says %d and %d", rep.Triangles, rep.Edges, d.Triangles, d.Edges)
			}
		})
	}
}

// lyingCounter adds one to every count.
type lyingCounter struct{ kernels.Counter }

func (c lyingCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	r, err := c.Counter.Count(ctx, t)
	r.Triangles++
	return r, err
}

func TestVerifyCatchesAWrongKernel(t *testing.T) {
	ctx := context.Background()
	path, _ := writeEdges(t)
	lying := []worker.Slot{{Device: api.Device{Name: "liar"}, NewCounter: func(string) (kernels.Counter, error) {
		c, err := kernels.NewCPU("merge", kernels.CPUOptions{Workers: 1})
		return lyingCounter{c}, err
	}}}
	cfg := testConfig(lying)
	cfg.Verify = true
	if _, err := CountFile(ctx, path, cfg); err == nil || !strings.Contains(err.Error(), "verify") {
		t.Fatalf("whole graph: %v, want a verify error", err)
	}
	cfg.P = 2
	if _, err := CountFilePartitioned(ctx, path, cfg); err == nil || !strings.Contains(err.Error(), "verify") {
		t.Fatalf("partitioned: %v, want a verify error", err)
	}
	st := storage.NewMemStore()
	if _, err := PartitionFile(ctx, path, st, testConfig(nil), partition.Config{Scheme: storage.SchemeHash, P: 2, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	_, err := CountShards(ctx, st, cfg)
	if err == nil || !strings.Contains(err.Error(), "verify: subtask (") {
		t.Fatalf("shards: %v, want a verify error naming a subtask", err)
	}
}

// fakeDevice is a kernels.Device that prepares compacted pairs resident
// only: it cleans and orients on the host (graph.Clean, graph.Orient) and
// can misreport.
type fakeDevice struct {
	kernels.Counter
	kernels.NoDevice
	fwd      *graph.CSR
	prepared int
	lie      bool // report one more wedge than there are
	tooSmall bool // every graph "does not fit"
}

var errTooBig = errors.New("fake device: out of memory")

func (d *fakeDevice) PrepareResident(ctx context.Context, pairs []uint32, n uint64) (kernels.PrepStats, error) {
	if d.tooSmall {
		return kernels.PrepStats{}, errTooBig
	}
	edges := make([]graph.Edge, len(pairs)/2)
	for x := range edges {
		edges[x] = graph.Edge{U: uint64(pairs[2*x]), V: uint64(pairs[2*x+1])}
	}
	fwd, cs, os, err := graph.ForwardFromEdges(edges, graph.OrderDegree, 1)
	if err != nil {
		return kernels.PrepStats{}, err
	}
	d.fwd = fwd
	d.prepared++
	st := kernels.PrepStats{Vertices: n, InputPairs: uint64(len(edges)), SelfLoops: cs.SelfLoops, Duplicates: cs.Duplicates,
		Edges: uint64(cs.Edges), Wedges: os.Wedges, MaxDegree: uint64(os.MaxDegree), MaxForward: uint64(os.MaxOutDegree)}
	if d.lie {
		st.Wedges++
	}
	return st, nil
}

func (d *fakeDevice) CountResident(ctx context.Context) (kernels.Result, error) {
	return d.Counter.Count(ctx, kernels.Whole(d.fwd))
}

func (d *fakeDevice) DoesNotFit(err error) bool { return errors.Is(err, errTooBig) }

func (d *fakeDevice) Caps() kernels.DeviceCaps { return kernels.DeviceCaps{Prepare: true} }

func TestCountFileDevicePath(t *testing.T) {
	ctx := context.Background()
	path, want := writeEdges(t)
	for _, tc := range []struct {
		name          string
		lie, tooSmall bool
		verify        bool
		wantErr       string
		wantPrepared  int
	}{
		{"device", false, false, false, "", 1},
		{"verified", false, false, true, "", 1},
		{"lying prep", true, false, true, "cleaning and orientation", 1},
		{"does not fit", false, true, false, "", 0},
		{"does not fit, verified", false, true, true, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cpu, err := kernels.NewCPU("merge", kernels.CPUOptions{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			dev := &fakeDevice{Counter: cpu, lie: tc.lie, tooSmall: tc.tooSmall}
			cfg := testConfig([]worker.Slot{{NewCounter: func(string) (kernels.Counter, error) { return dev, nil }}})
			cfg.Verify = tc.verify
			rep, err := CountFile(ctx, path, cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Triangles != want || dev.prepared != tc.wantPrepared || rep.Verified != tc.verify {
				t.Fatalf("%d triangles (want %d), prepared %d times (want %d), verified %v", rep.Triangles, want, dev.prepared, tc.wantPrepared, rep.Verified)
			}
			// What cleaning found is the host path's, whichever way the
			// edges went.
			hostCPU, err := kernels.NewCPU("merge", kernels.CPUOptions{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			host, err := CountFile(ctx, path, testConfig([]worker.Slot{{NewCounter: func(string) (kernels.Counter, error) { return hostCPU, nil }}}))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Vertices != host.Vertices || rep.Edges != host.Edges || rep.Wedges != host.Wedges || *rep.Removed != *host.Removed {
				t.Fatalf("figures %d vertices, %d edges, %d wedges, removed %+v; the host path's %d, %d, %d, %+v",
					rep.Vertices, rep.Edges, rep.Wedges, *rep.Removed, host.Vertices, host.Edges, host.Wedges, *host.Removed)
			}
		})
	}
}
