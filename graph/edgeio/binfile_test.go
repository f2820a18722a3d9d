package edgeio

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// The parallel whole-file path and the streaming path must agree on every
// binary file, well-formed or not; malformed ones go to the streaming path
// and keep its messages.
func TestBinaryFileMatchesStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		m     int
		width int
		max   uint64
	}{
		{"empty", 0, 4, 10}, {"small", 5, 4, 10}, {"segments", 3*binSegment + 17, 4, 1 << 31}, {"wide", binSegment + 3, 8, 1<<64 - 1},
	} {
		edges := make([]graph.Edge, tc.m)
		for i := range edges {
			edges[i] = graph.Edge{U: rng.Uint64N(tc.max), V: rng.Uint64N(tc.max)}
		}
		p := filepath.Join(dir, tc.name+".bin")
		if err := WriteFile(p, edges, WriteOptions{IDWidth: tc.width}); err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{1, 3} {
			var progressed int64
			got, st, ok, err := readBinaryFile(context.Background(), p, ReadOptions{Workers: w, Progress: func(d, total int64) { progressed = d }})
			if !ok || err != nil {
				t.Fatalf("%s: ok=%v err=%v", tc.name, ok, err)
			}
			if st.Edges != int64(tc.m) || st.Format != FormatBin || len(got) != tc.m || progressed != st.Bytes {
				t.Fatalf("%s: stats %+v, %d edges, progress %d", tc.name, st, len(got), progressed)
			}
			for i := range got {
				if got[i] != edges[i] {
					t.Fatalf("%s: edge %d is %v, want %v", tc.name, i, got[i], edges[i])
				}
			}
		}
	}
	// A file with trailing bytes or a short body is not taken by the fast
	// path, so the streaming reader reports it.
	p := filepath.Join(dir, "small.bin")
	data, _ := os.ReadFile(p)
	for name, bad := range map[string][]byte{"trailing": append(append([]byte{}, data...), 0), "short": data[:len(data)-3]} {
		q := filepath.Join(dir, name+".bin")
		if err := os.WriteFile(q, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, _ := readBinaryFile(context.Background(), q, ReadOptions{}); ok {
			t.Errorf("%s: the fast path took a malformed file", name)
		}
		if _, _, err := ReadFile(context.Background(), q, ReadOptions{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
