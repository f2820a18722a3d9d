package clustertest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// settledEntry reads, from the state file of a stopped coordinator, the
// first settled entry of its one job: the job id, and the entry's key and
// value as stored.
func settledEntry(t *testing.T, path string) (job string, key, val []byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		jobs := tx.Bucket([]byte("jobs"))
		if jobs == nil {
			return nil
		}
		return jobs.ForEachBucket(func(name []byte) error {
			if sb := jobs.Bucket(name).Bucket([]byte("settled")); sb != nil && job == "" {
				if k, v := sb.Cursor().First(); k != nil {
					job, key, val = string(name), bytes.Clone(k), bytes.Clone(v)
				}
			}
			return nil
		})
	})
	if job == "" {
		t.Fatalf("%s: no settled subtask stored", path)
	}
	return job, key, val
}

// A bit of a settled subtask's count flipped in the state file of a
// SIGKILLed coordinator: the restarted coordinator logs the damage at
// Warn, naming the job and the subtask, counts that subtask again, and the
// total that `submit --wait --json` prints (it reconnects across the
// restart) is exact and reports the subtask as recounted, as does
// `status`.
func TestCoordinatorRestartDamagedState(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	c, _ := startCluster(t, 3, nil, slowWorker...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "submit", "--coordinator", c.grpc, "--wait", "--json",
		"--partitions", "4", "--scheme", "hash", file)
	cmd.Env = env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "a quarter of the subtasks settled", func() bool {
		sums, _ := metrics(t, c)
		return sums["trigrid_coordinator_subtasks_done_total"] >= 16
	})
	c.kill()

	var state string
	for i, a := range c.args {
		if a == "--state" {
			state = c.args[i+1]
		}
	}
	path := filepath.Join(state, "coordinator.db")
	job, key, val := settledEntry(t, path)
	idx := binary.BigEndian.Uint64(key)
	// The count's lowest bit: the value is version (1 byte), count (8
	// bytes), checksum; a value of 8 bytes is a bare count. bbolt keeps a
	// key and its value side by side; every copy of the pair (stale ones
	// in free pages too) is flipped.
	at := len(key) + 8
	if len(val) != 8 {
		at++
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pat := append(bytes.Clone(key), val...)
	copies := 0
	for off := 0; ; copies++ {
		i := bytes.Index(b[off:], pat)
		if i < 0 {
			break
		}
		b[off+i+at-1] ^= 0x01
		off += i + len(pat)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, now := settledEntry(t, path); bytes.Equal(now, val) {
		t.Fatalf("flipping %d copies left subtask %d's stored value as it was", copies, idx)
	}
	t.Logf("flipped the lowest bit of the stored count of job %s subtask %d (%d copies)", job, idx, copies)

	args := append([]string(nil), c.args...)
	for i := range args {
		switch args[i] {
		case "--listen":
			args[i+1] = c.grpc
		case "--gossip":
			args[i+1] = c.gossip
		case "--metrics":
			args[i+1] = c.metrics
		}
	}
	c2 := launchCoordinator(t, args)
	werr := cmd.Wait()
	var r struct {
		result
		Recounted int64 `json:"recounted"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil && werr == nil {
		t.Fatalf("submit output %q: %v", out.String(), err)
	}
	checkDone(t, r.result, werr, errb.String(), grqcTriangles)
	if r.Recounted != 1 {
		t.Errorf("submit --wait --json: recounted %d, want 1: %s", r.Recounted, out.String())
	}
	warn := c2.logLine("a settled subtask's stored count is damaged; it is counted again", 10*time.Second)
	if warn["level"] != "WARN" || warn["job"] != job || warn["subtask"] != float64(idx) {
		t.Errorf("the damage is logged as %v, want at WARN naming job %s and subtask %d", warn, job, idx)
	}
	st, _, err := cli(t, 30*time.Second, "status", "--coordinator", c2.grpc, "--json", job)
	if err != nil || !strings.Contains(st, `"recounted":1,`) {
		t.Errorf("status: %v\n%s", err, st)
	}
}
