package gpu

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/kernels"
)

// idCases are edge lists whose ids exercise every compaction path: dense
// ids with gaps, self-loops and ids seen only in self-loops; 32-bit ids
// spread over the whole range (sparse, 4-byte); ids above 2^32 (8-byte);
// only loops; nothing.
func idCases(t testing.TB, base []graph.Edge) map[string][]graph.Edge {
	t.Helper()
	withLoops := append([]graph.Edge(nil), base...)
	for i := range uint64(40) {
		withLoops = append(withLoops, graph.Edge{U: 3 * i, V: 3 * i})             // loops of ids with edges (mostly)
		withLoops = append(withLoops, graph.Edge{U: 1<<19 + 7*i, V: 1<<19 + 7*i}) // ids seen only in loops
	}
	withLoops = append(withLoops, withLoops[:len(base)/3]...) // duplicates in input order
	mapped := func(f func(uint64) uint64) []graph.Edge {
		out := make([]graph.Edge, len(withLoops))
		for i, e := range withLoops {
			out[i] = graph.Edge{U: f(e.U), V: f(e.V)}
		}
		return out
	}
	return map[string][]graph.Edge{
		"dense":     withLoops,
		"gaps":      mapped(func(x uint64) uint64 { return 5*x + 11 }),
		"sparse32":  mapped(func(x uint64) uint64 { return (x*2654435761 + 1<<31) & math.MaxUint32 }),
		"sparse64":  mapped(func(x uint64) uint64 { return x*0x9E3779B97F4A7C15 + 1 }),
		"max64":     mapped(func(x uint64) uint64 { return math.MaxUint64 - x }),
		"onlyloops": {{U: 4, V: 4}, {U: 9, V: 9}, {U: 4, V: 4}},
		"empty":     nil,
	}
}

// idPairs lays edges out as the pipeline does: 32-bit when every id fits.
func idPairs(edges []graph.Edge) kernels.IDPairs {
	wide := false
	for _, e := range edges {
		wide = wide || e.U > math.MaxUint32 || e.V > math.MaxUint32
	}
	var p kernels.IDPairs
	if wide {
		p.P64 = make([]uint64, 0, 2*len(edges))
		for _, e := range edges {
			p.P64 = append(p.P64, e.U, e.V)
		}
		return p
	}
	p.P32 = make([]uint32, 0, 2*len(edges))
	for _, e := range edges {
		p.P32 = append(p.P32, uint32(e.U), uint32(e.V))
	}
	return p
}

// checkPrepareIDs builds the graph of edges on the library's device from
// the input ids and compares every figure and the triangle count with the
// host's own cleaning, orientation and reference count.
func checkPrepareIDs(t *testing.T, lib *Library, name string, edges []graph.Edge) {
	t.Helper()
	und, cs, err := graph.Clean(append([]graph.Edge(nil), edges...), graph.CleanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fwd, _, os, err := graph.Orient(und, graph.OrderDegree, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := mustReference(t, kernels.Whole(fwd))
	c := autoCounter(t, lib)
	// 32-bit pairs also go to the device staged in pieces (stageAll).
	for _, staged := range stagings(idPairs(edges)) {
		p := idPairs(edges)
		var stage *kernels.IDStage
		if staged {
			p, stage = stageAll(t, c, p)
		}
		pr, err := c.PrepareIDs(p)
		if err != nil {
			t.Fatalf("%s (staged %v): %v", name, staged, err)
		}
		if stage != nil {
			if err := stage.Release(); err != nil {
				t.Fatalf("%s: release the stage: %v", name, err)
			}
		}
		st := pr.Stats
		wantSt := kernels.PrepStats{Vertices: uint64(cs.Vertices), InputPairs: uint64(len(edges)), SelfLoops: cs.SelfLoops,
			Duplicates: cs.Duplicates, Edges: uint64(cs.Edges), Wedges: os.Wedges, MaxDegree: uint64(os.MaxDegree),
			MaxForward: uint64(os.MaxOutDegree), IsolatedIDs: cs.IsolatedIDs}
		if st != wantSt {
			t.Fatalf("%s (%d-byte ids, staged %v): device stats %+v, host %+v", name, 4+4*min(1, len(p.P64)), staged, st, wantSt)
		}
		res, err := c.CountResident(context.Background())
		if err != nil {
			t.Fatalf("%s: count: %v", name, err)
		}
		if res.Triangles != want {
			t.Fatalf("%s (staged %v): %d triangles, the reference counts %d", name, staged, res.Triangles, want)
		}
	}
}

func TestPrepareIDsReference(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	for name, edges := range idCases(t, randomEdges(400, 5000, 9)) {
		checkPrepareIDs(t, lib, name, edges)
	}
	for name, edges := range idCases(t, hubEdges(300)) {
		checkPrepareIDs(t, lib, "hub "+name, edges)
	}
}

func TestDevicePrepareIDs(t *testing.T) {
	lib := deviceLib(t)
	for name, edges := range idCases(t, randomEdges(5000, 60000, 8)) {
		checkPrepareIDs(t, lib, name, edges)
	}
	for name, edges := range idCases(t, hubEdges(50000)) {
		checkPrepareIDs(t, lib, "hub "+name, edges)
	}
	edges, err := gen.RMAT(18, 16, 18, 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range idCases(t, edges) {
		checkPrepareIDs(t, lib, "rmat18 "+name, e)
	}
}

// A preprocessing that runs out of memory part way leaves nothing on the
// device: the count that follows (the host's forward graph, counted whole
// or in blocks) has all of it. At every cap between the least a slot
// takes and what preprocessing needs, from the input's ids and from
// compacted pairs.
func TestFailedPreprocessFreesTheDevice(t *testing.T) { forLibs(t, failedPreprocessFreesTheDevice) }

func failedPreprocessFreesTheDevice(t *testing.T, path string) {
	edges := randomEdges(3000, 30000, 4)
	cp, err := graph.Compact(append([]graph.Edge(nil), edges...), graph.CleanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(len(cp.OrigID))
	need := PreprocessMinBytes(uint64(len(cp.Pairs)/2), n)
	calls := map[string]func(c *Counter) error{
		"ids": func(c *Counter) error {
			_, err := c.PrepareIDs(idPairs(edges))
			return err
		},
		"pairs": func(c *Counter) error {
			_, err := c.Preprocess(cp.Pairs, n, false)
			return err
		},
	}
	for name, call := range calls {
		failed := 0
		for _, limit := range []int64{need / 16, need / 8, need / 4, need / 2, need} {
			lib, err := Open(Options{Path: path, MemLimit: uint64(limit)})
			if err != nil {
				t.Fatal(err)
			}
			c, err := lib.NewCounter("auto")
			if err != nil {
				t.Fatal(err)
			}
			err = call(c)
			if err != nil && !errors.Is(err, ErrOutOfMemory) {
				t.Fatalf("%s limit %d: %v, want out of memory", name, limit, err)
			}
			if err != nil {
				failed++
				if used, _ := c.MemUsage(); used != ContextBytes {
					t.Fatalf("%s limit %d: %d bytes held after preprocessing failed, want %d", name, limit, used, ContextBytes)
				}
			}
			c.Close()
		}
		if failed == 0 {
			t.Fatalf("%s: no cap made preprocessing fail", name)
		}
	}
}
