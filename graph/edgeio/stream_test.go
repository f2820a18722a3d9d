package edgeio

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

func writeTemp(t *testing.T, name string, edges []graph.Edge) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := WriteFile(path, edges, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStreamBatchesAndProgress(t *testing.T) {
	edges := randomEdges(rand.New(rand.NewPCG(9, 10)), 50000, 1<<32)
	for _, name := range []string{"s.txt", "s.txt.zst", "s.mtx.gz", "s.bin"} {
		t.Run(name, func(t *testing.T) {
			path := writeTemp(t, name, edges)
			fi, _ := os.Stat(path)
			var got []graph.Edge
			var last, calls int64
			opts := ReadOptions{chunkSize: 1 << 14, Workers: 3, Progress: func(done, total int64) {
				if total != fi.Size() || done < last || done > total {
					t.Errorf("progress %d/%d after %d (file %d bytes)", done, total, last, fi.Size())
				}
				last = done
				calls++
			}}
			maxBatch := 0
			st, err := Stream(t.Context(), path, opts, func(b []graph.Edge) error {
				maxBatch = max(maxBatch, len(b))
				got = append(got, b...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(edges) || st.Edges != int64(len(edges)) {
				t.Fatalf("%d edges, want %d", len(got), len(edges))
			}
			for i := range got {
				if got[i] != edges[i] {
					t.Fatalf("edge %d: %v, want %v", i, got[i], edges[i])
				}
			}
			if last != fi.Size() || calls < 2 {
				t.Fatalf("progress ended at %d of %d after %d calls", last, fi.Size(), calls)
			}
			if !strings.HasSuffix(name, ".bin") && maxBatch > 1<<14/2 {
				t.Fatalf("a batch of %d edges from 16 KiB chunks", maxBatch)
			}
		})
	}
}

func TestStreamStops(t *testing.T) {
	edges := randomEdges(rand.New(rand.NewPCG(11, 12)), 20000, 1000)
	for _, name := range []string{"s.txt", "s.bin", "s.txt.gz"} {
		path := writeTemp(t, name, edges)
		t.Run(name+"/fn error", func(t *testing.T) {
			stop := errors.New("enough")
			n := 0
			_, err := Stream(t.Context(), path, ReadOptions{chunkSize: 1024, Workers: 2}, func(b []graph.Edge) error {
				if n++; n == 3 {
					return stop
				}
				return nil
			})
			if err != stop || n != 3 {
				t.Fatalf("got %v after %d batches, want the fn error after 3", err, n)
			}
		})
		t.Run(name+"/cancel", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			n := 0
			_, err := Stream(ctx, path, ReadOptions{chunkSize: 1024, Workers: 2}, func(b []graph.Edge) error {
				if n++; n == 2 {
					cancel()
				}
				return nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
		})
	}
}

func TestFileErrors(t *testing.T) {
	_, _, err := ReadFile(t.Context(), filepath.Join(t.TempDir(), "nope.txt"), ReadOptions{})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.txt") {
		t.Fatalf("got %v", err)
	}
	// A line longer than maxLineLen is refused instead of buffered forever.
	if testing.Short() {
		return
	}
	_, _, err = readString(t, strings.Repeat("1", maxLineLen+10), "long.txt", ReadOptions{chunkSize: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "long.txt:1: a line is longer than 64 MiB") {
		t.Fatalf("got %v", err)
	}
}
