// Package atomicfile writes output files that appear complete or not at
// all, several at once: each file of a Group is written to a temporary
// file in its target's directory, and all are renamed over their targets
// only after every one was written and synced. A failed or abandoned group
// removes its temporary files; those of a process killed outright are
// removed by the next group that writes into the same directory.
//
// Targets are created as any new file is (mode 0666 less the umask); a
// file that is replaced keeps its mode (and, where the process may set it,
// its owner). A symlink given as a target is written through: the file it
// points to is replaced and the link stays.
//
// The package also holds the exclusive lock file (TryLock) that a run
// writing a directory takes for its whole length.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tempMarker separates a target's name from the temporary file's owner in
// a temporary file's name: "." + base + tempMarker + host-pid-random.
const tempMarker = ".trigrid-tmp-"

// StaleAfter is how old (since its last write) a temporary file must be
// before a sweep removes it even though its owner may be alive: one of
// another host, or one whose pid is alive now, which may be a later
// process that reused the pid.
const StaleAfter = 24 * time.Hour

// maxLinks bounds the symlinks Resolve follows, as the kernel does.
const maxLinks = 40

// Resolve returns the absolute path that writing to path reaches, with
// every symlink followed: those of its directories and, when path itself
// is a symlink, its target's, a dangling one included. A path that does
// not exist yet is resolved through its directory, which must exist (the
// error, an *fs.PathError, names what is missing).
func Resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for range maxLinks {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			return r, nil
		}
		fi, err := os.Lstat(abs)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			// A dangling link: follow it one step.
			l, err := os.Readlink(abs)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(l) {
				l = filepath.Join(filepath.Dir(abs), l)
			}
			abs = l
			continue
		case err == nil:
			// It exists but EvalSymlinks failed: report why.
			_, err = filepath.EvalSymlinks(abs)
			return "", err
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
		if err != nil {
			return "", err
		}
		return filepath.Join(dir, filepath.Base(abs)), nil
	}
	return "", &fs.PathError{Op: "resolve", Path: path, Err: errors.New("too many levels of symbolic links")}
}

// SameFile reports whether paths a and b name one file: the same existing
// file (os.SameFile, so hard links too), or, where either does not exist
// yet, the same resolved path.
func SameFile(a, b string) (bool, error) {
	ra, err := Resolve(a)
	if err != nil {
		return false, err
	}
	rb, err := Resolve(b)
	if err != nil {
		return false, err
	}
	if ra == rb {
		return true, nil
	}
	fa, ea := os.Stat(ra)
	fb, eb := os.Stat(rb)
	return ea == nil && eb == nil && os.SameFile(fa, fb), nil
}

// A Group is a set of output files written together: Commit makes them
// all appear, Abort none. A Group is not safe for concurrent use; its
// files may be written concurrently.
type Group struct {
	files []*file
	swept map[string]bool
	ended bool
}

type file struct {
	f      *os.File
	path   string // as given, for errors
	target string // resolved
	tmp    string
}

