package partition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/trigrid/trigrid/internal/atomicfile"
	"github.com/trigrid/trigrid/storage"
)

// Output is a directory taking a new partitioning. From OpenOutput to
// Commit or Abort it is locked: a lock file beside it (".NAME.trigrid-lock"
// in its parent) holds an exclusive flock and names the holder, so a
// second run into the same directory fails at once. A directory that
// exists and holds no partitioning is written in place; otherwise the run
// writes into a new directory beside it (".NAME.trigrid-new-*"), which
// Commit puts in its place only once complete, so that a failed,
// interrupted or killed run leaves the old partitioning as it was.
type Output struct {
	// Store is where the run writes its partitioning.
	Store storage.Store

	dir     string // the output directory, symlinks resolved
	url     string // the output's store URL
	tmp     string // the new partitioning's directory; "" when in place
	replace bool   // dir holds an old partitioning, swapped out by Commit
	lock    *atomicfile.Lock
	made    []string // the parents OpenOutput created, deepest first
	log     *slog.Logger
	done    bool
}

// exchange swaps two directories in one step; a variable so that tests
// can take the two-rename path of systems without it.
var exchange = atomicfile.Exchange

// OpenOutput locks dir (a path; a symlink to a directory is followed) for
// a new partitioning and readies it, creating missing parents; what
// describes the run in the lock file (its command line, say), for the
// error another run meets. A directory holding files is an error wrapping
// ErrOutputNotEmpty unless replace is set; replacing refuses a directory
// holding anything a partitioning does not write, and one that is a mount
// point (a rename cannot replace it). A directory locked by another run,
// or by another OpenOutput of this process, is an error wrapping
// atomicfile.ErrLocked that names the holder. Write the partitioning into
// the returned Output's Store, then call Commit, or Abort on failure.
func OpenOutput(ctx context.Context, dir string, replace bool, what string, log *slog.Logger) (out *Output, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("partition: output %s: %w", dir, err)
	}
	if filepath.Dir(abs) == abs {
		return nil, fmt.Errorf("partition: output %s: a filesystem's root cannot be replaced; give a directory below it", dir)
	}
	o := &Output{log: log}
	defer func() {
		if err != nil {
			o.Abort()
		}
	}()
	if o.made, err = mkdirAll(filepath.Dir(abs)); err != nil {
		return nil, fmt.Errorf("partition: output %s: %w", dir, err)
	}
	if o.dir, err = atomicfile.Resolve(abs); err != nil {
		return nil, fmt.Errorf("partition: output %s: %w", dir, err)
	}
	o.url = "file://" + filepath.ToSlash(o.dir)
	parent, stem := filepath.Dir(o.dir), outputStem(filepath.Base(o.dir))
	fi, err := os.Stat(o.dir)
	exists := err == nil
	switch {
	case exists && !fi.IsDir():
		return nil, fmt.Errorf("partition: output %s is a file, not a directory", dir)
	case !exists && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("partition: output %s: %w", dir, err)
	}
	if o.lock, err = atomicfile.TryLock(filepath.Join(parent, "."+stem+".trigrid-lock"), what); err != nil {
		if le := (*atomicfile.LockedError)(nil); errors.As(err, &le) {
			holder := "a process that has not written its name yet"
			if le.Holder != nil {
				holder = le.Holder.String()
			}
			return nil, fmt.Errorf("partition: output %s is being written by another partition run (%s; lock %s): %w", dir, holder, le.Path, atomicfile.ErrLocked)
		}
		return nil, fmt.Errorf("partition: output %s: %w", dir, err)
	}
	// Under the lock, the directories of earlier runs beside this one
	// belong to runs that were killed.
	o.sweep(parent, stem)
	if !exists {
		return o.writeBeside(parent, stem, 0)
	}
	ents, err := os.ReadDir(o.dir)
	if err != nil {
		return nil, fmt.Errorf("partition: output %s: %w", dir, err)
	}
	var files []string
	for _, e := range ents {
		if e.Type().IsRegular() && !storage.IsTempName(e.Name()) {
			files = append(files, e.Name())
		}
	}
	if len(files) == 0 {
		if o.Store, err = storage.Open(o.dir); err != nil {
			return nil, err
		}
		if _, err := storage.RemoveTemps(ctx, o.Store); err != nil {
			return nil, err
		}
		return o, nil
	}
	if !replace {
		return nil, fmt.Errorf("partition: output %s holds %d files (%s...): %w", o.url, len(files), files[0], ErrOutputNotEmpty)
	}
	if foreign := foreignEntries(o.dir, ents); len(foreign) > 0 {
		return nil, fmt.Errorf("partition: output %s holds %s, which is not part of a trigrid partitioning; not replacing it (choose an empty directory)", o.url, foreign[0])
	}
	pfi, err := os.Stat(parent)
	if err != nil {
		return nil, fmt.Errorf("partition: output %s: %w", dir, err)
	}
	if !atomicfile.SameDevice(fi, pfi) {
		return nil, fmt.Errorf("partition: output %s is a mount point: the new partitioning, written beside it, could not be renamed into its place; empty it, or partition into a directory below it", dir)
	}
	o.replace = true
	return o.writeBeside(parent, stem, fi.Mode().Perm())
}

