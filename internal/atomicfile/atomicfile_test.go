package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range ents {
		s = append(s, e.Name())
	}
	return s
}

func TestGroupCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	if err := os.WriteFile(a, []byte("old a"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(commit bool) {
		var g Group
		for _, p := range []string{a, b} {
			f, err := g.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, "new %s", filepath.Base(p))
		}
		if got := names(t, dir); len(got) != 3 {
			t.Fatalf("while writing: %v, want a.txt and two temporary files", got)
		}
		if commit {
			if err := g.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		g.Abort()
	}
	write(false)
	if got := names(t, dir); !slices.Equal(got, []string{"a.txt"}) {
		t.Fatalf("after Abort: %v", got)
	}
	if got, _ := os.ReadFile(a); string(got) != "old a" {
		t.Fatalf("Abort changed a target: %q", got)
	}
	write(true)
	if got := names(t, dir); !slices.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Fatalf("after Commit: %v", got)
	}
	for _, p := range []string{a, b} {
		if got, _ := os.ReadFile(p); string(got) != "new "+filepath.Base(p) {
			t.Fatalf("%s holds %q", p, got)
		}
	}
}

func TestCreateRefusals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	dir := t.TempDir()
	if err := os.Symlink(".", filepath.Join(dir, "here")); err != nil {
		t.Fatal(err)
	}
	var g Group
	defer g.Abort()
	if _, err := g.Create(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as target: %v", err)
	}
	if _, err := g.Create(filepath.Join(dir, "missing", "x")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing directory: %v", err)
	}
	if _, err := g.Create(filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Create(filepath.Join(dir, "here", "x")); err == nil || !strings.Contains(err.Error(), "same file") {
		t.Errorf("one target twice: %v", err)
	}
}

func TestResolveAndSameFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"real", "d"}, {"real/f", "dangling"}, {"loop", "loop"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	for in, want := range map[string]string{
		"d/x":      filepath.Join(real, "x"),
		"dangling": filepath.Join(real, "f"),
		"real":     real,
	} {
		if got, err := Resolve(filepath.Join(dir, in)); err != nil || got != want {
			t.Errorf("Resolve(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := Resolve(filepath.Join(dir, "loop")); err == nil {
		t.Error("a symlink loop resolved")
	}
	if same, err := SameFile(filepath.Join(dir, "d", "f"), filepath.Join(dir, "dangling")); err != nil || !same {
		t.Errorf("a dangling link and its target's path: same %v, %v", same, err)
	}
	h := filepath.Join(real, "h")
	if err := os.WriteFile(filepath.Join(real, "g"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(real, "g"), h); err != nil {
		t.Skip("hard links:", err)
	}
	if same, _ := SameFile(filepath.Join(real, "g"), h); !same {
		t.Error("hard links are not the same file")
	}
	if same, _ := SameFile(filepath.Join(real, "g"), filepath.Join(real, "x")); same {
		t.Error("two files are the same")
	}
}

func TestParseTemp(t *testing.T) {
	for name, want := range map[string]struct {
		host string
		pid  int
		ok   bool
	}{
		".v.tsv.trigrid-tmp-node-7.cluster-1234-abc": {"node-7.cluster", 1234, true},
		".a-b.trigrid-tmp-h-1-x":                     {"h", 1, true},
		".v.tsv.trigrid-tmp-h-0-x":                   {ok: false},
		".v.tsv.trigrid-tmp-h-x":                     {ok: false},
		"v.tsv.trigrid-tmp-h-12-x":                   {ok: false},
		".v.tsv.tmp-1234":                            {ok: false},
	} {
		host, pid, ok := parseTemp(name)
		if ok != want.ok || ok && (host != want.host || pid != want.pid) {
			t.Errorf("parseTemp(%q) = %q, %d, %v; want %+v", name, host, pid, ok, want)
		}
	}
}

// TestSweepByAge: another host's temporary file is removed only once
// older than StaleAfter; this process's own only by age too.
func TestSweepByAge(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-StaleAfter - time.Hour)
	files := map[string]bool{ // name: removed
		".a.trigrid-tmp-elsewhere-12-x":                         false,
		".b.trigrid-tmp-elsewhere-12-y":                         true,
		tempName("c") + "z":                                     false,
		tempName("d") + "w":                                     true,
		".e.trigrid-tmp-" + hostTag() + "-notapid-z":            false,
		fmt.Sprintf(".f.trigrid-tmp-%s-%d-q", hostTag(), 1<<30): true, // no such pid
	}
	for n, gone := range files {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if gone && !strings.Contains(n, "-q") {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if runtime.GOOS == "windows" {
		delete(files, fmt.Sprintf(".f.trigrid-tmp-%s-%d-q", hostTag(), 1<<30))
	}
	Sweep(dir)
	left := names(t, dir)
	for n, gone := range files {
		if slices.Contains(left, n) == gone {
			t.Errorf("%s: removed %v, want %v", n, !gone, gone)
		}
	}
}

func TestTryLock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no file locking")
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := TryLock(path, "the test")
	if err != nil {
		t.Fatal(err)
	}
	// Another open of the file in this process conflicts, as another
	// process's would, and names the holder.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, err := TryLock(path, "a rival")
			var le *LockedError
			if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || le.Holder == nil || le.Holder.PID != os.Getpid() || le.Holder.What != "the test" {
				t.Errorf("second lock: %v", err)
			}
		})
	}
	wg.Wait()
	if !strings.Contains(fmt.Sprint(&LockedError{Path: path, Holder: &Holder{PID: 7, Host: "h"}}), "pid 7 on h") {
		t.Error("the error does not name the holder")
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Unlock left the lock file: %v", err)
	}
	// A file a killed holder left is taken over.
	if err := os.WriteFile(path, []byte(`{"pid": 1, "host": "gone"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = TryLock(path, "again")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), fmt.Sprintf(`"pid":%d`, os.Getpid())) {
		t.Fatalf("lock file holds %s", data)
	}
}
