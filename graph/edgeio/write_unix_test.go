//go:build unix

package edgeio

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// WriteFile creates a file as any program does (0666 less the umask),
// keeps a replaced file's mode, writes through a symlink given as the
// output, and sweeps the temporary file a killed writer left behind.
func TestWriteFileModesAndLinks(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	edges := []graph.Edge{{U: 0, V: 1}, {U: 1, V: 2}, {U: 2, V: 0}}
	ctx := context.Background()

	fresh := filepath.Join(dir, "g.txt")
	if err := WriteFileContext(ctx, fresh, edges, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("new file: mode %v (%v), want 0640 under umask 027", fi.Mode(), err)
	}
	if err := os.Chmod(fresh, 0o604); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileContext(ctx, fresh, edges[:1], WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o604 {
		t.Errorf("replaced file: mode %v (%v), want its old 0604", fi.Mode(), err)
	}

	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("g.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileContext(ctx, link, edges, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the output symlink was replaced by a file (%v)", err)
	}
	got, _, err := ReadFile(ctx, fresh, ReadOptions{})
	if err != nil || len(got) != len(edges) {
		t.Errorf("the link's target holds %d edges (%v), want %d", len(got), err, len(edges))
	}

	// A temporary file of a writer that no longer runs is removed by the
	// next write into the directory.
	stale := filepath.Join(dir, ".h.txt.trigrid-tmp-"+hostName(t)+"-999999999-1")
	if err := os.WriteFile(stale, []byte("1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileContext(ctx, filepath.Join(dir, "h.txt"), edges, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a dead writer's temporary file is still there (%v)", err)
	}
}

func hostName(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	return h
}
