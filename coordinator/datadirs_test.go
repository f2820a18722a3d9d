package coordinator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
)

// Graph files are read only from the data directories: paths are cleaned
// and their links resolved first, every refusal names the path, and a
// path outside, a link leading outside and a missing file are refused
// alike.
func TestServerGraphPathsStayInDataDirs(t *testing.T) {
	data := t.TempDir()
	outside := t.TempDir()
	graph, err := os.ReadFile(testGraph)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(data, "g.txt.gz")
	out := filepath.Join(outside, "secret.txt")
	for _, p := range []string{in, out} {
		if err := os.WriteFile(p, graph, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(out, filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(data, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(data, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) { c.DataDirs = []string{data} })
	ctx := context.Background()
	const refused = "no such file within the data directories"
	for _, c := range []struct{ path, want string }{
		{out, refused},
		{filepath.Join(data, "..", filepath.Base(outside), "secret.txt"), refused},
		{filepath.Join(data, "link"), refused},
		{filepath.Join(data, "dirlink", "secret.txt"), refused},
		{filepath.Join(data, "sub"), "not a regular file"},
		{data, refused},
		{filepath.Join(data, "missing"), refused},
	} {
		_, err := ts.s.Submit(ctx, api.JobSpec{Graph: c.path, Partitions: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("submit %s: %v, want an error naming it: %s", c.path, err, c.want)
		}
	}
	// A file inside, also through a path that needs cleaning, is accepted.
	for _, p := range []string{in, filepath.Join(data, "sub", "..", "g.txt.gz")} {
		if _, err := ts.s.Submit(ctx, api.JobSpec{Graph: p, Partitions: 1}); err != nil {
			t.Errorf("submit %s: %v", p, err)
		}
	}

	// Without data directories no graph file is read.
	ts2 := startServer(t, func(c *Config) { c.DataDirs = nil })
	if _, err := ts2.s.Submit(ctx, api.JobSpec{Graph: in, Partitions: 1}); err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("submit without data directories: %v", err)
	}
	// A data directory that does not exist is refused at start.
	cfg := DefaultConfig()
	cfg.DataDirs = []string{filepath.Join(data, "nope")}
	if _, err := NewServer(cfg); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing data directory: %v", err)
	}
}
