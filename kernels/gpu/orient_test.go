package gpu

import (
	"context"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// TestOrientOnDeviceReference: the forward graph and ranks come back equal
// to graph's CPU path, the device copy is freed afterwards, and a context
// with less free memory than PreprocessMinBytes orients them in pieces
// (TestOrientInPieces has the caps down to the pieces' least).
func TestOrientOnDeviceReference(t *testing.T) {
	good, _ := refLibs(t)
	edges := randomEdges(400, 5000, 9)
	n := uint64(0)
	var pairs []uint32
	for _, e := range edges {
		n = max(n, e.U+1, e.V+1)
	}
	for v := uint64(1); v < n; v++ { // every id keeps a non-loop edge
		edges = append(edges, graph.Edge{U: v - 1, V: v})
	}
	for _, e := range edges {
		pairs = append(pairs, uint32(e.U), uint32(e.V))
	}
	u, _, err := graph.Clean(edges, graph.CleanOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	want, wantRank, _, err := graph.Orient(u, graph.OrderDegree, 2)
	if err != nil {
		t.Fatal(err)
	}

	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	c := autoCounter(t, lib)
	before, _ := c.MemUsage()
	fwd, rank, st, err := c.OrientOnDevice(context.Background(), pairs, n)
	if err != nil {
		t.Fatal(err)
	}
	if !equalCSR(fwd, want) || !slices.Equal(rank, wantRank) || st.Edges != uint64(want.NumEdges()) {
		t.Fatalf("forward graph or ranks differ from the CPU's (stats %+v)", st)
	}
	if after, _ := c.MemUsage(); after != before {
		t.Fatalf("device memory %d after orientation, %d before", after, before)
	}

	need := PreprocessMinBytes(uint64(len(pairs)/2), n)
	small, err := Open(Options{Path: good, MemLimit: uint64(need) - 1})
	if err != nil {
		t.Fatal(err)
	}
	sc := autoCounter(t, small)
	fwd, rank, _, err = sc.OrientOnDevice(context.Background(), pairs, n)
	if err != nil {
		t.Fatalf("below the preprocessing minimum: %v", err)
	}
	if !equalCSR(fwd, want) || !slices.Equal(rank, wantRank) {
		t.Fatal("below the preprocessing minimum: forward graph or ranks differ from the CPU's")
	}
}
