package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPartitionOutputRefusals: an unsupported or in-memory store URL is an
// error before anything is written, and a directory holding a
// partitioning is replaced only with --force.
func TestPartitionOutputRefusals(t *testing.T) {
	g := write(t, "k5.txt", "0 1\n0 2\n0 3\n0 4\n1 2\n1 3\n1 4\n2 3\n2 4\n3 4\n")
	t.Chdir(t.TempDir())
	for _, out := range []string{"mem://x", "s3://b/x", "gs://b/x"} {
		_, _, err := run(t, "partition", "--progress", "none", "-P", "2", "-o", out, g)
		if err == nil || !strings.Contains(err.Error(), "-o "+out) {
			t.Errorf("-o %s: error %v, want one naming the flag", out, err)
		}
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Fatalf("refused outputs created %v", ents)
	}

	dir := filepath.Join(t.TempDir(), "new", "shards")
	if _, stderr, err := run(t, "partition", "--progress", "none", "-P", "4", "-o", dir, g); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	_, _, err := run(t, "partition", "--progress", "none", "-P", "2", "-o", dir, g)
	if err == nil || !strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second partition into %s: error %v, want a refusal naming --force", dir, err)
	}
	if _, stderr, err := run(t, "partition", "--progress", "none", "-P", "2", "--scheme", "range", "--force", "-o", dir, g); err != nil {
		t.Fatalf("--force: %v\n%s", err, stderr)
	}
	if old, _ := filepath.Glob(filepath.Join(dir, "shard-0003-*")); len(old) != 0 {
		t.Fatalf("--force left shards of the old partitioning: %v", old)
	}
	if rep := countJSON(t, "--shards", dir); rep.Triangles != 10 || rep.Partition == nil || rep.Partition.P != 2 {
		t.Fatalf("after --force: %d triangles (want 10 for K5), partition %+v", rep.Triangles, rep.Partition)
	}
	// --force never deletes files a partitioning does not write.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "partition", "--progress", "none", "-P", "2", "--force", "-o", dir, g); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("--force over a foreign file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
}
