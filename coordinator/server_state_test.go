package coordinator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// logBuffer keeps a server's JSON log lines for a test to search, and
// passes them on to the test's log.
type logBuffer struct {
	t   testing.TB
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.t.Log(strings.TrimSpace(string(p)))
	return b.buf.Write(p)
}

// lines returns the log lines whose msg is msg.
func (b *logBuffer) lines(msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func withLog(b *logBuffer) func(*Config) {
	return func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
}

// flipStored flips mask in byte at of every copy of the stored settled
// entry of subtask idx (key and value, as bbolt lays them side by side)
// in the state file in dir (stale copies in free pages included), and
// returns the number of copies.
func flipStored(t *testing.T, dir string, id string, idx int, at int, mask byte) int {
	t.Helper()
	key := binary.BigEndian.AppendUint64(nil, uint64(idx))
	val := storedValue(t, dir, bucketJobs, []byte(id), bucketSettled, key)
	pat := append(key, val...)
	path := filepath.Join(dir, StateFile)
	b := mustRead(t, path)
	n := 0
	for off := 0; ; {
		i := bytes.Index(b[off:], pat)
		if i < 0 {
			break
		}
		b[off+i+at] ^= mask
		off += i + len(pat)
		n++
	}
	if n == 0 {
		t.Fatalf("subtask %d's settled entry is not in %s", idx, path)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return n
}

// A bit flipped in a settled subtask's stored count while the coordinator
// is stopped: the restarted coordinator says so at Warn, naming the job
// and the subtask, counts that subtask again (and no other settled one),
// reports it as recounted, and the total is exact. The damaged entry is
// replaced, so a further restart finds no damage.
func TestServerRecountsDamagedSettledCount(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ts := startServer(t, func(c *Config) { c.StateDir = dir })
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 3})
	startWorkers(t, ts.addr, &fakeWorker{id: "w1", stopAfter: 6})
	waitFor(t, 30*time.Second, "3 subtasks settled", func() bool {
		st, err := ts.s.Status(context.Background(), api.JobID(id))
		return err == nil && st.Done >= 3
	})
	ts.stop()

	db, err := OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := db.Jobs()
	db.Close()
	if err != nil || len(recs) != 1 || len(recs[0].Settled) < 3 {
		t.Fatalf("stored: %+v, %v", recs, err)
	}
	victim := len(recs[0].Subtasks)
	for idx := range recs[0].Settled {
		victim = min(victim, idx)
	}
	// The count's lowest bit: key (8 bytes), version (1), count (8).
	copies := flipStored(t, dir, id, victim, 8+1+7, 0x01)
	t.Logf("flipped the lowest bit of subtask %d's stored count (%d copies in the file)", victim, copies)

	logs := &logBuffer{t: t}
	ts2 := startServer(t, func(c *Config) { c.StateDir = dir }, withLog(logs))
	var restored, subtasks int
	if err := ts2.s.call(context.Background(), func() {
		js, _ := ts2.s.sched.Job(api.JobID(id))
		restored, subtasks = js.Restored, js.Subtasks
	}); err != nil {
		t.Fatal(err)
	}
	if restored != len(recs[0].Settled)-1 {
		t.Fatalf("restored %d settled subtasks, want %d (all but the damaged one)", restored, len(recs[0].Settled)-1)
	}
	warned := logs.lines("a settled subtask's stored count is damaged; it is counted again")
	if len(warned) != 1 || warned[0]["level"] != "WARN" || warned[0]["job"] != id || warned[0]["subtask"] != float64(victim) {
		t.Fatalf("warnings %v, want one at WARN naming job %s and subtask %d", warned, id, victim)
	}
	w2 := &fakeWorker{id: "w2"}
	startWorkers(t, ts2.addr, w2)
	st := waitJob(t, ts2.addr, id)
	if st.State != api.JobDone || st.Triangles != want {
		t.Fatalf("status %+v, want done with %d", st, want)
	}
	if st.Recounted != 1 {
		t.Fatalf("recounted %d, want 1", st.Recounted)
	}
	w2.mu.Lock()
	if w2.counted != subtasks-restored {
		t.Errorf("after the restart %d subtasks counted, want %d", w2.counted, subtasks-restored)
	}
	w2.mu.Unlock()
	ts2.stop()

	db, err = OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs, err = db.Jobs()
	db.Close()
	if err != nil || len(recs) != 1 || len(recs[0].Damaged) != 0 || recs[0].Recounted != 1 || recs[0].Total != want {
		t.Fatalf("stored after the job: %+v, %v", recs, err)
	}
}

