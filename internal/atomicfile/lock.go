package atomicfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// ErrLocked is wrapped by the error of TryLock when another process holds
// the lock.
var ErrLocked = errors.New("locked by another process")

// Holder is what a lock file records of the process holding it.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	// What says what the holder is doing (its command line, say).
	What string `json:"what,omitempty"`
}

func (h Holder) String() string {
	s := fmt.Sprintf("pid %d on %s, started %s", h.PID, h.Host, h.Started.Local().Format("2006-01-02 15:04:05 MST"))
	if h.What != "" {
		s += ": " + h.What
	}
	return s
}

// LockedError is TryLock's error when the lock is held: it names the lock
// file and, when the holder had written it yet, the holder.
type LockedError struct {
	Path   string
	Holder *Holder // nil when the lock file did not say
}

func (e *LockedError) Error() string {
	if e.Holder == nil {
		return fmt.Sprintf("%s: %v (a process that has not yet written its name)", e.Path, ErrLocked)
	}
	return fmt.Sprintf("%s: %v (%s)", e.Path, ErrLocked, e.Holder)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// A Lock is an exclusive lock on a lock file, held until Unlock or the end
// of the process (a process killed outright releases it too, and its
// file, left behind, is taken over by the next TryLock).
type Lock struct {
	f    *os.File
	path string
}

// TryLock takes the exclusive lock on the file at path, creating it, and
// writes this process's Holder (with what) into it. It does not wait: when
// another process, or another TryLock of this one, holds the lock, it
// returns a *LockedError naming the holder. Where the system cannot lock
// files (not Unix), the lock excludes nobody.
func TryLock(path, what string) (*Lock, error) {
	for range 100 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
		readOnly := false
		if errors.Is(err, fs.ErrPermission) {
			// Another user's file: enough to lock, or to read its holder.
			f, err, readOnly = openReadOnly(path)
		}
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			defer f.Close()
			if errors.Is(err, errWouldBlock) {
				return nil, &LockedError{Path: path, Holder: awaitHolder(f)}
			}
			return nil, fmt.Errorf("%s: lock: %w", path, err)
		}
		// Between the open and the lock, the last holder may have removed
		// the file on unlocking; then path names a new file or none, and
		// this lock excludes nobody.
		if !samePath(f, path) {
			f.Close()
			continue
		}
		if readOnly {
			// A file of a killed run of another user: replace it.
			err := os.Remove(path)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: a stale lock file that cannot be replaced: %w", path, err)
			}
			continue
		}
		host, _ := os.Hostname()
		b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second), What: what})
		err = f.Truncate(0)
		if err == nil {
			_, err = f.WriteAt(append(b, '\n'), 0)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &Lock{f: f, path: path}, nil
	}
	return nil, fmt.Errorf("%s: lock: the file keeps changing", path)
}

func openReadOnly(path string) (*os.File, error, bool) {
	f, err := os.Open(path)
	return f, err, true
}

func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// awaitHolder reads the holder of a lock just taken by another: the holder
// writes its name right after locking, so an empty file is read again for
// a short while before the holder is given up as unknown (nil).
func awaitHolder(f *os.File) *Holder {
	for range 50 {
		if h := readHolder(f); h != nil {
			return h
		}
		time.Sleep(4 * time.Millisecond)
	}
	return readHolder(f)
}

// readHolder reads the holder a lock file records, or nil.
func readHolder(f *os.File) *Holder {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err != nil {
		return nil
	}
	var h Holder
	if json.Unmarshal([]byte(strings.TrimSpace(string(b))), &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// Unlock removes the lock file, when it is still this lock's, and
// releases the lock. It may be called more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	var err error
	if samePath(l.f, l.path) {
		if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = rerr
		}
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
