package edgeio

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// TestReadFileBatches reads files in many small batches: ReadFile keeps
// each batch without copying it, so a batch that a reader reused would
// show up here as wrong edges.
func TestReadFileBatches(t *testing.T) {
	t.Parallel()
	edges := randomEdges(rand.New(rand.NewPCG(11, 12)), 20000, 1<<40)
	for _, name := range []string{"g.txt", "g.tsv.gz", "g.mtx.zst", "g.bin.gz", "g.bin"} {
		path := filepath.Join(t.TempDir(), name)
		if err := WriteFile(path, edges, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, ck := range []struct{ size, workers int }{{0, 0}, {256, 1}, {4096, 3}} {
			got, st, err := ReadFile(t.Context(), path, ReadOptions{chunkSize: ck.size, Workers: ck.workers})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, edges) || st.Edges != int64(len(edges)) {
				t.Fatalf("%s chunk %d: %d edges differ from the %d written (stats %+v)", name, ck.size, len(got), len(edges), st)
			}
		}
	}
}

func TestJoin(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 50 {
		var parts [][]graph.Edge
		var want []graph.Edge
		for range rng.IntN(20) + 1 {
			p := randomEdges(rng, rng.IntN(50), 100)
			parts = append(parts, p)
			want = append(want, p...)
		}
		got := join(parts, len(want), 1+rng.IntN(4))
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("join: %d edges, want %d", len(got), len(want))
		}
	}
}
