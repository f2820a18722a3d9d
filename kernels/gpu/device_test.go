package gpu

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/kernels"
)

// deviceLib opens the real CUDA library named by $TRIGRID_CUDA_LIB, or
// skips: these tests need a GPU (scripts/device.sh check runs them).
func deviceLib(t *testing.T) *Library {
	t.Helper()
	path := os.Getenv(EnvLibrary)
	if path == "" {
		t.Skip("TRIGRID_CUDA_LIB is not set: no GPU conformance tests")
	}
	lib, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	devs, err := lib.Devices()
	if err != nil || len(devs) == 0 {
		t.Fatalf("no device: %v", err)
	}
	t.Logf("device %+v", devs[0])
	return lib
}

// cpuCount is the independent count every GPU result is checked against.
func cpuCount(t testing.TB, s kernels.Subtask) uint64 {
	t.Helper()
	c, err := kernels.NewCPU("auto", kernels.CPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Count(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return r.Triangles
}

// checkAll runs every built kernel on the whole graph and on P = 2, 3, 4
// hash and range partitions.
func checkAll(t *testing.T, lib *Library, name string, g *graph.CSR, parts bool) {
	want := cpuCount(t, kernels.Whole(g))
	for _, k := range Kernels() {
		c, err := lib.NewCounter(k)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Count(context.Background(), kernels.Whole(g))
		if err != nil {
			t.Errorf("%s/%s: %v", name, k, err)
			c.Close()
			continue
		}
		if r.Triangles != want {
			t.Errorf("%s/%s: %d triangles, want %d", name, k, r.Triangles, want)
		}
		for p := 2; parts && p <= 4; p++ {
			for _, scheme := range []string{"hash", "range"} {
				var sum uint64
				for _, s := range partitioned(g, p, scheme) {
					r, err := c.Count(context.Background(), s)
					if err != nil {
						t.Fatalf("%s/%s/%s P=%d: %v", name, k, scheme, p, err)
					}
					sum += r.Triangles
				}
				if sum != want {
					t.Errorf("%s/%s/%s P=%d: %d, want %d", name, k, scheme, p, sum, want)
				}
			}
		}
		c.Close()
	}
}

func TestDeviceDatasets(t *testing.T) {
	lib := deviceLib(t)
	eachDataset(t, func(name string, g *graph.CSR) {
		checkAll(t, lib, name, g, true)
	})
}

func TestDeviceSynthetic(t *testing.T) {
	lib := deviceLib(t)
	checkAll(t, lib, "hub", forward(t, hubEdges(20000)), true)
	checkAll(t, lib, "single", forward(t, []graph.Edge{{U: 0, V: 1}}), true)
	checkAll(t, lib, "triangle", forward(t, []graph.Edge{{U: 0, V: 1}, {U: 1, V: 2}, {U: 2, V: 0}}), true)
	// A non-forward hub block: row 0 holds every column, in three views.
	n := 300000
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
	want := mustReference(t, s)
	empty := &graph.CSR{Offsets: []uint64{0, 0}, NCols: int64(n)}
	for _, k := range Kernels() {
		c, err := lib.NewCounter(k)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := c.Count(context.Background(), s); err != nil || r.Triangles != want {
			t.Errorf("hub block/%s: %d, %v; want %d", k, r.Triangles, err, want)
		}
		if r, err := c.Count(context.Background(), kernels.Subtask{IJ: empty, IK: empty, JK: col}); err != nil || r.Triangles != 0 {
			t.Errorf("empty block/%s: %d, %v", k, r.Triangles, err)
		}
		c.Close()
	}
}

func TestDeviceRMAT(t *testing.T) {
	lib := deviceLib(t)
	maxScale, _ := strconv.Atoi(envOr("TRIGRID_MAX_SCALE", "20"))
	for scale := 16; scale <= maxScale; scale++ {
		edges, err := gen.RMAT(scale, 16, uint64(scale), 0)
		if err != nil {
			t.Fatal(err)
		}
		g := forward(t, edges)
		checkAll(t, lib, "rmat"+strconv.Itoa(scale), g, scale <= 18)
	}
}

func TestDevicePreprocess(t *testing.T) {
	lib := deviceLib(t)
	checkPreprocess(t, lib, randomEdges(5000, 60000, 8))
	checkPreprocess(t, lib, hubEdges(50000))
	edges, err := gen.RMAT(18, 16, 18, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkPreprocess(t, lib, edges)
}
