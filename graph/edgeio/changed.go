package edgeio

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrChanged is wrapped by the error of a read during which the file
// changed (it was truncated, appended to or rewritten): what was read may
// be neither the old file nor the new one, so nothing of it is returned.
var ErrChanged = errors.New("changed while it was read")

func changedError(name string) error {
	return fmt.Errorf("graph/edgeio: %s %w: read it again once nothing writes to it", name, ErrChanged)
}

// fileWatch remembers an open file's size and modification time when a
// read of it began. The file is read with read and pread calls only, never
// mapped, so a change shows as a short read or as other bytes, and this
// check after the read tells those from a malformed file.
type fileWatch struct {
	f    *os.File
	size int64
	mod  time.Time
}

func watchFile(f *os.File, fi os.FileInfo) *fileWatch {
	return &fileWatch{f: f, size: fi.Size(), mod: fi.ModTime()}
}

// changed reports whether the file's size or modification time differs
// from when the watch began (or it can no longer be looked at).
func (w *fileWatch) changed() bool {
	fi, err := w.f.Stat()
	return err != nil || fi.Size() != w.size || !fi.ModTime().Equal(w.mod)
}
