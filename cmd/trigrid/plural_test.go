package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestNouns(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{{0, "0 isolated ids"}, {1, "1 isolated id"}, {2, "2 isolated ids"}, {12345, "12,345 isolated ids"}} {
		if got := nouns(c.n, "isolated id"); got != c.want {
			t.Errorf("nouns(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := nouns(1, "vertex", "vertices"); got != "1 vertex" {
		t.Errorf("got %q", got)
	}
	if got := nouns(3, "vertex", "vertices"); got != "3 vertices" {
		t.Errorf("got %q", got)
	}
	if got := removedText(1, 0, 1, 1); got != "1 self-loop, 0 duplicates, 1 isolated id, 1 bad line" {
		t.Errorf("removedText = %q", got)
	}
	if got := removedText(2, 1, 0, -1); got != "2 self-loops, 1 duplicate, 0 isolated ids" {
		t.Errorf("removedText without lines = %q", got)
	}
}

// A plain count on a machine without CUDA logs nothing at the default
// level: the report's fallback row already says where it counted.
func TestPlainCPUCountLogsNothing(t *testing.T) {
	t.Setenv("TRIGRID_CUDA_LIB", "")
	graph := filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz")
	out, stderr, err := run(t, "count", "--progress", "none", graph)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "no CUDA library found") {
		t.Skip("a CUDA library was found on this machine")
	}
	if strings.Contains(stderr, "level=INFO") || strings.Contains(stderr, "level=WARN") {
		t.Errorf("a plain CPU count logs:\n%s", stderr)
	}
	if !strings.Contains(out, "1 isolated id,") {
		t.Errorf("report does not say \"1 isolated id\":\n%s", out)
	}
}
