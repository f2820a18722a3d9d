package coordinator

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// storedValue returns a copy of the value stored under the bucket path
// (bucket names, then the key) of the state in dir.
func storedValue(t *testing.T, dir string, path ...[]byte) []byte {
	t.Helper()
	db, err := OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []byte
	db.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(path[0])
		for _, name := range path[1 : len(path)-1] {
			if b == nil {
				break
			}
			b = b.Bucket(name)
		}
		if b != nil {
			out = bytes.Clone(b.Get(path[len(path)-1]))
		}
		return nil
	})
	if out == nil {
		t.Fatalf("nothing stored at %q", path)
	}
	return out
}

// onlyOffset returns the offset of the one occurrence of pat in b.
func onlyOffset(t *testing.T, b, pat []byte) int {
	t.Helper()
	off := bytes.Index(b, pat)
	if off < 0 || bytes.Contains(b[off+1:], pat) {
		t.Fatalf("%x: want exactly one occurrence in the state file", pat)
	}
	return off
}

// flipEach writes the state file with each bit of b[off:off+n] flipped in
// turn and calls check with the bit's index.
func flipEach(t *testing.T, dir string, pristine []byte, off, n int, check func(bit int)) {
	t.Helper()
	path := filepath.Join(dir, StateFile)
	for bit := range n * 8 {
		b := bytes.Clone(pristine)
		b[off+bit/8] ^= 1 << (bit % 8)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		check(bit)
	}
}

// resumeTotal resumes a job with the settled counts in the scheduler,
// counts the rest with their true counts and returns the job's total.
func resumeTotal(t *testing.T, id api.JobID, r JobRecord) uint64 {
	t.Helper()
	h := newHarness(t)
	h.add(scheduler.JobSpec{ID: id, Subtasks: r.Subtasks, Settled: r.Settled})
	h.join("w")
	if len(r.Settled) == len(r.Subtasks) {
		t.Fatalf("every subtask resumed as settled")
	}
	var total uint64
	for _, a := range assigned(h.pull("w", len(r.Subtasks)), "w") {
		if d, ok := find(h.ok(a, "w", truth(a.Ref.Index)), scheduler.DecideJobDone); ok {
			total = d.Total
		}
	}
	return total
}

// One bit flipped anywhere in a stored settled count record (its key, or
// its value: the count, and whatever else the record carries) never puts
// a wrong count into the total: the subtask is counted again.
func TestStateDamagedSettledCountNeverSummed(t *testing.T) {
	dir := t.TempDir()
	tasks := testTasks(2)
	db, err := OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutJob(JobRecord{ID: "j", Spec: api.JobSpec{Shards: "file:///x"}, Store: "file:///x", P: 2,
		Created: time.Unix(100, 0).UTC(), State: api.JobRunning, Subtasks: tasks}); err != nil {
		t.Fatal(err)
	}
	// Every subtask but the last is settled, in one transaction (so the
	// file holds one copy of each record).
	var changes []SettledChange
	for i := range len(tasks) - 1 {
		changes = append(changes, SettledChange{Ref: api.SubtaskRef{Job: "j", Index: i}, Triangles: truth(i)})
	}
	if err := db.RecordSettled(changes); err != nil {
		t.Fatal(err)
	}
	db.Close()
	const victim = 5
	key := binary.BigEndian.AppendUint64(nil, victim)
	val := storedValue(t, dir, bucketJobs, []byte("j"), bucketSettled, key)
	pristine := mustRead(t, filepath.Join(dir, StateFile))
	off := onlyOffset(t, pristine, append(bytes.Clone(key), val...))
	class := func(bit int) string {
		switch at := bit / 8; {
		case at < len(key):
			return "key"
		case len(val) == 8:
			return "count"
		case at-len(key) == 0:
			return "version"
		case at-len(key) < 9:
			return "count"
		}
		return "checksum"
	}
	flipEach(t, dir, pristine, off, len(key)+len(val), func(bit int) {
		db, err := OpenState(dir)
		if err != nil {
			t.Errorf("%s bit %d: %v", class(bit), bit, err)
			return
		}
		recs, err := db.Jobs()
		db.Close()
		if err != nil || len(recs) != 1 {
			t.Errorf("%s bit %d: %d records, %v", class(bit), bit, len(recs), err)
			return
		}
		for idx, v := range recs[0].Settled {
			if v != truth(idx) {
				t.Errorf("%s bit %d: subtask %d resumed as settled with %d, counted %d", class(bit), bit, idx, v, truth(idx))
			}
		}
		if _, ok := recs[0].Settled[victim]; ok && class(bit) != "key" {
			t.Errorf("%s bit %d: the damaged subtask %d resumed as settled", class(bit), bit, victim)
		}
		if d := recs[0].Damaged; len(d) != 1 || class(bit) != "key" && d[0].Index != victim {
			t.Errorf("%s bit %d: damaged entries %+v, want subtask %d's", class(bit), bit, d, victim)
		}
		if got := resumeTotal(t, "j", recs[0]); got != truthSum(len(tasks)) {
			t.Errorf("%s bit %d: total %d, want %d", class(bit), bit, got, truthSum(len(tasks)))
		}
	})
}

