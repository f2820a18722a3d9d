package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each input of bench simulate that cannot be read is an error naming its
// flag and its file.
func TestBenchSimulateBadInputs(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	notJSON := filepath.Join(dir, "scale.csv")
	if err := os.WriteFile(notJSON, []byte("workers,runs\n1,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noStore := filepath.Join(dir, "no.shards")
	model := filepath.Join("..", "..", "bench", "simulate", "testdata", "scale-rmat20-p8.json")
	for _, tc := range []struct {
		args []string
		flag string
		file string
	}{
		{[]string{"--shards", noStore, "--cost-model", missing}, "--cost-model", missing},
		{[]string{"--shards", noStore, "--cost-model", notJSON}, "--cost-model", notJSON},
		{[]string{"--stats", missing, "--cost-model", "testdata/no-such-model.json"}, "--cost-model", "no-such-model.json"},
		{[]string{"--shards", noStore, "--cost-model", model, "--workers", "4"}, "--shards", noStore},
		{[]string{"--stats", missing, "--cost-model", model, "--workers", "4"}, "--stats", missing},
		{[]string{"--stats", notJSON, "--cost-model", model, "--workers", "4"}, "--stats", notJSON},
		{[]string{"--validate", missing}, "--validate", missing},
		{[]string{"--validate", notJSON}, "--validate", notJSON},
		{[]string{"--stats", missing, "--cost-model", model, "--speeds", "1,0,1"}, "--speeds", "1,0,1"},
		{[]string{"--stats", missing, "--cost-model", model, "--speeds", "fast"}, "--speeds", "fast"},
		{[]string{"--validate", model, "--speeds", "1,0.5"}, "--speeds", "--validate"},
	} {
		_, _, err := run(t, append([]string{"bench", "simulate", "--progress", "none"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.flag) || !strings.Contains(err.Error(), tc.file) {
			t.Errorf("bench simulate %v: %v, want an error naming %s and %s", tc.args, err, tc.flag, tc.file)
		}
	}
}
