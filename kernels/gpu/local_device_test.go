package gpu

import (
	"context"
	"strconv"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/kernels"
)

// checkDeviceLocal compares every GPU kernel with a per-vertex mode with
// the CPU's per-vertex kernel ("local") on g, per vertex and per edge, at
// each P of ps (1: whole; else hash and range partitions).
func checkDeviceLocal(t *testing.T, lib *Library, name string, g *graph.CSR, ps []int) {
	cpu, err := kernels.NewCPU("local", kernels.CPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, wantV, wantE := countLocalAll(t, cpu.(kernels.LocalCounter), g, localPartitioned(g, 1, "hash"), true)
	if ref := cpuCount(t, kernels.Whole(g)); ref != want {
		t.Fatalf("%s: the CPU's per-vertex kernel counts %d, its auto kernel %d", name, want, ref)
	}
	for _, k := range LocalKernels() {
		c, err := lib.NewCounter(k)
		if err != nil {
			t.Fatal(err)
		}
		checkLocalCounts(t, c, name, g, want, wantV, wantE, ps)
		c.Close()
	}
}

// The datasets whole and at P = 3 (both schemes).
func TestDeviceLocalDatasets(t *testing.T) {
	lib := deviceLib(t)
	eachDataset(t, func(name string, g *graph.CSR) {
		checkDeviceLocal(t, lib, name, g, []int{1, 3})
	})
}

// rmat graphs up to $TRIGRID_LOCAL_MAX_SCALE (18 by default; the device
// check's other tests go further with TRIGRID_MAX_SCALE), partitioned up
// to scale 16.
func TestDeviceLocalRMAT(t *testing.T) {
	lib := deviceLib(t)
	maxScale, _ := strconv.Atoi(envOr("TRIGRID_LOCAL_MAX_SCALE", "18"))
	for scale := 14; scale <= maxScale; scale += 2 {
		edges, err := gen.RMAT(scale, 16, uint64(scale), 0)
		if err != nil {
			t.Fatal(err)
		}
		ps := []int{1}
		if scale <= 16 {
			ps = []int{1, 2, 3}
		}
		checkDeviceLocal(t, lib, "rmat"+strconv.Itoa(scale), forward(t, edges), ps)
	}
	checkDeviceLocal(t, lib, "hub", forward(t, hubEdges(20000)), []int{1, 2, 3})
	checkDeviceLocal(t, lib, "triangle", forward(t, []graph.Edge{{U: 0, V: 1}, {U: 1, V: 2}, {U: 2, V: 0}}), []int{1, 2, 3})
}

// A non-forward block with one hub row, in three views: every kernel with
// a per-vertex mode adds what the CPU's per-vertex kernel adds.
func TestDeviceLocalHubBlock(t *testing.T) {
	lib := deviceLib(t)
	n := 100000
	hub := &graph.CSR{Offsets: []uint64{0, uint64(n)}, Cols: make([]uint32, n), NCols: int64(n)}
	for i := range hub.Cols {
		hub.Cols[i] = uint32(i)
	}
	col := &graph.CSR{Offsets: make([]uint64, n+1), NCols: int64(n)}
	for v := 1; v <= n; v++ {
		col.Offsets[v] = uint64(v - 1)
		if v < n {
			col.Cols = append(col.Cols, uint32(v))
		}
	}
	col.Offsets[n] = uint64(len(col.Cols))
	s := kernels.Subtask{IJ: hub, IK: hub, JK: col}
	alloc := func() *kernels.Local {
		return &kernels.Local{VI: make([]uint64, 1), VJ: make([]uint64, n), VK: make([]uint64, n),
			EIJ: make([]uint64, n), EIK: make([]uint64, n), EJK: make([]uint64, len(col.Cols))}
	}
	cpu, err := kernels.NewCPU("local", kernels.CPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := alloc()
	wr, err := cpu.(kernels.LocalCounter).CountLocal(context.Background(), s, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range LocalKernels() {
		c, err := lib.NewCounter(k)
		if err != nil {
			t.Fatal(err)
		}
		got := alloc()
		r, err := c.CountLocal(context.Background(), s, got)
		c.Close()
		if err != nil || r.Triangles != wr.Triangles {
			t.Fatalf("%s: %d triangles, %v; want %d", k, r.Triangles, err, wr.Triangles)
		}
		for _, a := range [][2][]uint64{{got.VI, want.VI}, {got.VJ, want.VJ}, {got.VK, want.VK}, {got.EIJ, want.EIJ}, {got.EIK, want.EIK}, {got.EJK, want.EJK}} {
			for x := range a[0] {
				if a[0][x] != a[1][x] {
					t.Fatalf("%s: entry %d: %d, want %d", k, x, a[0][x], a[1][x])
				}
			}
		}
	}
}