// writeBeside makes the directory the run writes into, beside the
// output: with perm, or as any new directory when perm is 0.
func (o *Output) writeBeside(parent, stem string, perm fs.FileMode) (*Output, error) {
	var err error
	if o.tmp, err = mkdirTemp(parent, "."+stem+".trigrid-new-"); err != nil {
		return nil, fmt.Errorf("partition: output %s: %w", o.url, err)
	}
	if perm != 0 {
		if err := os.Chmod(o.tmp, perm); err != nil {
			return nil, fmt.Errorf("partition: output %s: %w", o.url, err)
		}
	}
	if o.Store, err = storage.Open(o.tmp); err != nil {
		return nil, err
	}
	return o, nil
}

// URL is the output's store URL: where the partitioning is once
// committed.
func (o *Output) URL() string { return o.url }

// Commit puts the finished partitioning in place and releases the lock:
// a new directory is renamed to the output's name; one replacing an old
// partitioning is swapped with it in one step where the system can
// (renameat2 RENAME_EXCHANGE), else by two renames, and the old one is
// then removed. With ctx already cancelled it aborts instead (an
// interrupted run leaves nothing new). A failure before the swap leaves
// the old partitioning in place.
func (o *Output) Commit(ctx context.Context) error {
	if o.done {
		return errors.New("partition: output already committed or aborted")
	}
	if err := ctx.Err(); err != nil {
		o.Abort()
		return err
	}
	if o.tmp == "" {
		o.release()
		return nil
	}
	parent := filepath.Dir(o.dir)
	if err := atomicfile.SyncDir(o.tmp); err != nil {
		o.Abort()
		return fmt.Errorf("partition: output %s: %w", o.url, err)
	}
	if !o.replace {
		if err := os.Rename(o.tmp, o.dir); err != nil {
			o.Abort()
			return fmt.Errorf("partition: output %s: %w", o.url, err)
		}
		o.tmp = ""
		err := atomicfile.SyncDir(parent)
		o.release()
		if err != nil {
			return fmt.Errorf("partition: output %s: %w", o.url, err)
		}
		return nil
	}
	old, err := o.swap()
	if err != nil {
		o.Abort()
		return fmt.Errorf("partition: replacing %s: %w", o.url, err)
	}
	o.tmp = ""
	serr := atomicfile.SyncDir(parent)
	if n, err := removePartitioning(old); err != nil {
		o.log.Warn("could not remove the old partitioning after replacing it", "dir", old, "err", err)
	} else {
		o.log.Info("replaced the old partitioning", "store", o.url, "files", n)
	}
	o.release()
	if serr != nil {
		return fmt.Errorf("partition: output %s: %w", o.url, serr)
	}
	return nil
}

// swap puts the new directory at the output's path and returns where the
// old one went.
func (o *Output) swap() (string, error) {
	err := exchange(o.tmp, o.dir)
	if err == nil {
		return o.tmp, nil
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		return "", err
	}
	old, err := reserveName(filepath.Dir(o.dir), "."+outputStem(filepath.Base(o.dir))+".trigrid-new-")
	if err != nil {
		return "", err
	}
	if err := os.Rename(o.dir, old); err != nil {
		return "", err
	}
	if err := os.Rename(o.tmp, o.dir); err != nil {
		if rerr := os.Rename(old, o.dir); rerr != nil {
			return "", fmt.Errorf("%w; the old partitioning is at %s", err, old)
		}
		return "", err
	}
	return old, nil
}

