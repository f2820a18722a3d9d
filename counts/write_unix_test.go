//go:build unix

package counts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteModes: a new output is created as any file is (0666 less the
// umask), a replaced one keeps its mode, and a symlink given as the output
// is written through: its target is replaced and the link stays.
func TestWriteModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	ctx := context.Background()

	fresh := filepath.Join(dir, "fresh.tsv")
	if _, err := WriteVertices(ctx, fresh, sample()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("new output: mode %v (%v), want 0644 under umask 022", fi.Mode(), err)
	}

	kept := filepath.Join(dir, "kept.tsv")
	if err := os.WriteFile(kept, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteVertices(ctx, kept, sample()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(kept); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("replaced output: mode %v (%v), want its old 0640", fi.Mode(), err)
	}

	sub := filepath.Join(dir, "real")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	target, link := filepath.Join(sub, "t.tsv"), filepath.Join(dir, "link.tsv")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("real", "t.tsv"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteEdges(ctx, link, sample()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the output symlink was replaced: %v (%v)", fi.Mode(), err)
	}
	if h, _ := readTSV(t, target); strings.Join(h, " ") != "u v support" {
		t.Fatalf("the link's target holds header %q, not the edges", h)
	}
	// A dangling link is written through too: its target is created.
	dangling := filepath.Join(dir, "dangling.tsv")
	if err := os.Symlink(filepath.Join("real", "new.tsv"), dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteVertices(ctx, dangling, sample()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the dangling symlink was replaced: %v (%v)", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(sub, "new.tsv")); err != nil {
		t.Errorf("the dangling link's target was not created: %v", err)
	}
}
