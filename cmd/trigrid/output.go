package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/trigrid/trigrid/internal/atomicfile"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// openPartitionOutput opens the store -o names for `trigrid partition`,
// locks and readies it, before anything is written: an unknown or
// unsupported URL scheme, an in-memory store (gone when this process
// exits), a non-empty directory without --force and a directory another
// run is writing (the error names it) are errors. The run writes into the
// returned output's Store and then commits it (partition.OpenOutput: a
// replaced partitioning stays until the new one is complete) or aborts.
func openPartitionOutput(ctx context.Context, out string, force bool, what string, log *slog.Logger) (*partition.Output, error) {
	if out == "" {
		return nil, fmt.Errorf("-o DIR is required")
	}
	store, err := storage.Open(out)
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", out, err)
	}
	if strings.HasPrefix(store.URL(), "mem://") {
		return nil, fmt.Errorf("-o %s: an in-memory store ends with this process; give a directory", out)
	}
	if storage.IsS3(store) {
		o, err := partition.OpenStoreOutput(ctx, store, force, log)
		if errors.Is(err, partition.ErrOutputNotEmpty) {
			return nil, fmt.Errorf("-o %s: %w; choose an empty prefix (--force cannot replace a partitioning in an object store)", out, err)
		}
		if err != nil {
			return nil, fmt.Errorf("-o %s: %w", out, err)
		}
		return o, nil
	}
	dir, local := storage.LocalDir(store)
	if !local {
		return nil, fmt.Errorf("-o %s: not a directory store", out)
	}
	o, err := partition.OpenOutput(ctx, dir, force, what, log)
	if err != nil {
		if errors.Is(err, partition.ErrOutputNotEmpty) {
			return nil, fmt.Errorf("-o %s: %w; use --force to replace the partitioning there, or choose an empty directory", out, err)
		}
		return nil, fmt.Errorf("-o %s: %w", out, err)
	}
	return o, nil
}

// outputFile is an output path and the flag that gave it, for errors.
type outputFile struct{ flag, path string }

// checkOutputPaths refuses, before anything is read or written, outputs
// that would destroy an input or each other: an output that is one of
// inputs (the same file after symlinks, or a hard link of it), one that
// would land in an input that is a directory (a shard store, whose files
// it could replace), two outputs that are one file (compared after
// symlinks, through their directories when they do not exist yet), and an
// output whose directory does not exist. inputs are graph files, shard
// directories or store URLs; "", "-" (standard input), inputs that do not
// exist and stores that are not directories are skipped, as are outputs
// with an empty path. Any command that writes output files can call it.
func checkOutputPaths(inputs []string, outputs ...outputFile) error {
	var files, dirs []string
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		if strings.Contains(in, "://") {
			st, err := storage.Open(in)
			if err != nil {
				continue
			}
			d, ok := storage.LocalDir(st)
			if !ok {
				continue
			}
			in = d
		}
		fi, err := os.Stat(in)
		switch {
		case err != nil:
		case fi.IsDir():
			dirs = append(dirs, in)
		default:
			files = append(files, in)
		}
	}
	var seen []outputFile
	for _, o := range outputs {
		if o.path == "" {
			continue
		}
		target, err := atomicfile.Resolve(o.path)
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s: directory %s does not exist", o.flag, o.path, pe.Path)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
		for _, in := range files {
			if same, _ := atomicfile.SameFile(target, in); same {
				return fmt.Errorf("%s %s is the input %s (the same file): writing it would destroy the graph; choose another output", o.flag, o.path, in)
			}
		}
		for _, d := range dirs {
			if same, _ := atomicfile.SameFile(filepath.Dir(target), d); same {
				return fmt.Errorf("%s %s is inside %s, the shard store counted: it could replace one of its files; choose another directory", o.flag, o.path, d)
			}
		}
		for _, s := range seen {
			if same, _ := atomicfile.SameFile(target, s.path); same {
				return fmt.Errorf("%s %s and %s %s name the same file", s.flag, s.path, o.flag, o.path)
			}
		}
		seen = append(seen, o)
	}
	return nil
}
