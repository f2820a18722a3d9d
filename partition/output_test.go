package partition

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/storage"
)

// cancelAfterStore cancels the run after its n-th stored file, as an
// interrupt in the middle of writing shards would.
type cancelAfterStore struct {
	storage.Store
	n      int64
	puts   atomic.Int64
	cancel context.CancelFunc
}

func (s *cancelAfterStore) Put(ctx context.Context, name string, data []byte) error {
	err := s.Store.Put(ctx, name, data)
	if s.puts.Add(1) == s.n {
		s.cancel()
	}
	return err
}

func (s *cancelAfterStore) Remove(ctx context.Context, name string) error {
	return s.Store.(storage.Remover).Remove(ctx, name)
}

// TestInterruptedPartitionLeavesNothing cancels both partitioners after
// their first stored file: the run fails with the context's error and the
// store is empty again.
func TestInterruptedPartitionLeavesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.bin")
	if err := edgeio.WriteFile(path, rmatEdges(11, 8, 9), edgeio.WriteOptions{Format: edgeio.FormatBin}); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int64{0, 1 << 30} {
		for _, after := range []int64{1, 3} {
			ctx, cancel := context.WithCancel(context.Background())
			inner, err := storage.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			s := &cancelAfterStore{Store: inner, n: after, cancel: cancel}
			cfg := Config{Scheme: storage.SchemeHash, P: 4, Workers: 1, MemLimit: limit, TempDir: t.TempDir()}
			_, err = PartitionFile(ctx, path, edgeio.ReadOptions{}, s, cfg)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("limit %d, cancelled after %d files: error %v", limit, after, err)
			}
			if names, _ := inner.List(context.Background()); len(names) != 0 {
				t.Fatalf("limit %d, cancelled after %d files: left %v", limit, after, names)
			}
			if s.puts.Load() < after {
				t.Fatalf("only %d files stored before the end", s.puts.Load())
			}
		}
	}
}
