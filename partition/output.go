package partition

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"regexp"
	"slices"
	"sync"

	"github.com/trigrid/trigrid/storage"
)

// ErrOutputNotEmpty: the output store already holds files and replacing
// them was not asked for.
var ErrOutputNotEmpty = errors.New("output is not empty")

// shardNameRE matches storage.ShardName's names.
var shardNameRE = regexp.MustCompile(`^shard-[0-9]{4,}-[0-9]{4,}\.tgs$`)

// trackedStore records the files a run stores, so that a run that fails or
// is cancelled can take them back (undo) and leave no half-written
// partitioning behind.
type trackedStore struct {
	storage.Store
	mu    sync.Mutex
	names []string
}

func (s *trackedStore) Put(ctx context.Context, name string, data []byte) error {
	// Recorded before the write, so that a Put cut short is undone too.
	s.mu.Lock()
	s.names = append(s.names, name)
	s.mu.Unlock()
	return s.Store.Put(ctx, name, data)
}

// undo removes every file the run stored, manifest first. It runs after
// the run's context may have been cancelled, so it uses one without
// cancellation. Stores without storage.Remover keep the files, which
// without a manifest no reader takes for a partitioning.
func (s *trackedStore) undo(ctx context.Context, log *slog.Logger) {
	rm, ok := s.Store.(storage.Remover)
	s.mu.Lock()
	names := s.names
	s.names = nil
	s.mu.Unlock()
	if !ok || len(names) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	// The manifest, if this run got as far, goes first.
	slices.SortStableFunc(names, func(a, b string) int {
		return cmp.Compare(b2i(b == storage.ManifestName), b2i(a == storage.ManifestName))
	})
	var failed error
	for _, n := range names {
		if err := rm.Remove(ctx, n); err != nil && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		log.Warn("could not remove the files of an unfinished partitioning", "store", s.URL(), "err", failed)
		return
	}
	log.Debug("removed the files of an unfinished partitioning", "store", s.URL(), "files", len(names))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
