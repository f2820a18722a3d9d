package storage

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Store keeps the files of one partitioning: shards, id map and manifest.
// Names are flat (no directories). Implementations must be safe for
// concurrent use.
type Store interface {
	// Put writes name atomically: a reader sees the old content or the new
	// content, never a partial file, even after a crash.
	Put(ctx context.Context, name string, data []byte) error
	// Get returns the content of name; a missing file is an error that
	// wraps os.ErrNotExist (test with errors.Is).
	Get(ctx context.Context, name string) ([]byte, error)
	// Stat returns the size of name, with the same missing-file error as Get.
	Stat(ctx context.Context, name string) (int64, error)
	// List returns the names in the store, sorted.
	List(ctx context.Context) ([]string, error)
	// URL returns a URL that Open turns back into this store.
	URL() string
}

// Open returns the store a URL names:
//
//	file:///abs/dir   a directory (created on the first Put)
//	file://rel/dir    a directory relative to the working directory
//	/abs/dir, rel/dir a plain path, same as file://
//	mem://name        a process-wide in-memory store; every Open of the
//	                  same name returns the same store (tests, and one
//	                  process running partition and count)
//	s3://bucket/prefix the objects prefix/NAME of an S3 bucket (any
//	                  S3-compatible server: see ParseS3URL and
//	                  S3Location.settings for the options and the
//	                  environment that say where it is)
func Open(rawURL string) (Store, error) {
	if rawURL == "" {
		return nil, fmt.Errorf("storage: empty store URL")
	}
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return newFileStore(rawURL)
	}
	switch strings.ToLower(scheme) {
	case "file":
		// file://rel keeps "rel" relative, which url.Parse would read as
		// a host; so only unescape the path.
		p, err := url.PathUnescape(rest)
		if err != nil {
			return nil, fmt.Errorf("storage: store URL %q: %w", rawURL, err)
		}
		if p == "" {
			return nil, fmt.Errorf("storage: store URL %q names no directory", rawURL)
		}
		return newFileStore(p)
	case "mem":
		if rest == "" {
			return nil, fmt.Errorf("storage: store URL %q: mem:// needs a name", rawURL)
		}
		return namedMemStore(rest), nil
	case "s3":
		return newS3Store(rawURL)
	}
	return nil, fmt.Errorf("storage: unsupported store URL scheme %q in %q (supported: file://, mem://, s3://, or a plain path)", scheme, rawURL)
}

// checkName refuses names that could leave the store's directory or clash
// with temporary files.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("storage: empty file name")
	case strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0):
		return fmt.Errorf("storage: file name %q contains a path separator", name)
	case strings.Contains(name, ".."):
		return fmt.Errorf("storage: file name %q contains \"..\"", name)
	case strings.HasPrefix(name, tempPrefix):
		return fmt.Errorf("storage: file name %q uses the temporary prefix %q", name, tempPrefix)
	case filepath.Base(name) != name:
		return fmt.Errorf("storage: file name %q is not a plain name", name)
	}
	return nil
}
