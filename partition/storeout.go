package partition

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/trigrid/trigrid/storage"
)

// OpenStoreOutput readies a store that is not a directory (an s3:// one)
// for a new partitioning, written in place: the shards first, the
// manifest last, so that readers see nothing until it is complete, and
// a failed run takes back what it wrote (the partitioner does, through
// storage.Remover). A store holding files is an error wrapping
// ErrOutputNotEmpty.
//
// replace (--force) is refused: an object store cannot swap a whole
// partitioning in one step as a directory rename does. Writing the new
// shards over the old ones would leave, until the new manifest lands, a
// store whose manifest describes shards that are gone, so a count
// reading it fails, and a run that fails midway would leave neither
// partitioning; writing under a new generation prefix would make every
// reader follow a pointer object, a layout no other store has. So the
// way to replace is a new prefix, or deleting the old one first.
//
// Unlike OpenOutput there is no lock: two runs into one empty prefix at
// once are not detected.
func OpenStoreOutput(ctx context.Context, store storage.Store, replace bool, log *slog.Logger) (*Output, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	files, err := store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("partition: output %s: %w", store.URL(), err)
	}
	if len(files) > 0 {
		if replace {
			return nil, fmt.Errorf("partition: output %s holds %d files (%s...): --force cannot replace a partitioning in an object store safely (it has no atomic swap of many objects, so a failed run would leave neither the old partitioning nor the new); partition into a new prefix, or delete the old objects first", store.URL(), len(files), files[0])
		}
		return nil, fmt.Errorf("partition: output %s holds %d files (%s...): %w", store.URL(), len(files), files[0], ErrOutputNotEmpty)
	}
	return &Output{Store: store, url: store.URL(), log: log}, nil
}
