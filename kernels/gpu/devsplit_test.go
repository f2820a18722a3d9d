package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// layoutGroups is the BlockGroups of a partition layout.
func layoutGroups(l *partition.Layout) kernels.BlockGroups {
	g := kernels.BlockGroups{P: l.P}
	if l.Scheme == storage.SchemeRange {
		g.Bounds = l.Bounds
		for r := range len(l.Bounds) - 1 {
			g.Groups = append(g.Groups, int32(storage.RangeGroup(r, l.P)))
		}
	}
	return g
}

// sameBlocks fails unless got and want are the same blocks, array for
// array.
func sameBlocks(got, want []*graph.CSR, p int) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d blocks, want %d", len(got), len(want))
	}
	for b := range got {
		g, w := got[b], want[b]
		if g.NCols != w.NCols || !slices.Equal(g.Offsets, w.Offsets) || !slices.Equal(g.Cols, w.Cols) {
			return fmt.Errorf("block (%d,%d): %d rows, %d edges, %d columns; the host split has %d, %d, %d",
				b/p, b%p, g.NumRows(), g.NumEdges(), g.NCols, w.NumRows(), w.NumEdges(), w.NCols)
		}
	}
	return nil
}

// checkSplit builds the forward graph of edges on the library's device
// from the input's ids, splits it there by scheme into p x p blocks, and
// requires the blocks equal to the host's split of the host's forward
// graph, the ids equal to OrientIDsOnDevice's, and every subtask counted
// from the resident blocks (no upload) to sum to the reference count.
func checkSplit(t *testing.T, lib *Library, name string, edges []graph.Edge, scheme storage.Scheme, p int) {
	t.Helper()
	ctx := context.Background()
	name = fmt.Sprintf("%s %v P=%d", name, scheme, p)
	fwd := hostForward(t, edges)
	want := mustReference(t, kernels.Whole(fwd))
	l, err := partition.NewLayout(fwd, scheme, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	host, err := partition.SplitLayout(ctx, fwd, l, 2)
	if err != nil {
		t.Fatal(err)
	}

	o, err := lib.NewCounter("auto")
	if err != nil {
		t.Fatal(err)
	}
	_, wantIDs, _, err := o.OrientIDsOnDevice(ctx, idPairs(edges))
	o.Close()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := autoCounter(t, lib)
	pairs := idPairs(edges)
	var made *kernels.HostBlocks
	if p%2 == 0 {
		// Host memory made ahead; otherwise SplitOnDevice makes it.
		made = kernels.MakeHostBlocks(pairs, p)
	}
	ids, st, err := c.KeepIDsOnDevice(ctx, pairs, true, made)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if int64(st.Vertices) != fwd.NumRows() || int64(st.Edges) != fwd.NumEdges() || !slices.Equal(ids, wantIDs) {
		t.Fatalf("%s: %d vertices, %d edges and %d ids; the host has %d, %d and OrientIDsOnDevice %d ids", name,
			st.Vertices, st.Edges, len(ids), fwd.NumRows(), fwd.NumEdges(), len(wantIDs))
	}
	if scheme == storage.SchemeRange {
		// The range layout is made from the forward graph on the host.
		got, err := c.ForwardOut(ctx, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got.Offsets, fwd.Offsets) || !slices.Equal(got.Cols, fwd.Cols) {
			t.Fatalf("%s: the device's forward graph differs from the host's", name)
		}
	}
	blocks, err := c.SplitOnDevice(ctx, layoutGroups(l))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := sameBlocks(blocks, host.Blocks, p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	part := &partition.Partition{Layout: l, Blocks: blocks}
	var sum uint64
	for _, s := range part.Subtasks() {
		res, err := c.Count(ctx, kernels.Subtask{IJ: part.Block(s.I, s.J), IK: part.Block(s.I, s.K), JK: part.Block(s.J, s.K)})
		if err != nil {
			t.Fatalf("%s: subtask (%d,%d,%d): %v", name, s.I, s.J, s.K, err)
		}
		sum += res.Triangles
	}
	if sum != want {
		t.Fatalf("%s: the subtasks count %d triangles, the reference %d", name, sum, want)
	}
	if n := c.Uploads(); n != 0 {
		t.Fatalf("%s: %d blocks uploaded; the split left them all resident", name, n)
	}
}

func TestSplitOnDeviceReference(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	rmat, err := gen.RMAT(10, 8, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]graph.Edge{"random": randomEdges(300, 3000, 5), "hub": hubEdges(200), "rmat10": rmat}
	for name, edges := range idCases(t, randomEdges(200, 2000, 11)) {
		cases["ids "+name] = edges
	}
	for name, edges := range cases {
		for _, scheme := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
			for p := 1; p <= MaxSplitP; p++ {
				if len(edges) == 0 && scheme == storage.SchemeRange {
					continue // no range layout of an empty graph to compare with
				}
				checkSplit(t, lib, name, edges, scheme, p)
			}
		}
	}
}

// TestSplitOnDeviceDoesNotFit: when the blocks do not fit beside the
// forward graph the split fails as out of memory, the forward graph stays
// and comes back whole, and the counter counts uploaded blocks as before.
func TestSplitOnDeviceDoesNotFit(t *testing.T) {
	good, _ := refLibs(t)
	ctx := context.Background()
	edges := randomEdges(2000, 30000, 7)
	fwd := forward(t, edges)
	// Room for the preprocessing (the pairs and their keys, about twice the
	// forward graph) but not for the graph and its blocks together.
	limit := uint64(ContextBytes) + uint64(len(edges))*8 + 4096
	if need := uint64(ContextBytes + 2*BlockBytes(fwd.NumRows(), fwd.NumEdges())); limit >= need {
		t.Fatalf("limit %d would fit the graph and its blocks (%d)", limit, need)
	}
	lib, err := Open(Options{Path: good, MemLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	c := autoCounter(t, lib)
	pairs := idPairs(edges)
	if _, _, err := c.KeepIDsOnDevice(ctx, pairs, false, kernels.MakeHostBlocks(pairs, 2)); err != nil {
		t.Fatal(err)
	}
	_, err = c.SplitOnDevice(ctx, kernels.BlockGroups{P: 2})
	if !errors.Is(err, ErrOutOfMemory) || !c.DoesNotFit(err) {
		t.Fatalf("split under a cap: %v, want out of memory", err)
	}
	got, err := c.ForwardOut(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Offsets, fwd.Offsets) || !slices.Equal(got.Cols, fwd.Cols) {
		t.Fatal("the forward graph that stayed differs from the host's")
	}
	part, err := partition.Split(got, storage.SchemeHash, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, s := range part.Subtasks() {
		res, err := c.Count(ctx, kernels.Subtask{IJ: part.Block(s.I, s.J), IK: part.Block(s.I, s.K), JK: part.Block(s.J, s.K)})
		if err != nil {
			t.Fatalf("subtask (%d,%d,%d): %v", s.I, s.J, s.K, err)
		}
		sum += res.Triangles
	}
	if want := mustReference(t, kernels.Whole(fwd)); sum != want {
		t.Fatalf("%d triangles after the fallback, the reference counts %d", sum, want)
	}
	if _, err := c.SplitOnDevice(ctx, kernels.BlockGroups{P: 2}); err == nil {
		t.Fatal("a split with no forward graph on the device succeeded")
	}
}

// TestDeviceSplit is checkSplit on a GPU: datasets-sized random graphs and
// rmat 16 by both schemes, P = 1..4.
func TestDeviceSplit(t *testing.T) {
	lib := deviceLib(t)
	rmat, err := gen.RMAT(16, 16, 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]graph.Edge{"random": randomEdges(5000, 60000, 8), "hub": hubEdges(50000), "rmat16": rmat}
	for name, edges := range cases {
		for _, scheme := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
			for p := 1; p <= MaxSplitP; p++ {
				checkSplit(t, lib, name, edges, scheme, p)
			}
		}
	}
}

// Blocks a device split made are held by the device: staging them ahead
// registers none of their memory, while a block from elsewhere is still
// staged.
func TestStageLeavesSplitBlocks(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	pinAll(lib) // every block is big enough to pin
	ctx := context.Background()
	edges := randomEdges(300, 3000, 5)
	c := autoCounter(t, lib)
	if _, _, err := c.KeepIDsOnDevice(ctx, idPairs(edges), true, nil); err != nil {
		t.Fatal(err)
	}
	fwd := forward(t, edges)
	l, err := partition.NewLayout(fwd, storage.SchemeHash, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := c.SplitOnDevice(ctx, layoutGroups(l))
	if err != nil {
		t.Fatal(err)
	}
	for x, b := range blocks {
		c.Stage(b)
		if stillRegistered(t, lib, b) {
			t.Errorf("block %d of the device split was pinned to be staged", x)
		}
	}
	other := &graph.CSR{Offsets: slices.Clone(blocks[1].Offsets), Cols: slices.Clone(blocks[1].Cols), NCols: blocks[1].NCols}
	c.Stage(other)
	if !stillRegistered(t, lib, other) {
		t.Error("a block from the host was not staged")
	}
}
