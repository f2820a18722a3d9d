package edgeio

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// Progress hears the edges written so far in every writable format: in
// order, never past the total, ending at the total, and the file still
// reads back as the edges written.
func TestWriteProgress(t *testing.T) {
	edges := make([]graph.Edge, 3*textPiece+5)
	for i := range edges {
		edges[i] = graph.Edge{U: uint64(i), V: uint64(i*7 + 1)}
	}
	for _, f := range []Format{FormatEdgeList, FormatTSV, FormatMTX, FormatBin} {
		var seen []int64
		var buf bytes.Buffer
		opts := WriteOptions{Format: f, pieceEdges: 1000, Workers: 3, Progress: func(done, total int64) {
			if total != int64(len(edges)) {
				t.Errorf("%v: total %d, want %d", f, total, len(edges))
			}
			seen = append(seen, done)
		}}
		if err := Write(&buf, edges, opts); err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if len(seen) < 3 || !slices.IsSorted(seen) || seen[len(seen)-1] != int64(len(edges)) || seen[0] <= 0 {
			t.Errorf("%v: progress %v... (%d calls)", f, seen[:min(len(seen), 5)], len(seen))
		}
		got, _, err := Read(context.Background(), bytes.NewReader(buf.Bytes()), "progress", ReadOptions{Format: f})
		if err != nil || len(got) != len(edges) || got[len(got)-1] != edges[len(edges)-1] {
			t.Errorf("%v: read back %d edges, %v", f, len(got), err)
		}
	}
}