// One bit flipped in a finished job's stored result, or in a job's stored
// subtask list, is refused with an error naming the job, the bucket and
// the key: neither can be counted again from the state alone.
func TestStateDamagedRecordRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	const total = 1234567890123
	done := JobRecord{ID: "done-1", Spec: api.JobSpec{Shards: "file:///x"}, Store: "file:///x", P: 2,
		Created: time.Unix(100, 0).UTC(), State: api.JobDone, Total: total}
	if err := db.PutJob(done); err != nil {
		t.Fatal(err)
	}
	tasks := testTasks(2)
	tasks[3].Clip, tasks[3].TailOffset = true, 1<<20
	if err := db.PutJob(JobRecord{ID: "run-1", Store: "file:///y", P: 2, Created: time.Unix(200, 0).UTC(),
		State: api.JobRunning, Subtasks: tasks}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	pristine := mustRead(t, filepath.Join(dir, StateFile))
	check := func(what, job, key string, want func(JobRecord) bool) func(bit int) {
		return func(bit int) {
			db, err := OpenState(dir)
			if err == nil {
				var recs []JobRecord
				recs, err = db.Jobs()
				db.Close()
				for _, r := range recs {
					if string(r.ID) == job && !want(r) {
						t.Errorf("%s bit %d: accepted %+v", what, bit, r)
					}
				}
			}
			if err == nil {
				return // the flipped bit changed nothing that is read
			}
			for _, s := range []string{StateFile, job, "jobs/" + job, key} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s bit %d: error %q does not name %q", what, bit, err, s)
				}
			}
		}
	}
	// The total's digits, in whatever encoding the record has.
	digits := []byte(`"Total":1234567890123`)
	off := onlyOffset(t, pristine, digits)
	flipEach(t, dir, pristine, off+len(`"Total":`), len(digits)-len(`"Total":`), check("total", "done-1", "record",
		func(r JobRecord) bool { return r.Total == total && r.State == api.JobDone }))

	raw := storedValue(t, dir, bucketJobs, []byte("run-1"), keySubtasks)
	off = onlyOffset(t, pristine, raw)
	flipEach(t, dir, pristine, off, len(raw), check("subtasks", "run-1", "subtasks",
		func(r JobRecord) bool { return reflect.DeepEqual(r.Subtasks, tasks) }))

	// A coordinator does not start on such a file.
	b := bytes.Clone(pristine)
	b[off+len(raw)/2] ^= 0x04
	if err := os.WriteFile(filepath.Join(dir, StateFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.StateDir = dir
	if s, err := NewServer(cfg); err == nil {
		s.Close()
		t.Fatal("a coordinator started on a damaged subtask list")
	} else if !strings.Contains(err.Error(), "jobs/run-1, key subtasks: damaged") {
		t.Fatalf("NewServer: %v", err)
	}
}

// An empty state file (a disk that filled as it was created, say) is
// refused with its path; bbolt would otherwise make it a new, empty
// database and every job in it would be forgotten. A missing file is a
// new database.
func TestStateRefusesEmptyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, StateFile)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := OpenState(dir)
	if err == nil {
		db.Close()
		t.Fatal("an empty state file was opened")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("err = %v, want one naming %s and saying it is empty", err, path)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty file was changed: %v, %v", fi, err)
	}
	os.Remove(path)
	db, err = OpenState(dir)
	if err != nil {
		t.Fatalf("a missing state file: %v", err)
	}
	db.Close()
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
