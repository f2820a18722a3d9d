package edgeio

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

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

// TestSourceErrors checks that an error of the underlying reader, at the
// start or in the middle, comes back wrapped and naming the input.
func TestSourceErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	var bin strings.Builder
	if err := Write(&bin, randomEdges(rand.New(rand.NewPCG(1, 1)), 3000, 100), WriteOptions{Format: FormatBin}); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]func() io.Reader{
		"at start": func() io.Reader { return iotest.ErrReader(boom) },
		"text": func() io.Reader {
			return io.MultiReader(strings.NewReader(strings.Repeat("1 2\n", 5000)), iotest.ErrReader(boom))
		},
		"binary": func() io.Reader {
			return io.MultiReader(strings.NewReader(bin.String()[:1000]), iotest.ErrReader(boom))
		},
		"gzip head": func() io.Reader { return io.MultiReader(strings.NewReader("\x1f\x8b\x08"), iotest.ErrReader(boom)) },
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := Read(t.Context(), r(), "src.txt", ReadOptions{chunkSize: 1024})
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), "src.txt") {
				t.Fatalf("got %v, want %v wrapped and naming src.txt", err, boom)
			}
		})
	}
}
