package clustertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A shard corrupted on the serving side (the coordinator's store, which
// the workers read through FetchShard) fails the job with the shard
// named, and no total is printed.
func TestCorruptShard(t *testing.T) {
	t.Parallel()
	dir := partitionShards(t, grqc(t), 4, "hash")
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Shards []struct {
			File  string `json:"file"`
			Bytes int64  `json:"bytes"`
		} `json:"shards"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || len(m.Shards) == 0 {
		t.Fatalf("manifest: %v, %d shards", err, len(m.Shards))
	}
	victim := m.Shards[len(m.Shards)/2]
	path := filepath.Join(dir, victim.File)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := startCluster(t, 2, []string{"--max-attempts", "2"}, "--fetch-shards")
	out, stderr, err := cli(t, 2*time.Minute, "submit", "--coordinator", c.grpc, "--wait", "--json", "--shards", dir)
	if err == nil {
		t.Fatalf("a job over a corrupted shard succeeded: %s", out)
	}
	t.Logf("submit: %v\n%s", err, stderr)
	if !strings.Contains(err.Error()+stderr+out, victim.File) {
		t.Errorf("the error does not name %s:\n%s\n%s", victim.File, stderr, out)
	}
	if strings.Contains(out, `"triangles"`) {
		t.Errorf("a failed job printed a total: %s", out)
	}
}