// A job that failed because the state could not be written (a full disk)
// stays failed after a restart: its end is written once the disk has
// room, on a later tick or when the coordinator stops.
func TestServerFailedJobStaysFailed(t *testing.T) {
	for _, when := range []string{"running", "stopping"} {
		t.Run("room while "+when, func(t *testing.T) {
			dir := t.TempDir()
			ts := startServer(t, func(c *Config) { c.StateDir = dir })
			var mu sync.Mutex
			writes, full := 0, true
			fault := func() error {
				mu.Lock()
				defer mu.Unlock()
				writes++
				if writes > 1 && full { // the submission is written, nothing after it
					return fmt.Errorf("write: %w", syscall.ENOSPC)
				}
				return nil
			}
			ts.s.db.writeFault.Store(&fault)
			id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2})
			st := waitJob(t, ts.addr, id)
			if st.State != api.JobFailed || !strings.Contains(st.Err, "no space left on device") {
				t.Fatalf("status %+v, want failed for the full disk", st)
			}
			mu.Lock()
			full = false
			mu.Unlock()
			if when == "running" {
				waitFor(t, 10*time.Second, "the failure recorded", func() bool {
					recs, err := ts.s.db.Jobs()
					return err == nil && len(recs) == 1 && recs[0].State == api.JobFailed
				})
			}
			ts.stop()

			ts2 := startServer(t, func(c *Config) { c.StateDir = dir })
			st2, err := ts2.s.Status(context.Background(), api.JobID(id))
			if err != nil || st2.State != api.JobFailed || st2.Err != st.Err {
				t.Fatalf("after the restart: %+v, %v; want failed with %q", st2, err, st.Err)
			}
		})
	}
}

// waitFor polls cond every 10 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A done per-vertex job's counts file is served only while it matches the
// checksum recorded when it was written.
func TestServerRefusesDamagedCountsFile(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, func(c *Config) { c.StateDir = dir })
	const id = "20260101-000000-00000001"
	cdir, err := ts.s.countsDir(id)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cdir, verticesFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := hashCountsFiles(cdir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.s.call(context.Background(), func() {
		ts.s.jobs[id] = &jobInfo{rec: JobRecord{ID: id, PerVertex: true, State: api.JobDone, CountsFiles: sums}, state: api.JobDone}
	}); err != nil {
		t.Fatal(err)
	}
	fetchAll := func() ([]byte, error) {
		st, err := pb.NewJobsClient(dial(t, ts.addr)).FetchCounts(context.Background(), &pb.FetchCountsRequest{Job: id})
		if err != nil {
			return nil, err
		}
		var got []byte
		for {
			m, err := st.Recv()
			if err == io.EOF {
				return got, nil
			}
			if err != nil {
				return got, err
			}
			got = append(got, m.GetData()...)
		}
	}
	if got, err := fetchAll(); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("fetching the file as written: %d bytes, %v", len(got), err)
	}
	data[len(data)/2] ^= 0x08
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fetchAll(); status.Code(err) != codes.DataLoss || !strings.Contains(err.Error(), path) {
		t.Fatalf("fetching the damaged file: %v, want DataLoss naming %s", err, path)
	}
}
