package coordinator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
// submitted.
func graphPath(path string, dirs []string) (string, error) {
	if len(dirs) == 0 {
		return "", fmt.Errorf("coordinator: graph file %q: this coordinator reads no graph files (start it with --data-dir DIR to allow those under DIR, or submit a shard store)", path)
	}
	if strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("coordinator: graph file %q: the path holds a NUL byte", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("coordinator: graph file %q: %w", path, err)
	}
	if !within(abs, dirs) {
		return "", fmt.Errorf("coordinator: graph file %q: outside the data directories %v", path, dirs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("coordinator: graph file %q: %w", path, err)
	}
	if !within(real, dirs) {
		return "", fmt.Errorf("coordinator: graph file %q: a symbolic link leads to %s, outside the data directories %v", path, real, dirs)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("coordinator: graph file %q: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("coordinator: graph file %q: not a regular file", path)
	}
	return real, nil
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
