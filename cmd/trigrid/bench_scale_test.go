package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An --out directory that cannot be made fails bench scale before it
// reads the graph or starts a cluster, not after every run.
func TestBenchScaleOutCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(file, "out")
	_, _, err := run(t, "bench", "scale", "--progress", "none", "--graph", filepath.Join(dir, "missing.bin"), "--workers", "1", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "--out") || !strings.Contains(err.Error(), out) {
		t.Fatalf("bench scale --out %s: %v, want an error naming --out and the directory", out, err)
	}
	ok := filepath.Join(dir, "results")
	if err := checkOutDir(ok); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(ok); err != nil || len(entries) != 0 {
		t.Errorf("checkOutDir left %v in %s (%v)", entries, ok, err)
	}
}

// GPUs named with --devices that the CUDA library cannot show fail bench
// scale before it reads the graph or starts a cluster.
func TestBenchScaleDevicesChecked(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libtrigrid_cuda.so")
	_, _, err := run(t, "bench", "scale", "--progress", "none", "--graph", filepath.Join(dir, "missing.bin"),
		"--workers", "1", "--devices", "0", "--cuda-lib", lib)
	if err == nil || !strings.Contains(err.Error(), "--devices 0") {
		t.Fatalf("bench scale --devices 0 without a CUDA library: %v, want an error naming --devices", err)
	}
}
