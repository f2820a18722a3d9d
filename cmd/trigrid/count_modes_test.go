package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountRefusesFlagsOfOtherModes: a flag that does not apply to the
// count asked for is an error naming it, never silently ignored.
func TestCountRefusesFlagsOfOtherModes(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "s")
	if _, stderr, err := run(t, "partition", "--progress", "none", "../../testdata/ca-GrQc.txt.gz", "-o", shards, "-P", "2"); err != nil {
		t.Fatalf("partition: %v\n%s", err, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shards", shards, "--format", "edgelist"}, "--format"},
		{[]string{"--shards", shards, "--skip-bad-lines"}, "--skip-bad-lines"},
		{[]string{"--shards", shards, "--scheme", "range"}, "--scheme"},
		{[]string{"--shards", shards, "--partitions", "3"}, "--partitions"},
		{[]string{"--scheme", "range", "../../testdata/ca-GrQc.txt.gz"}, "--scheme"},
		{[]string{"--device", "cpu", "--devices", "0", "../../testdata/ca-GrQc.txt.gz"}, "--devices"},
	} {
		_, _, err := run(t, append([]string{"count", "--progress", "none"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("count %v: %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
	rep := countJSON(t, "--shards", shards, "--verify")
	if rep.Triangles != 48260 || !rep.Verified {
		t.Fatalf("count --shards --verify: %d triangles, verified %v", rep.Triangles, rep.Verified)
	}
}

// TestPartitionStdin partitions standard input, in memory and with the
// external partitioner, and counts the shards exactly.
func TestPartitionStdin(t *testing.T) {
	data, err := os.ReadFile("../../testdata/ca-GrQc.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	for _, mem := range []string{"0", "4GiB"} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			w.Write(data)
			w.Close()
		}()
		old := os.Stdin
		os.Stdin = r
		shards := filepath.Join(t.TempDir(), "s")
		_, stderr, err := run(t, "partition", "--progress", "none", "--mem-limit", mem, "-", "-o", shards, "-P", "3")
		os.Stdin = old
		r.Close()
		if err != nil {
			t.Fatalf("partition - --mem-limit %s: %v\n%s", mem, err, stderr)
		}
		if rep := countJSON(t, "--shards", shards); rep.Triangles != 48260 {
			t.Fatalf("--mem-limit %s: shards of standard input count %d, want 48260", mem, rep.Triangles)
		}
	}
}
