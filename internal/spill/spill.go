// Package spill creates temporary directories for data too large for
// memory, owned by the process that made them, and finds the ones whose
// owner died without removing them (killed with SIGKILL, or a crash).
//
// A spill directory is named PREFIX-PID-RANDOM and holds a lock file on
// which its process keeps an exclusive lock (flock) while it lives. The
// operating system drops the lock when the process ends, however it ends,
// so another process that can take the lock knows the owner is gone; the
// pid in the name is for people and for systems without flock.
package spill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lockName is the lock file inside every spill directory.
const lockName = ".owner.lock"

// Dir is a spill directory owned by this process.
type Dir struct {
	path string
	lock *os.File
}

// Create makes a spill directory named prefix-PID-RANDOM in parent (""
// means os.TempDir()) and takes its lock.
func Create(parent, prefix string) (*Dir, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	path, err := os.MkdirTemp(parent, fmt.Sprintf("%s-%d-", prefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(path, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		err = lockFile(f, true)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(path)
		return nil, fmt.Errorf("spill: lock %s: %w", path, err)
	}
	return &Dir{path: path, lock: f}, nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Remove deletes the directory and everything in it, then drops the lock.
// It is safe to call more than once.
func (d *Dir) Remove() error {
	if d.lock == nil {
		return nil
	}
	err := os.RemoveAll(d.path)
	d.lock.Close()
	d.lock = nil
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	return nil
}

// Stale is a spill directory left by a process that is gone.
type Stale struct {
	Path  string
	PID   int
	Bytes int64
	// Removed is false when the directory could not be removed (Err says
	// why).
	Removed bool
	Err     error
}

// Sweep removes the spill directories named prefix-PID-* in parent (""
// means os.TempDir()) whose owner is gone, and returns what it found.
// Directories in use are left alone: their lock is held. A directory
// without a lock file counts as stale only when no process has its pid.
func Sweep(parent, prefix string) ([]Stale, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	ents, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	var found []Stale
	for _, e := range ents {
		if legacyName(e.Name(), prefix) && e.IsDir() {
			// Made by a build without owner locks: nothing tells whether
			// its process still runs, so it is reported, never removed.
			path := filepath.Join(parent, e.Name())
			found = append(found, Stale{Path: path, Bytes: duBytes(path), Err: ErrNoOwner})
			continue
		}
		pid, ok := parseName(e.Name(), prefix)
		if !ok || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		path := filepath.Join(parent, e.Name())
		if !ownerGone(path, pid) {
			continue
		}
		st := Stale{Path: path, PID: pid, Bytes: duBytes(path)}
		if err := os.RemoveAll(path); err != nil {
			st.Err = err
		} else {
			st.Removed = true
		}
		found = append(found, st)
	}
	return found, nil
}

// ErrNoOwner is the Err of a spill directory without an owner record,
// made by an older build: it may still be in use, so it is not removed.
var ErrNoOwner = errors.New("no owner recorded (made by an older build); remove it by hand if no partition is running")

// legacyName matches prefix-RANDOM with RANDOM all digits, the name older
// builds gave their spill directories.
func legacyName(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix+"-")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseName returns the pid of a name prefix-PID-RANDOM.
func parseName(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix+"-")
	if !ok {
		return 0, false
	}
	p, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}

// ownerGone reports whether the process that made path has ended: its
// lock can be taken (and is released again at once), or, without a lock
// file, no process has its pid.
func ownerGone(path string, pid int) bool {
	f, err := os.OpenFile(filepath.Join(path, lockName), os.O_RDWR, 0)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) && !processAlive(pid)
	}
	defer f.Close()
	return lockFile(f, false) == nil
}

func duBytes(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
