package coordinator

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
	"github.com/trigrid/trigrid/partition"
)

func TestStateWriteReopenResume(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	tasks := testTasks(3)
	tasks[4].Clip, tasks[4].TailOffset = true, -1<<33
	rec := JobRecord{ID: "j1", Spec: api.JobSpec{Shards: "file:///x"}, Store: "file:///x", P: 3, Scheme: "hash",
		Created: time.Unix(100, 0).UTC(), State: api.JobRunning, Subtasks: tasks}
	if err := db.PutJob(rec); err != nil {
		t.Fatal(err)
	}
	if err := db.PutJob(JobRecord{ID: "j0", Created: time.Unix(50, 0).UTC(), State: api.JobPreparing}); err != nil {
		t.Fatal(err)
	}
	// A first coordinator settles half the subtasks, and one is reopened.
	s := newHarness(t)
	s.add(scheduler.JobSpec{ID: "j1", Subtasks: tasks})
	s.join("a")
	as := assigned(s.pull("a", len(tasks)/2), "a")
	var changes []SettledChange
	for _, a := range as {
		for _, d := range s.ok(a, "a", truth(a.Ref.Index)) {
			if d.Kind == scheduler.DecideSubtaskDone {
				changes = append(changes, SettledChange{Ref: d.Ref, Triangles: d.Triangles})
			}
		}
	}
	changes = append(changes, SettledChange{Ref: as[0].Ref, Forget: true})
	if err := db.RecordSettled(changes); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].ID != "j0" || recs[1].ID != "j1" {
		t.Fatalf("records %+v", recs)
	}
	got := recs[1]
	if !reflect.DeepEqual(got.Subtasks, tasks) || got.Store != rec.Store || got.P != 3 || !got.Created.Equal(rec.Created) {
		t.Fatalf("record %+v", got)
	}
	if len(got.Settled) != len(as)-1 || got.Settled[as[1].Ref.Index] != truth(as[1].Ref.Index) {
		t.Fatalf("settled %v", got.Settled)
	}
	if _, ok := got.Settled[as[0].Ref.Index]; ok {
		t.Fatal("forgotten subtask still settled")
	}
	if recs[0].Subtasks != nil {
		t.Fatalf("unprepared job has subtasks %v", recs[0].Subtasks)
	}
	// A restarted coordinator counts only the rest and gets the exact total.
	h := newHarness(t)
	h.add(scheduler.JobSpec{ID: got.ID, Subtasks: got.Subtasks, Settled: got.Settled})
	h.join("b")
	rest := assigned(h.pull("b", len(tasks)), "b")
	if len(rest) != len(tasks)-len(got.Settled) {
		t.Fatalf("recounting %d, want %d", len(rest), len(tasks)-len(got.Settled))
	}
	var total uint64
	for _, a := range rest {
		if _, ok := got.Settled[a.Ref.Index]; ok {
			t.Fatalf("settled subtask %d counted again", a.Ref.Index)
		}
		if d, ok := find(h.ok(a, "b", truth(a.Ref.Index)), scheduler.DecideJobDone); ok {
			total = d.Total
		}
	}
	if total != truthSum(len(tasks)) {
		t.Fatalf("total %d, want %d", total, truthSum(len(tasks)))
	}
	if err := db.DeleteJob("j0"); err != nil {
		t.Fatal(err)
	}
	if recs, _ := db.Jobs(); len(recs) != 1 {
		t.Fatalf("after delete: %+v", recs)
	}
	if err := db.RecordSettled([]SettledChange{{Ref: api.SubtaskRef{Job: "nope"}}}); err == nil || !strings.Contains(err.Error(), "unknown job nope") {
		t.Fatalf("unknown job: %v", err)
	}
}

func TestStateRefusesBadFiles(t *testing.T) {
	write := func(t *testing.T, data []byte) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, StateFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	foreign := func(t *testing.T) string {
		dir := t.TempDir()
		db, err := bolt.Open(filepath.Join(dir, StateFile), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
		db.Close()
		return dir
	}
	format := func(f string) func(t *testing.T) string {
		return func(t *testing.T) string {
			dir := t.TempDir()
			db, _ := OpenState(dir)
			db.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketMeta).Put(keyFormat, []byte(f))
			})
			db.Close()
			return dir
		}
	}
	extra := func(t *testing.T) string {
		dir := t.TempDir()
		db, _ := OpenState(dir)
		db.db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("jobz")); return err })
		db.Close()
		return dir
	}
	damaged := func(t *testing.T) string {
		dir := t.TempDir()
		db, _ := OpenState(dir)
		db.PutJob(JobRecord{ID: "j", Subtasks: testTasks(2)})
		db.Close()
		p := filepath.Join(dir, StateFile)
		b, _ := os.ReadFile(p)
		for i := 0; i < 8192 && i < len(b); i++ {
			b[i] ^= 0x5a
		}
		os.WriteFile(p, b, 0o600)
		return dir
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		want string
	}{
		{"text file", func(t *testing.T) string { return write(t, []byte(strings.Repeat("u v\n", 3000))) }, "state file"},
		{"foreign bbolt database", foreign, "not a trigrid coordinator state file"},
		{"newer format", format("trigrid-coordinator-state/9"), `"trigrid-coordinator-state/9"`},
		{"older format", format("trigrid-coordinator-state/1"), `"trigrid-coordinator-state/1" is from an older trigrid`},
		{"unknown bucket", extra, "unexpected bucket jobz"},
		{"damaged", damaged, "state file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			db, err := OpenState(dir)
			if err == nil {
				_, err = db.Jobs()
				db.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), StateFile) {
				t.Fatalf("err = %v, want one naming %s and saying %q", err, StateFile, tc.want)
			}
		})
	}
}

func TestStateInUse(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := OpenState(dir); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("second open: %v", err)
	}
}

func TestSubtaskEncodingRejectsGarbage(t *testing.T) {
	b := encodeSubtasks([]partition.Subtask{{I: 1, J: 2, K: 3, Work: 5}})
	for n := range len(b) {
		if _, err := decodeSubtasks(b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes accepted", n)
		}
	}
	if _, err := decodeSubtasks(append(b, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}
