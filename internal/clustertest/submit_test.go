package clustertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A graph file with a line that is not an edge fails its job with the
// hint to use --skip-bad-lines, and submit takes that hint: the job
// resubmitted with it counts the graph without the line.
func TestSubmitSkipBadLines(t *testing.T) {
	t.Parallel()
	c, _ := startCluster(t, 1, nil)
	file := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(file, []byte("1 2\n2 3\nnot an edge\n3 1\n3 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, stderr, err := submitWait(t, c, time.Minute, "--partitions", "1", file)
	if err == nil || !strings.Contains(r.Error+stderr, "use --skip-bad-lines") {
		t.Fatalf("a graph with a bad line: %+v, %v, want the hint\n%s", r, err, stderr)
	}
	r, stderr, err = submitWait(t, c, time.Minute, "--partitions", "1", "--skip-bad-lines", "--format", "edgelist", file)
	checkDone(t, r, err, stderr, 1)
}
