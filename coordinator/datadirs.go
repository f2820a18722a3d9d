package coordinator

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/trigrid/trigrid/storage"
)

// resolveDataDirs returns the directories of Config.DataDirs made
// absolute with symbolic links resolved, refusing one that is not an
// existing directory.
func resolveDataDirs(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if d == "" {
			return nil, errors.New("coordinator: data directory: empty path")
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("coordinator: data directory %s: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("coordinator: data directory %s: %w", d, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("coordinator: data directory %s: %w", d, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("coordinator: data directory %s: not a directory", d)
		}
		out = append(out, real)
	}
	return out, nil
}

// graphPath checks a graph file path from a submission against the data
// directories (already resolved) and returns the path to read: cleaned,
// made absolute (a relative path is taken from the coordinator's working
// directory) and with symbolic links resolved, so a link inside a data
// directory that points outside it is refused. Errors name the path as
// submitted; a path outside the data directories, one that does not
// exist and a link leading outside are refused with one message, so a
// client learns nothing of what lies outside.
func graphPath(path string, dirs []string) (string, error) {
	if len(dirs) == 0 {
		return "", fmt.Errorf("coordinator: graph file %q: this coordinator reads no graph files (start it with --data-dir DIR to allow those under DIR, or submit a shard store)", path)
	}
	if strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("coordinator: graph file %q: the path holds a NUL byte", path)
	}
	real, ok := resolveWithin(path, dirs)
	if !ok {
		return "", fmt.Errorf("coordinator: graph file %q: no such file within the data directories %v", path, dirs)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("coordinator: graph file %q: no such file within the data directories %v", path, dirs)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("coordinator: graph file %q: not a regular file", path)
	}
	return real, nil
}

// storeURL checks a shard store URL from a submission against the data
// directories as graphPath checks a graph file, and returns the URL to
// open: a directory store (a plain path or a file:// URL) as the file://
// URL of its directory, cleaned, made absolute and with links resolved;
// a mem:// store, which lives in this process, as it is; an s3:// store,
// which is no path of this machine and so not confined to the data
// directories, as s3StoreURL checks it. A directory
// outside the data directories, one that does not exist and a link
// leading outside are refused with one message.
func storeURL(raw string, dirs []string) (string, error) {
	if strings.ContainsRune(raw, 0) {
		return "", fmt.Errorf("coordinator: shard store %q: the URL holds a NUL byte", raw)
	}
	path := raw
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		switch strings.ToLower(scheme) {
		case "mem":
			return raw, nil
		case "s3":
			return s3StoreURL(raw)
		case "file":
			p, err := url.PathUnescape(rest)
			if err != nil || p == "" {
				return "", fmt.Errorf("coordinator: shard store %q: not a file:// URL of a directory", raw)
			}
			path = p
		default:
			return "", fmt.Errorf("coordinator: shard store %q: unsupported URL scheme %q (give a directory, as a path or a file:// URL)", raw, scheme)
		}
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("coordinator: shard store %q: this coordinator reads no shard stores from its filesystem (start it with --data-dir DIR to allow those under DIR)", raw)
	}
	real, ok := resolveWithin(path, dirs)
	var fi os.FileInfo
	var err error
	if ok {
		fi, err = os.Stat(real)
	}
	if !ok || err != nil {
		return "", fmt.Errorf("coordinator: shard store %q: no such directory within the data directories %v", raw, dirs)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("coordinator: shard store %q: not a directory", raw)
	}
	return "file://" + filepath.ToSlash(real), nil
}

// resolveWithin returns path cleaned, made absolute and with its links
// resolved, and whether it lies inside one of dirs both as given and as
// resolved; false also when it cannot be resolved (it does not exist).
func resolveWithin(path string, dirs []string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil || !within(abs, dirs) {
		return "", false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil || !within(real, dirs) {
		return "", false
	}
	return real, true
}

// within says whether the clean absolute path p lies strictly inside one
// of dirs.
func within(p string, dirs []string) bool {
	for _, d := range dirs {
		rel, err := filepath.Rel(d, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			continue
		}
		return true
	}
	return false
}

// s3StoreURL checks a submitted s3:// store URL and returns it in its
// canonical form. The data directories do not apply: the objects are on
// a server, read with this coordinator's (and its workers') credentials
// from their environment. For the same reason a submission may not say
// which server that is (endpoint=, insecure=, style=): its credentials
// would be sent wherever the URL points. The endpoint comes from the
// coordinator's environment (TRIGRID_S3_ENDPOINT, AWS_ENDPOINT_URL).
func s3StoreURL(raw string) (string, error) {
	loc, err := storage.ParseS3URL(raw)
	if err != nil {
		return "", fmt.Errorf("coordinator: shard store %q: %w", raw, err)
	}
	for _, k := range storage.S3ConnectionOptions {
		if loc.Options.Has(k) {
			return "", fmt.Errorf("coordinator: shard store %q: a submitted s3:// URL may not choose the server (option %s); the coordinator and its workers reach S3 as their environment says (TRIGRID_S3_ENDPOINT, AWS_ENDPOINT_URL, TRIGRID_S3_INSECURE)", raw, k)
		}
	}
	return loc.URL(), nil
}
