package counts

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestFinishWritesAllOrNothing: a run whose second output fails (here it
// is cancelled while its rows are written, as a signal would) leaves
// neither file and no temporary file.
func TestFinishWritesAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := sample()
	edges := c.Edges
	passes := 0
	c.Edges = func(yield func([2]uint32, uint64) bool) {
		// Check's pass runs first; the writer's pass is the second.
		if passes++; passes == 2 {
			cancel()
		}
		edges(yield)
	}
	vp, ep := filepath.Join(dir, "v.tsv"), filepath.Join(dir, "e.bin")
	if _, err := Finish(ctx, c, 1, Options{VerticesFile: vp, EdgesFile: ep}); err == nil {
		t.Fatal("cancelled while writing the edges: no error")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("files left after a failed run: %v", names(left))
	}

	// Both appear once a run succeeds.
	if _, err := Finish(context.Background(), sample(), 1, Options{VerticesFile: vp, EdgesFile: ep}); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 2 {
		t.Fatalf("after a good run: %v", names(left))
	}
}

func names(ents []os.DirEntry) []string {
	var s []string
	for _, e := range ents {
		s = append(s, e.Name())
	}
	return s
}

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Run(); err != nil {
		t.Skip("no /bin/sh:", err)
	}
	return cmd.Process.Pid
}

// TestWriteRemovesStaleTemps: the temporary file of a run killed outright
// (its pid gone) is removed by the next run into the same directory; one
// of a live process is kept.
func TestWriteRemovesStaleTemps(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process ids")
	}
	dir := t.TempDir()
	host, _ := os.Hostname()
	stale := filepath.Join(dir, fmt.Sprintf(".v.tsv.trigrid-tmp-%s-%d-123", host, deadPID(t)))
	live := filepath.Join(dir, fmt.Sprintf(".e.tsv.trigrid-tmp-%s-%d-456", host, os.Getppid()))
	for _, p := range []string{stale, live} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := WriteVertices(context.Background(), filepath.Join(dir, "other.tsv"), sample()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Fatalf("stale temporary %s was not removed", filepath.Base(stale))
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatalf("a live process's temporary was removed: %v", err)
	}
}
