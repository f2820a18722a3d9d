package partition

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// PrepareOutput readies store for a new partitioning, before anything is
// written. An empty store is ready. A non-empty one is an error wrapping
// ErrOutputNotEmpty unless replace is set; then the old partitioning is
// removed, its manifest first so that no reader meets a manifest whose
// shards are going away. Replacing never deletes what a partitioning does
// not write: a store holding any other file is refused. The store must
// implement storage.Remover to be replaced.
//
// The old partitioning is gone before the new one is written, and nothing
// keeps two runs apart: for a directory, OpenOutput replaces only once the
// new partitioning is complete, and locks.
func PrepareOutput(ctx context.Context, store storage.Store, replace bool, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	names, err := store.List(ctx)
	if err != nil {
		return fmt.Errorf("partition: output %s: %w", store.URL(), err)
	}
	if len(names) == 0 {
		_, err := storage.RemoveTemps(ctx, store)
		return err
	}
	if !replace {
		return fmt.Errorf("partition: output %s holds %d files (%s...): %w", store.URL(), len(names), names[0], ErrOutputNotEmpty)
	}
	rm, ok := store.(storage.Remover)
	if !ok {
		return fmt.Errorf("partition: output %s cannot delete files, so its old partitioning cannot be replaced", store.URL())
	}
	ours := map[string]bool{storage.ManifestName: true, IDMapName: true}
	// Files an old manifest lists are its own, whatever their names; the
	// manifest need not verify for that (a damaged one is being replaced).
	if data, err := store.Get(ctx, storage.ManifestName); err == nil {
		var m struct {
			Shards []struct{ File string } `json:"shards"`
			IDMap  *struct{ File string }  `json:"id_map"`
		}
		if json.Unmarshal(data, &m) == nil {
			for _, s := range m.Shards {
				ours[s.File] = true
			}
			if m.IDMap != nil {
				ours[m.IDMap.File] = true
			}
		}
	}
	for _, n := range names {
		if !ours[n] && !shardNameRE.MatchString(n) {
			return fmt.Errorf("partition: output %s holds %s, which is not part of a trigrid partitioning; not replacing it (choose an empty directory)", store.URL(), n)
		}
	}
	if err := rm.Remove(ctx, storage.ManifestName); err != nil {
		return fmt.Errorf("partition: replacing %s: %w", store.URL(), err)
	}
	for _, n := range names {
		if err := rm.Remove(ctx, n); err != nil {
			return fmt.Errorf("partition: replacing %s: %w", store.URL(), err)
		}
	}
	if _, err := storage.RemoveTemps(ctx, store); err != nil {
		return err
	}
	log.Info("removed the old partitioning", "store", store.URL(), "files", len(names))
	return nil
}

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
