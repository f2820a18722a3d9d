package gpu

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/internal/testreflib"
	"github.com/trigrid/trigrid/kernels"
)

// refLibs is the CPU reference library and its wrong-ABI twin
// (testreflib), or skips the test when gcc or make is missing.
func refLibs(t *testing.T) (good, bad string) {
	t.Helper()
	return testreflib.Paths(t)
}

// forward builds a forward graph (ranks by (degree, id)) from edges with
// the graph package's CPU path.
func forward(t testing.TB, edges []graph.Edge) *graph.CSR {
	t.Helper()
	g, _, _, err := graph.ForwardFromEdges(edges, graph.OrderDegree, 2)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// eachDataset calls fn with the forward graph of every dataset in
// $TRIGRID_DATA_DIR (.dev/data of the repository by default), named by its
// file; the test is skipped when there is none.
func eachDataset(t *testing.T, fn func(name string, g *graph.CSR)) {
	t.Helper()
	dir := envOr("TRIGRID_DATA_DIR", filepath.Join("..", "..", ".dev", "data"))
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt*"))
	if len(files) == 0 {
		t.Skipf("no datasets in %s", dir)
	}
	for _, f := range files {
		edges, _, err := edgeio.ReadFile(context.Background(), f, edgeio.ReadOptions{SkipBadLines: true})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fn(filepath.Base(f), forward(t, edges))
	}
}

// randomEdges draws m edges over n ids, with loops and duplicates.
func randomEdges(n, m int, seed uint64) []graph.Edge {
	r := rand.New(rand.NewPCG(seed, 7))
	e := make([]graph.Edge, m)
	for i := range e {
		e[i] = graph.Edge{U: uint64(r.IntN(n)), V: uint64(r.IntN(n))}
	}
	return e
}

// hubEdges: vertex 0 joined to everyone, plus a ring and random chords.
func hubEdges(n int) []graph.Edge {
	var e []graph.Edge
	for v := 1; v < n; v++ {
		e = append(e, graph.Edge{U: 0, V: uint64(v)}, graph.Edge{U: uint64(v), V: uint64(v%(n-1) + 1)})
	}
	return append(e, randomEdges(n, 4*n, 3)...)
}

// hashBlock is B[I][J] of the hash scheme: rows x mod P == I (local x div P),
// columns likewise for J.
func hashBlock(g *graph.CSR, p, i, j int) *graph.CSR {
	n := g.NumRows()
	rows := (n - int64(i) + int64(p) - 1) / int64(p)
	b := &graph.CSR{Offsets: make([]uint64, 1, rows+1), NCols: (n - int64(j) + int64(p) - 1) / int64(p)}
	for lr := int64(0); lr < rows; lr++ {
		for _, v := range g.Row(lr*int64(p) + int64(i)) {
			if int(v)%p == j {
				b.Cols = append(b.Cols, v/uint32(p))
			}
		}
		b.Offsets = append(b.Offsets, uint64(len(b.Cols)))
	}
	return b
}

// rangeBlock is B[I][J] of a range scheme with boundaries cut.
func rangeBlock(g *graph.CSR, cut []int64, i, j int) *graph.CSR {
	b := &graph.CSR{Offsets: []uint64{0}, NCols: cut[j+1] - cut[j]}
	for u := cut[i]; u < cut[i+1]; u++ {
		for _, v := range g.Row(u) {
			if int64(v) >= cut[j] && int64(v) < cut[j+1] {
				b.Cols = append(b.Cols, uint32(int64(v)-cut[j]))
			}
		}
		b.Offsets = append(b.Offsets, uint64(len(b.Cols)))
	}
	return b
}

// partitioned returns every subtask of a P x P partition of g, hash or range.
func partitioned(g *graph.CSR, p int, scheme string) []kernels.Subtask {
	n := g.NumRows()
	cut := make([]int64, p+1)
	for i := range cut {
		cut[i] = n * int64(i) / int64(p)
	}
	blocks := make([][]*graph.CSR, p)
	for i := range blocks {
		blocks[i] = make([]*graph.CSR, p)
		for j := range blocks[i] {
			if scheme == "hash" {
				blocks[i][j] = hashBlock(g, p, i, j)
			} else {
				blocks[i][j] = rangeBlock(g, cut, i, j)
			}
		}
	}
	var ts []kernels.Subtask
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			for k := 0; k < p; k++ {
				ts = append(ts, kernels.Subtask{IJ: blocks[i][j], IK: blocks[i][k], JK: blocks[j][k]})
			}
		}
	}
	return ts
}

func mustReference(t testing.TB, s kernels.Subtask) uint64 {
	t.Helper()
	n, err := kernels.Reference(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// autoCounter is an auto counter of lib, closed when the test ends.
func autoCounter(t testing.TB, lib *Library) *Counter {
	t.Helper()
	c, err := lib.NewCounter("auto")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// hostForward is the host's forward graph of edges (graph.Clean, then
// graph.Orient by degree); edges are not changed.
func hostForward(t testing.TB, edges []graph.Edge) *graph.CSR {
	t.Helper()
	und, _, err := graph.Clean(append([]graph.Edge(nil), edges...), graph.CleanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fwd, _, _, err := graph.Orient(und, graph.OrderDegree, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fwd
}
