package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Remover is implemented by stores whose files can be deleted. It is
// optional: partitioning uses it to replace an old partitioning (--force)
// and to take back the files of a run that failed or was interrupted.
type Remover interface {
	// Remove deletes name; a missing file is not an error.
	Remove(ctx context.Context, name string) error
}

// LocalDir returns the directory of a file store, and false for any other
// store.
func LocalDir(s Store) (string, bool) {
	fs, ok := s.(*fileStore)
	if !ok {
		return "", false
	}
	return fs.dir, true
}

// Remove deletes name and syncs the directory.
func (s *fileStore) Remove(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := s.path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("storage: remove %s: %w", name, err)
	}
	if err := syncDir(s.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("storage: remove %s: %w", name, err)
	}
	return nil
}

// RemoveTemps deletes the temporary files a crashed Put left behind
// (names starting with the temporary prefix) and returns how many.
func (s *fileStore) RemoveTemps(ctx context.Context) (int, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("storage: list %s: %w", s.dir, err)
	}
	n := 0
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), tempPrefix) {
			if err := os.Remove(s.dir + string(os.PathSeparator) + e.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return n, fmt.Errorf("storage: remove %s: %w", e.Name(), err)
			}
			n++
		}
	}
	return n, nil
}

// RemoveTemps deletes the temporary files a crashed writer left in s, for
// stores that keep such files; it returns how many it removed.
func RemoveTemps(ctx context.Context, s Store) (int, error) {
	if t, ok := s.(interface {
		RemoveTemps(context.Context) (int, error)
	}); ok {
		return t.RemoveTemps(ctx)
	}
	return 0, nil
}

func (s *memStore) Remove(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.files, name)
	s.mu.Unlock()
	return nil
}