// Create starts the output path: it returns the temporary file to write,
// which the group closes. It fails when path is not a regular file or a
// symlink reaching one (a directory, a device), when its directory does
// not exist, or when another file of the group reaches the same target.
// The first Create in a directory removes the temporary files there that
// killed processes left (Sweep).
func (g *Group) Create(path string) (*os.File, error) {
	if g.ended {
		return nil, errors.New("atomicfile: group already committed or aborted")
	}
	target, err := Resolve(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, o := range g.files {
		if o.target == target {
			return nil, fmt.Errorf("%s and %s are the same file", o.path, path)
		}
	}
	perm := fs.FileMode(0o666) // less the umask, as for any new file
	old, err := os.Stat(target)
	exists := err == nil
	switch {
	case exists && !old.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", path)
	case exists:
		perm = old.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(target)
	if g.swept == nil {
		g.swept = map[string]bool{}
	}
	if !g.swept[dir] {
		g.swept[dir] = true
		Sweep(dir)
	}
	f, tmp, err := createTemp(dir, filepath.Base(target), perm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if exists {
		// The umask may have cleared bits of the old mode; the owner is
		// kept where this process may set it.
		if err := f.Chmod(perm); err != nil {
			f.Close()
			os.Remove(tmp)
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		keepOwner(f, old)
	}
	g.files = append(g.files, &file{f: f, path: path, target: target, tmp: tmp})
	return f, nil
}

// Commit syncs and closes every file, then renames each over its target
// and syncs their directories. Until the first rename any failure removes
// every temporary file and leaves all targets as they were; a rename
// itself failing (the temporary files already sit in the targets'
// directories, so only a fault of the filesystem does) leaves the targets
// renamed before it replaced.
func (g *Group) Commit() error {
	if g.ended {
		return errors.New("atomicfile: group already committed or aborted")
	}
	for _, o := range g.files {
		err := o.f.Sync()
		if cerr := o.f.Close(); err == nil {
			err = cerr
		}
		o.f = nil
		if err != nil {
			g.Abort()
			return fmt.Errorf("%s: %w", o.path, err)
		}
	}
	g.ended = true
	dirs := map[string]bool{}
	for i, o := range g.files {
		if err := os.Rename(o.tmp, o.target); err != nil {
			for _, rest := range g.files[i:] {
				os.Remove(rest.tmp)
			}
			return fmt.Errorf("%s: %w", o.path, err)
		}
		dirs[filepath.Dir(o.target)] = true
	}
	for d := range dirs {
		if err := SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// Abort closes and removes every temporary file, leaving all targets as
// they were. It may be called after Commit (it does nothing then) and
// more than once.
func (g *Group) Abort() {
	if g.ended {
		return
	}
	g.ended = true
	for _, o := range g.files {
		if o.f != nil {
			o.f.Close()
		}
		os.Remove(o.tmp)
	}
}

// Write writes one file atomically: write fills the temporary file, and
// the file appears under path only if write returns nil.
func Write(path string, write func(f *os.File) error) error {
	var g Group
	f, err := g.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		g.Abort()
		return err
	}
	return g.Commit()
}

var (
	ownerOnce sync.Once
	ownerTag  string // host-pid
)

// owner is this process's part of its temporary files' names.
func owner() string {
	ownerOnce.Do(func() {
		ownerTag = hostTag() + "-" + strconv.Itoa(os.Getpid())
	})
	return ownerTag
}

// hostTag is this host's name as it appears in temporary and lock files:
// characters other than letters, digits, '.', '_' and '-' become '_'.
func hostTag() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	b := []byte(h)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 64)])
}

// maxBase bounds the part of a target's name kept in its temporary file's
// name, so that the latter stays within NAME_MAX.
const maxBase = 120

func tempName(base string) string {
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return "." + base + tempMarker + owner() + "-"
}

func createTemp(dir, base string, perm fs.FileMode) (*os.File, string, error) {
	prefix := tempName(base)
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fmt.Errorf("could not create a temporary file in %s", dir)
}

// parseTemp returns the host and pid in a temporary file's name.
func parseTemp(name string) (host string, pid int, ok bool) {
	k := strings.LastIndex(name, tempMarker)
	if !strings.HasPrefix(name, ".") || k < 0 {
		return "", 0, false
	}
	rest := name[k+len(tempMarker):] // host-pid-random
	r := strings.LastIndexByte(rest, '-')
	if r < 0 {
		return "", 0, false
	}
	rest = rest[:r]
	p := strings.LastIndexByte(rest, '-')
	if p < 0 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(rest[p+1:])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return rest[:p], pid, true
}

// Sweep removes the temporary files in dir that are nobody's any more:
// those of this host whose process is gone, and any not written for
// StaleAfter. This process's own are kept (they may belong to a group
// being written), unless stale by age. Errors are ignored: a file that
// cannot be removed is left for a later sweep. It returns the files
// removed.
func Sweep(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	me, pid := hostTag(), os.Getpid()
	var removed []string
	for _, e := range ents {
		host, p, ok := parseTemp(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		stale := host == me && p != pid && !processAlive(p)
		if !stale {
			fi, err := e.Info()
			stale = err == nil && time.Since(fi.ModTime()) > StaleAfter
		}
		if stale {
			name := filepath.Join(dir, e.Name())
			if os.Remove(name) == nil {
				removed = append(removed, name)
			}
		}
	}
	return removed
}

// SyncDir fsyncs a directory, so that renames in it are durable; a
// filesystem that cannot sync directories is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