// Abort removes what the run wrote beside the output (what it wrote in
// place, the partitioner takes back itself), the parents OpenOutput
// created when empty, and releases the lock; the old partitioning stays.
// It may be called after Commit (it does nothing then) and more than once.
func (o *Output) Abort() {
	if o.done {
		return
	}
	if o.tmp != "" {
		if err := os.RemoveAll(o.tmp); err != nil {
			o.log.Warn("could not remove an unfinished partitioning", "dir", o.tmp, "err", err)
		}
		o.tmp = ""
	}
	o.release()
	for _, d := range o.made {
		if os.Remove(d) != nil {
			break
		}
	}
}

func (o *Output) release() {
	o.done = true
	if o.lock == nil { // OpenStoreOutput's
		return
	}
	if err := o.lock.Unlock(); err != nil {
		o.log.Warn("could not remove the output's lock file", "file", o.lock.Path(), "err", err)
	}
}

// sweep removes the directories that killed runs left beside the output
// (stem's ".trigrid-new-" directories: under the lock, no live run owns
// one), each only as far as it holds a partitioning's files.
func (o *Output) sweep(parent, stem string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	prefix := "." + stem + ".trigrid-new-"
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		d := filepath.Join(parent, e.Name())
		if _, err := removePartitioning(d); err != nil {
			o.log.Warn("could not remove the directory of a killed partition run", "dir", d, "err", err)
			continue
		}
		o.log.Info("removed the directory of a killed partition run", "dir", d)
	}
}

// outputStem is the output's name as it appears in the names of its lock
// file and directories beside it: the name itself, or for a long one a
// prefix and a hash of the whole, so that those names stay within
// NAME_MAX and distinct.
func outputStem(base string) string {
	if len(base) <= 100 {
		return base
	}
	h := fnv.New64a()
	h.Write([]byte(base))
	return base[:80] + "-" + strconv.FormatUint(h.Sum64(), 16)
}

// foreignEntries lists the entries of dir that a partitioning does not
// write: anything but regular files named as a partitioning's files are
// (or listed by its manifest, whether or not it verifies) and the store's
// temporary files.
func foreignEntries(dir string, ents []fs.DirEntry) []string {
	ours := map[string]bool{storage.ManifestName: true, IDMapName: true}
	if data, err := os.ReadFile(filepath.Join(dir, storage.ManifestName)); err == nil {
		var m struct {
			Shards []struct{ File string } `json:"shards"`
			IDMap  *struct{ File string }  `json:"id_map"`
		}
		if json.Unmarshal(data, &m) == nil {
			for _, s := range m.Shards {
				ours[s.File] = true
			}
			if m.IDMap != nil {
				ours[m.IDMap.File] = true
			}
		}
	}
	var foreign []string
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !(ours[n] || shardNameRE.MatchString(n) || storage.IsTempName(n)) {
			foreign = append(foreign, n)
		}
	}
	return foreign
}

// removePartitioning removes a directory holding a partitioning: its
// manifest first, then its other files, then the directory. A directory
// holding anything else keeps that (and so stays), which is an error; it
// returns the files removed.
func removePartitioning(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	foreign := foreignEntries(dir, ents)
	skip := make(map[string]bool, len(foreign))
	for _, n := range foreign {
		skip[n] = true
	}
	n := 0
	if err := os.Remove(filepath.Join(dir, storage.ManifestName)); err == nil {
		n++
	}
	for _, e := range ents {
		if !skip[e.Name()] && e.Name() != storage.ManifestName {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return n, err
			}
			n++
		}
	}
	if len(foreign) > 0 {
		return n, fmt.Errorf("%s holds %s, which is not part of a trigrid partitioning; left in place", dir, foreign[0])
	}
	return n, os.Remove(dir)
}

// mkdirAll creates dir and its missing parents as any new directory is
// made (0777 less the umask) and returns those it created, deepest first.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	return missing, nil
}

// mkdirTemp creates a new directory in parent named prefix plus a random
// suffix, as any new directory is made (0777 less the umask; os.MkdirTemp
// makes 0700).
func mkdirTemp(parent, prefix string) (string, error) {
	for range 100 {
		d := filepath.Join(parent, prefix+strconv.FormatUint(rand.Uint64(), 36))
		err := os.Mkdir(d, 0o777)
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("could not create a directory in %s", parent)
}

// reserveName returns a path in parent, named prefix plus a random suffix,
// that does not exist yet.
func reserveName(parent, prefix string) (string, error) {
	for range 100 {
		d := filepath.Join(parent, prefix+strconv.FormatUint(rand.Uint64(), 36))
		if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			return d, nil
		}
	}
	return "", fmt.Errorf("could not choose a name in %s", parent)
}
