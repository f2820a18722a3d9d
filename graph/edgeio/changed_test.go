package edgeio

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
)

// bigEdgeList is an edge list of n lines, each line the same length.
func bigEdgeList(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%07d %07d\n", i, i+1)
	}
	return []byte(b.String())
}

// changes are the ways a file is rewritten while it is read.
var changes = []struct {
	name   string
	change func(t *testing.T, path string)
}{
	{"truncated", func(t *testing.T, path string) {
		fi, _ := os.Stat(path)
		if err := os.Truncate(path, fi.Size()/3); err != nil {
			t.Fatal(err)
		}
	}},
	{"appended", func(t *testing.T, path string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("1 2\n")
		f.Close()
	}},
	{"rewritten in place", func(t *testing.T, path string) {
		// Same size, other bytes: the time says it changed.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte("9"), 0)
		f.Close()
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
	}},
}

// TestChangedWhileRead: a file changed during a read gives the error
// that says so, never edges, on every reader.
func TestChangedWhileRead(t *testing.T) {
	t.Parallel()
	for _, c := range changes {
		t.Run("stream/"+c.name, func(t *testing.T) {
			t.Parallel()
			path := writeBytes(t, "g.txt", bigEdgeList(200000))
			once := false
			_, err := Stream(t.Context(), path, ReadOptions{chunkSize: 4096, Workers: 1}, func([]graph.Edge) error {
				if !once {
					once = true
					c.change(t, path)
				}
				return nil
			})
			if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), path+" changed while it was read") {
				t.Fatalf("got %v", err)
			}
		})
		t.Run("text/"+c.name, func(t *testing.T) {
			t.Parallel()
			path := writeBytes(t, "g.txt", bigEdgeList(50000))
			opts := ReadOptions{chunkSize: 1 << 16, Workers: 2, midRead: func() { c.change(t, path) }}
			if _, _, err := ReadFile(t.Context(), path, opts); !errors.Is(err, ErrChanged) {
				t.Fatalf("ReadFile: got %v", err)
			}
			if _, _, _, err := ReadFileIDs(t.Context(), writeBytes(t, "h.txt", bigEdgeList(50000)), opts); err != nil {
				t.Fatalf("an unchanged file: %v", err)
			}
		})
		t.Run("bin/"+c.name, func(t *testing.T) {
			t.Parallel()
			edges := make([]graph.Edge, 100000)
			for i := range edges {
				edges[i] = graph.Edge{U: uint64(i), V: uint64(i + 1)}
			}
			path := writeBytes(t, "g.bin", nil)
			if err := WriteFile(path, edges, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			opts := ReadOptions{midRead: func() { c.change(t, path) }}
			if _, _, err := ReadFile(t.Context(), path, opts); !errors.Is(err, ErrChanged) {
				t.Fatalf("ReadFile: got %v", err)
			}
		})
	}
	// The parallel text reader meets other bytes in the same places: more
	// edges in a run than the lines it counted.
	t.Run("text/more edges", func(t *testing.T) {
		data := []byte(strings.Repeat("# a comment line here\n", 20000))
		path := writeBytes(t, "g.txt", data)
		fi, _ := os.Stat(path)
		opts := ReadOptions{chunkSize: 1 << 16, midRead: func() {
			f, _ := os.OpenFile(path, os.O_WRONLY, 0)
			f.WriteAt([]byte(strings.Repeat("1 2\n3 4\n", 1000)), 0)
			f.Close()
			os.Chtimes(path, fi.ModTime(), fi.ModTime()) // the time does not tell
		}}
		if _, _, err := ReadFile(t.Context(), path, opts); !errors.Is(err, ErrChanged) {
			t.Fatalf("got %v", err)
		}
	})
}
