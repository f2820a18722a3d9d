package spill

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

func TestSweep(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no file locks")
	}
	parent := t.TempDir()
	own, err := Create(parent, "tg")
	if err != nil {
		t.Fatal(err)
	}
	// A finished child's pid names a process that is gone.
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	dead := child.Process.Pid

	stale := filepath.Join(parent, "tg-"+pidStr(dead)+"-stale")
	mk(t, stale, true, 1000)
	noLockDead := filepath.Join(parent, "tg-"+pidStr(dead)+"-nolock")
	mk(t, noLockDead, false, 10)
	noLockAlive := filepath.Join(parent, "tg-1-nolock") // pid 1 always exists
	mk(t, noLockAlive, false, 10)
	held := filepath.Join(parent, "tg-"+pidStr(dead)+"-held")
	mk(t, held, true, 10)
	// Holding the lock through another open file stands for a live owner.
	f, err := os.OpenFile(filepath.Join(held, lockName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(f, true); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(parent, "other-"+pidStr(dead)+"-x")
	mk(t, other, true, 10)
	legacy := filepath.Join(parent, "tg-798780535")
	mk(t, legacy, false, 10)

	found, err := Sweep(parent, "tg")
	if err != nil {
		t.Fatal(err)
	}
	removed := map[string]Stale{}
	for _, s := range found {
		removed[s.Path] = s
	}
	if s, ok := removed[stale]; !ok || !s.Removed || s.PID != dead || s.Bytes != 1000 {
		t.Errorf("stale directory: %+v (found %v)", s, found)
	}
	if _, ok := removed[noLockDead]; !ok {
		t.Errorf("lockless directory of a dead pid not removed (found %v)", found)
	}
	if s, ok := removed[legacy]; !ok || s.Removed || !errors.Is(s.Err, ErrNoOwner) {
		t.Errorf("older build's directory: %+v, want reported and kept", s)
	}
	if len(found) != 3 {
		t.Errorf("found %d directories, want 3: %+v", len(found), found)
	}
	for _, keep := range []string{own.Path(), noLockAlive, held, other, legacy} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s removed: %v", keep, err)
		}
	}
	for _, gone := range []string{stale, noLockDead} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s still there", gone)
		}
	}
	if err := own.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := own.Remove(); err != nil {
		t.Fatal("second Remove:", err)
	}
	if _, err := os.Stat(own.Path()); !os.IsNotExist(err) {
		t.Fatal("Remove left the directory")
	}
}

func pidStr(pid int) string { return strconv.Itoa(pid) }

func mk(t *testing.T, path string, lock bool, n int) {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if lock {
		if err := os.WriteFile(filepath.Join(path, lockName), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(path, "run"), make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}
}
