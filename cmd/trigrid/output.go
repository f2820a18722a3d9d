package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// openPartitionOutput opens the store -o names for `trigrid partition` and
// readies it, before anything is written: an unknown or unsupported URL
// scheme, an in-memory store (gone when this process exits) and a
// non-empty directory without --force are errors. The returned finish
// removes a directory this run created when the run failed (the
// partitioner has already taken back its own files).
func openPartitionOutput(ctx context.Context, out string, force bool, log *slog.Logger) (storage.Store, func(failed bool), error) {
	if out == "" {
		return nil, nil, fmt.Errorf("-o DIR is required")
	}
	store, err := storage.Open(out)
	if err != nil {
		return nil, nil, fmt.Errorf("-o %s: %w", out, err)
	}
	if strings.HasPrefix(store.URL(), "mem://") {
		return nil, nil, fmt.Errorf("-o %s: an in-memory store ends with this process; give a directory", out)
	}
	dir, local := storage.LocalDir(store)
	created := false
	if local {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			created = true
		}
	}
	if err := partition.PrepareOutput(ctx, store, force, log); err != nil {
		if errors.Is(err, partition.ErrOutputNotEmpty) {
			return nil, nil, fmt.Errorf("-o %s: %w; use --force to replace the partitioning there, or choose an empty directory", out, err)
		}
		return nil, nil, fmt.Errorf("-o %s: %w", out, err)
	}
	finish := func(failed bool) {
		if failed && created {
			os.Remove(dir) // only if empty: never what someone else put there
		}
	}
	return store, finish, nil
}
