package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// tempPrefix marks files being written; List hides them and a crashed Put
// leaves at most such a file behind, never a partial shard.
const tempPrefix = ".tmp-"

// IsTempName reports whether name is that of a file store's temporary
// file: a Put in progress, or one that a crash left behind.
func IsTempName(name string) bool { return strings.HasPrefix(name, tempPrefix) }

// fileStore is a directory on a local or shared parallel filesystem.
type fileStore struct {
	dir string // absolute
}

func newFileStore(dir string) (*fileStore, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: store directory %q: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("storage: store directory %s is a file", abs)
	}
	return &fileStore{dir: abs}, nil
}

func (s *fileStore) URL() string { return "file://" + filepath.ToSlash(s.dir) }

func (s *fileStore) path(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, name), nil
}

// Put writes a temporary file in the same directory, fsyncs it, renames it
// over name and fsyncs the directory, so that after a crash name holds the
// old or the new bytes and the rename itself is durable.
func (s *fileStore) Put(ctx context.Context, name string, data []byte) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	dst, err := s.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	f, err := os.CreateTemp(s.dir, tempPrefix+name+"-*")
	if err != nil {
		return fmt.Errorf("storage: put %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("storage: put %s: %w", name, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("storage: put %s: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("storage: put %s: %w", name, err)
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("storage: put %s: %w", name, err)
	}
	if err = os.Rename(f.Name(), dst); err != nil {
		return fmt.Errorf("storage: put %s: %w", name, err)
	}
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("storage: put %s: %w", name, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some filesystems cannot fsync a directory; the data itself is synced.
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

func (s *fileStore) Get(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := s.path(name)
	if err != nil {
		return nil, err
	}
	data, err := readWhole(p)
	if err != nil {
		return nil, fmt.Errorf("storage: get %s: %w", name, err)
	}
	return data, nil
}

// readWhole is os.ReadFile into memory advised huge (a shard is read into
// fresh memory, whose first touch costs a fault a page: scratch.go).
func readWhole(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := freshBytes(uint64(max(fi.Size(), 0)))
	n, err := io.ReadFull(f, data)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return data[:n], nil // the file shrank since Stat
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(f) // and what it grew by
	if err != nil {
		return nil, err
	}
	return append(data, rest...), nil
}

func (s *fileStore) Stat(ctx context.Context, name string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	p, err := s.path(name)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0, fmt.Errorf("storage: stat %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("storage: stat %s: not a regular file", name)
	}
	return fi.Size(), nil
}

// List returns regular files only, without temporaries; a directory that
// does not exist yet is an empty store.
func (s *fileStore) List(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", s.dir, err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), tempPrefix) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}
