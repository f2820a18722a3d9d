package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// stateClaim is what a coordinator's start creates of its --state path:
// the topmost directory of the path that did not exist before (with
// everything under it), or nothing when the path existed or is "". A start
// that fails or is interrupted removes it, and so never removes a state
// directory (or a parent of one) that was there before.
type stateClaim struct{ created string }

// claimState notes which part of state does not exist yet. It fails when a
// part of the path exists and is not a directory.
func claimState(state string) (stateClaim, error) {
	if state == "" {
		return stateClaim{}, nil
	}
	abs, err := filepath.Abs(state)
	if err != nil {
		return stateClaim{}, fmt.Errorf("--state %s: %w", state, err)
	}
	created := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && !fi.IsDir():
			return stateClaim{}, fmt.Errorf("--state %s: %s is not a directory", state, dir)
		case err == nil:
			return stateClaim{created: created}, nil
		case !errors.Is(err, fs.ErrNotExist):
			return stateClaim{}, fmt.Errorf("--state %s: %w", state, err)
		}
		created = dir
		if filepath.Dir(dir) == dir {
			return stateClaim{created: created}, nil
		}
	}
}

// undo removes what the start created, logging a removal that fails.
func (c stateClaim) undo(logger *slog.Logger) {
	if c.created == "" {
		return
	}
	if err := os.RemoveAll(c.created); err != nil {
		logger.Warn("removing the state directory a failed start created", "dir", c.created, "err", err)
	}
}
