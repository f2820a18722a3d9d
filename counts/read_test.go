package counts

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadBinary writes counts in the binary format, reads them back and
// writes them again as TSV: the rows equal those of the original.
func TestReadBinary(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := sample()
	vb, eb := filepath.Join(dir, "v.bin"), filepath.Join(dir, "e.bin")
	if _, err := WriteVertices(ctx, vb, c); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteEdges(ctx, eb, c); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBinary(vb, eb)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Check(1); err != nil {
		t.Fatal(err)
	}
	if g, w := slices.Collect(got.Vertices()), slices.Collect(c.Vertices()); !slices.Equal(g, w) {
		t.Errorf("vertices: got %v, want %v", g, w)
	}
	if g, w := slices.Collect(got.EdgeRows()), slices.Collect(c.EdgeRows()); !slices.Equal(g, w) {
		t.Errorf("edges: got %v, want %v", g, w)
	}
	if g, w := got.TopEdges(2), c.TopEdges(2); !slices.Equal(g, w) {
		t.Errorf("top edges: got %v, want %v", g, w)
	}

	// Damaged files are errors naming the file.
	data, _ := os.ReadFile(vb)
	bad := filepath.Join(dir, "bad.bin")
	for name, b := range map[string][]byte{
		"short":     data[:10],
		"truncated": data[:len(data)-5],
		"magic":     append([]byte("XXCOUNTS"), data[8:]...),
		"edges":     mustRead(t, eb),
	} {
		os.WriteFile(bad, b, 0o644)
		if _, err := ReadBinary(bad, ""); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// An edge file naming a vertex the vertex file lacks.
	short := &Counts{OrigID: c.OrigID[:2], Triangles: c.Triangles[:2], Degree: c.Degree[:2]}
	if _, err := WriteVertices(ctx, bad, short); err != nil {
		t.Fatal(err)
	}
	g2, err := ReadBinary(bad, eb)
	if err != nil {
		t.Fatal(err)
	}
	for range g2.Edges {
	}
	if err := g2.EdgeErr(); err == nil || !strings.Contains(err.Error(), eb) {
		t.Errorf("edge outside the vertices: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
