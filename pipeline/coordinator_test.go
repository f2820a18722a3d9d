package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/coordinator"
	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// The coordinator's Partitioner refuses a format it cannot read, and
// cuts a graph file into shards with its id map; ShardCounts reads the
// blocks back for the edges: every vertex's degree in the input's ids.
func TestCoordinatorPartitionerAndShardCounts(t *testing.T) {
	ctx := context.Background()
	p := Partitioner{}
	for _, f := range []string{"", "edgelist"} {
		if err := p.CheckRead(coordinator.ReadOptions{Format: f}); err != nil {
			t.Errorf("format %q refused: %v", f, err)
		}
	}
	if err := p.CheckRead(coordinator.ReadOptions{Format: "nosuch"}); err == nil || !strings.Contains(err.Error(), "edgelist") {
		t.Errorf("format nosuch: %v, want an error naming the formats", err)
	}

	// K4 on 10..13 with a tail 13-14, and a line that is not an edge.
	path := filepath.Join(t.TempDir(), "g.txt")
	if err := os.WriteFile(path, []byte("10 11\n10 12\n10 13\n11 12\n11 13\n12 13\nnot an edge\n13 14\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := storage.NewMemStore()
	req := coordinator.PartitionRequest{Graph: path, Scheme: storage.SchemeHash, P: 2, Store: store}
	if _, err := p.Partition(ctx, req); err == nil {
		t.Fatal("a bad line was read without SkipBadLines")
	}
	req.Read = coordinator.ReadOptions{Format: "edgelist", SkipBadLines: true}
	m, err := p.Partition(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if m.P != 2 || m.IDMap == nil || m.Graph.Vertices != 5 {
		t.Fatalf("manifest P=%d, id map %v, %d vertices", m.P, m.IDMap, m.Graph.Vertices)
	}
	ids, err := storage.ReadIDMap(ctx, store, *m.IDMap)
	if err != nil {
		t.Fatal(err)
	}
	l, err := partition.ManifestLayout(m)
	if err != nil {
		t.Fatal(err)
	}
	sums := counts.NewBlocks(l, m.Graph.Vertices, shardEdges(m), true)
	c, err := ShardCounts{}.ReadCounts(ctx, coordinator.CountsRequest{Store: store, Manifest: m, Sums: sums, IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]uint32{10: 3, 11: 3, 12: 3, 13: 4, 14: 1}
	for x, d := range c.Degree {
		if id := c.OrigID[x]; want[id] != d {
			t.Errorf("vertex %d: degree %d, want %d", id, d, want[id])
		}
	}
	edges := 0
	for range c.Edges {
		edges++
	}
	if err := c.EdgeErr(); err != nil || edges != 7 {
		t.Errorf("%d edges read (%v), want 7", edges, err)
	}
}
