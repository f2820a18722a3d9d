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
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// checkOrientIDs orients edges from their input ids on the library's
// device and compares the forward graph, each forward id's input id and
// every figure with the host's graph.Clean then graph.Orient, array for
// array. The pairs are not changed.
func checkOrientIDs(t *testing.T, lib *Library, name string, edges []graph.Edge) {
	t.Helper()
	und, cs, err := graph.Clean(append([]graph.Edge(nil), edges...), graph.CleanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, rank, os, err := graph.Orient(und, graph.OrderDegree, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := make([]uint64, len(rank))
	for v, r := range rank {
		wantIDs[r] = und.OrigID[v]
	}
	c := autoCounter(t, lib)
	// 32-bit pairs also go to the device staged in pieces (stageAll).
	for _, staged := range stagings(idPairs(edges)) {
		name := fmt.Sprintf("%s (staged %v)", name, staged)
		checkOrientIDsOnce(t, c, name, edges, staged, want, wantIDs, cs, os)
	}
}

func checkOrientIDsOnce(t *testing.T, c *Counter, name string, edges []graph.Edge, staged bool, want *graph.CSR, wantIDs []uint64, cs graph.CleanStats, os graph.OrientStats) {
	t.Helper()
	p := idPairs(edges)
	before := idPairs(edges)
	held, _ := c.MemUsage()
	var stage *kernels.IDStage
	if staged {
		p, stage = stageAll(t, c, p)
	}
	fwd, ids, st, err := c.OrientIDsOnDevice(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if stage != nil {
		if err := stage.Release(); err != nil {
			t.Fatalf("%s: release the stage: %v", name, err)
		}
	}
	width := 4 + 4*min(1, len(p.P64))
	wantSt := kernels.PrepStats{Vertices: uint64(cs.Vertices), InputPairs: uint64(len(edges)), SelfLoops: cs.SelfLoops,
		Duplicates: cs.Duplicates, Edges: uint64(cs.Edges), Wedges: os.Wedges, MaxDegree: uint64(os.MaxDegree),
		MaxForward: uint64(os.MaxOutDegree), IsolatedIDs: cs.IsolatedIDs}
	if st != wantSt {
		t.Fatalf("%s (%d-byte ids): device stats %+v, host %+v", name, width, st, wantSt)
	}
	if !equalCSR(fwd, want) {
		t.Fatalf("%s (%d-byte ids): the forward graph differs from the host's", name, width)
	}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("%s (%d-byte ids): forward ids map to other input ids than the host's", name, width)
	}
	if !slices.Equal(p.P32, before.P32) || !slices.Equal(p.P64, before.P64) {
		t.Fatalf("%s: the pairs were changed", name)
	}
	if used, _ := c.MemUsage(); used != held {
		t.Fatalf("%s: %d device bytes held after orientation, %d before", name, used, held)
	}
}

func TestOrientIDsOnDeviceReference(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	for name, edges := range idCases(t, randomEdges(400, 5000, 9)) {
		checkOrientIDs(t, lib, name, edges)
	}
	for name, edges := range idCases(t, hubEdges(300)) {
		checkOrientIDs(t, lib, "hub "+name, edges)
	}
	// A cap below what the pairs need is an error DoesNotFit recognizes.
	small, err := Open(Options{Path: good, MemLimit: 4096})
	if err != nil {
		t.Fatal(err)
	}
	c := autoCounter(t, small)
	if _, _, _, err := c.OrientIDsOnDevice(context.Background(), idPairs(randomEdges(400, 5000, 9))); !c.DoesNotFit(err) {
		t.Fatalf("under a 4 KiB cap: %v, want an out-of-memory error", err)
	}
}

// The counter declines, before calling the library, only pairs the
// library itself refuses: just below the bound of prepIDsLeastBytes the
// library runs out of memory too, for 32-bit and 64-bit ids.
func TestPrepIDsLeastBytesIsALowerBound(t *testing.T) { forLibs(t, prepIDsLeastBytesIsALowerBound) }

func prepIDsLeastBytesIsALowerBound(t *testing.T, good string) {
	for name, edges := range idCases(t, randomEdges(400, 5000, 9)) {
		p := idPairs(edges)
		limit := uint64(ContextBytes + prepIDsLeastBytes(p) - devmem.AllocBytes(1))
		lib, err := Open(Options{Path: good, MemLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		c := autoCounter(t, lib)
		if err := c.roomForIDs(p); !errors.Is(err, ErrOutOfMemory) {
			t.Fatalf("%s: %d bytes: the counter's check says %v, want out of memory", name, limit, err)
		}
		maxV := p.VertexBound()
		_, _, np, _ := idPairsArg(p)
		out := abi.IDsOut{MaxVertices: maxV, Rowptr: make([]uint64, maxV+1), Cols: make([]uint32, np+1), Orig: make([]uint64, maxV+1)}
		var st abi.PrepStats
		c.mu.Lock()
		_, err = c.prepIDs(p, out, &st)
		c.mu.Unlock()
		if !errors.Is(err, ErrOutOfMemory) {
			t.Errorf("%s: %d bytes: the library says %v, want out of memory", name, limit, err)
		}
		c.Close()
	}
}

func TestDeviceOrientIDs(t *testing.T) {
	lib := deviceLib(t)
	for name, edges := range idCases(t, randomEdges(5000, 60000, 8)) {
		checkOrientIDs(t, lib, name, edges)
	}
	for name, edges := range idCases(t, hubEdges(50000)) {
		checkOrientIDs(t, lib, "hub "+name, edges)
	}
	edges, err := gen.RMAT(18, 16, 18, 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range idCases(t, edges) {
		checkOrientIDs(t, lib, fmt.Sprint("rmat18 ", name), e)
	}
}
