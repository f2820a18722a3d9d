package edgeio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// cancelAfter is a context cancelled after its Err has been asked n times:
// a write interrupted part way through.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n <= 0 {
		return context.Canceled
	}
	c.n--
	return nil
}

func TestWriteFileContextCancelled(t *testing.T) {
	edges := make([]graph.Edge, 1<<18)
	for k := range edges {
		edges[k] = graph.Edge{U: uint64(k), V: uint64(k) * 7}
	}
	for _, name := range []string{"g.txt", "g.bin", "g.txt.gz"} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		ctx := &cancelAfter{Context: context.Background(), n: 3}
		err := WriteFileContext(ctx, path, edges, WriteOptions{Workers: 1})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: error %v, want context.Canceled", name, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%s: a cancelled write left %v", name, ents)
		}
	}
}
