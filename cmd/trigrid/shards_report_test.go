package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// messyEdges has a self-loop, duplicates both ways, a comment and an id
// that appears only in a self-loop: cleaning removes something of each kind.
const messyEdges = "# c\n1 2\n2 1\n2 3\n3 1\n5 5\n1 2\n3 4\n4 1\n"

// TestCountShardsReportsRecordedFigures: what cleaning removed, the forward
// max degree and the input format reach `count --shards` through the
// manifest and equal the figures of counting the file itself.
func TestCountShardsReportsRecordedFigures(t *testing.T) {
	f := write(t, "messy.txt", messyEdges)
	dir := t.TempDir()
	for _, memLimit := range []string{"0", "4GiB"} {
		if _, stderr, err := run(t, "partition", "--progress", "none", "-P", "2", "--force", "--mem-limit", memLimit, "-o", dir, f); err != nil {
			t.Fatalf("partition --mem-limit %s: %v\n%s", memLimit, err, stderr)
		}
		want := countJSON(t, f)
		got := countJSON(t, "--shards", dir)
		if got.Triangles != want.Triangles || got.Triangles != 2 {
			t.Fatalf("--mem-limit %s: %d triangles through shards, %d from the file, want 2", memLimit, got.Triangles, want.Triangles)
		}
		if got.Removed == nil || *got.Removed != *want.Removed || want.Removed.SelfLoops != 1 || want.Removed.Duplicates != 2 {
			t.Errorf("--mem-limit %s: removed %+v through shards, %+v from the file", memLimit, got.Removed, want.Removed)
		}
		if got.MaxOutDegree == nil || *got.MaxOutDegree != *want.MaxOutDegree || *want.MaxOutDegree == 0 {
			t.Errorf("--mem-limit %s: forward max degree %v through shards, %d from the file", memLimit, got.MaxOutDegree, *want.MaxOutDegree)
		}
		if got.Input == nil || got.Input.Format != want.Input.Format || got.Input.RawEdges != want.Input.RawEdges || got.Input.Bytes != want.Input.Bytes {
			t.Errorf("--mem-limit %s: input %+v through shards, %+v from the file", memLimit, got.Input, want.Input)
		}
	}
}

// TestCountShardsNotRecorded: a manifest that does not carry the cleaning,
// input and forward-degree figures (a graph partitioned from memory) is
// reported as "not recorded" and null, never as zeros.
func TestCountShardsNotRecorded(t *testing.T) {
	dir := t.TempDir()
	store, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// K4: four triangles.
	fwd := &graph.CSR{Offsets: []uint64{0, 3, 5, 6, 6}, Cols: []uint32{1, 2, 3, 2, 3, 3}, NCols: 4}
	stats := storage.GraphStats{Vertices: 4, Edges: 6, Wedges: 12, MaxDegree: 3, Order: "degree"}
	if _, err := partition.PartitionGraph(context.Background(), fwd, stats, store, partition.Config{Scheme: storage.SchemeHash, P: 2}); err != nil {
		t.Fatal(err)
	}
	// PartitionGraph records the forward degree it can see; drop it to
	// stand for a writer that did not.
	m, err := storage.ReadManifest(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	if m.Graph.MaxOutDegree == nil || *m.Graph.MaxOutDegree != 3 {
		t.Fatalf("PartitionGraph recorded forward max degree %v, want 3", m.Graph.MaxOutDegree)
	}
	m.Graph.MaxOutDegree = nil
	if err := storage.WriteManifest(context.Background(), store, m); err != nil {
		t.Fatal(err)
	}

	out, stderr, err := run(t, "count", "--json", "--progress", "none", "--device", "cpu", "--shards", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["triangles"] != 4.0 {
		t.Fatalf("triangles %v, want 4", doc["triangles"])
	}
	for _, k := range []string{"removed", "input", "max_out_degree"} {
		if v, ok := doc[k]; ok && v != nil {
			t.Errorf("JSON %s = %v for a figure the manifest does not record; want null or absent", k, v)
		}
	}
	out, stderr, err = run(t, "count", "--progress", "none", "--device", "cpu", "--shards", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"removed      not recorded", "input        not recorded", "(forward not recorded)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0 self-loops") {
		t.Errorf("report shows zeros for what it does not know:\n%s", out)
	}
	out, stderr, err = run(t, "info", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"max out-degree not recorded", "removed      not recorded", "input        not recorded"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
}
