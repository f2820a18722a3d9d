package simulate

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// The fine histogram aggregates to exactly the blocks the partitioner
// writes, at every P dividing the fine P; the generator path that never
// builds the graph gives the same histogram as the forward graph does.
func TestBlockStatsMatchThePartitioner(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		scale, ef, fineP int
		ps               []int
	}{{10, 8, 12, []int{1, 2, 3, 4, 6}}, {11, 16, DefaultFineP, []int{8}}} {
		edges, err := gen.RMAT(tc.scale, tc.ef, 3, 2)
		if err != nil {
			t.Fatal(err)
		}
		fwd, _, _, err := graph.ForwardFromEdges(edges, graph.OrderDegree, 2)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ComputeBlockStats(fwd, tc.fineP, 2, "rmat")
		if err != nil {
			t.Fatal(err)
		}
		src, err := gen.RMATSource(tc.scale, tc.ef, 3)
		if err != nil {
			t.Fatal(err)
		}
		got, err := StatsFromChunks(ctx, src, tc.fineP, 3, "rmat")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("scale %d: the generator path's statistics differ from the forward graph's: %d vertices %d edges, want %d and %d",
				tc.scale, got.Vertices, got.Edges, want.Vertices, want.Edges)
		}
		for _, p := range tc.ps {
			store := storage.NewMemStore()
			if _, err := partition.PartitionGraph(ctx, fwd, storage.GraphStats{Vertices: fwd.NumRows(), Edges: fwd.NumEdges()}, store,
				partition.Config{Scheme: storage.SchemeHash, P: p, PartitionID: 7}); err != nil {
				t.Fatal(err)
			}
			m, err := storage.ReadManifest(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			agg, err := want.Aggregate(p)
			if err != nil {
				t.Fatal(err)
			}
			if man := GridFromManifest(m); !reflect.DeepEqual(agg, man) {
				t.Errorf("scale %d, P = %d: aggregated %+v, the manifest %+v", tc.scale, p, agg, man)
			}
		}
	}
}

func TestBlockStatsFile(t *testing.T) {
	b := &BlockStats{Kind: BlockStatsKind, Format: BlockStatsFormat, Source: "g", Vertices: 10, Edges: 6, FineP: 2,
		BlockEdges: []int64{1, 2, 0, 3}}
	path := filepath.Join(t.TempDir(), "stats.json")
	if err := WriteBlockStats(path, b); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBlockStats(path)
	if err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if d := b.Divisors(); !reflect.DeepEqual(d, []int{1, 2}) {
		t.Errorf("divisors %v", d)
	}
	g, err := b.Aggregate(1)
	if err != nil || g.BlockEdges[0] != 6 || g.GroupSizes[0] != 10 {
		t.Errorf("P = 1: %+v, %v", g, err)
	}
	if g, err = b.Aggregate(2); err != nil || !reflect.DeepEqual(g.GroupSizes, []int64{5, 5}) {
		t.Errorf("P = 2: %+v, %v", g, err)
	}
	if _, err := b.Aggregate(3); err == nil || !strings.Contains(err.Error(), "does not divide") {
		t.Errorf("P = 3: %v", err)
	}
	for _, tc := range []struct{ json, want string }{
		{`{"kind":"x","format":1}`, "kind"},
		{`{"kind":"trigrid-block-stats","format":2}`, "format 2"},
		{`{"kind":"trigrid-block-stats","format":1,"fine_p":2,"block_edges":[1,2,3]}`, "3 block counts"},
		{`{"kind":"trigrid-block-stats","format":1,"fine_p":1,"edges":5,"block_edges":[4]}`, "hold 4 edges, the graph 5"},
		{`{"kind":"trigrid-block-stats","format":1,"fine_p":1,"edges":-1,"block_edges":[-1]}`, "block 0 has -1"},
		{`{"kind":`, "stats.json"},
	} {
		if _, err := DecodeBlockStats("stats.json", []byte(tc.json)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.json, err, tc.want)
		}
	}
}
