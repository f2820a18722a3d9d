package coordinator

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/trigrid/trigrid/api"
)

// A settled entry keeps its accepted attempt (worker, times, arrival), an
// entry without one keeps only its count, and a damaged attempt fails the
// entry's checks, never its count alone.
func TestStateSettledAttempts(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutJob(JobRecord{ID: "j", Created: time.Unix(100, 0).UTC(), State: api.JobRunning, Subtasks: testTasks(2)}); err != nil {
		t.Fatal(err)
	}
	by := SettledBy{Worker: "gpu-node-7", End: time.Unix(1700000000, 123456789),
		Times: api.AttemptTimes{Fetch: 1, Decode: 2, Upload: 3, KernelTime: 4 * time.Second, Busy: 5, Device: 7}}
	changes := []SettledChange{{Ref: api.SubtaskRef{Job: "j", Index: 1}, Triangles: truth(1), By: &by},
		{Ref: api.SubtaskRef{Job: "j", Index: 2}, Triangles: truth(2)}}
	if err := db.RecordSettled(changes); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Jobs()
	db.Close()
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for idx, want := range map[int][]byte{
		1: sealAs(settledVersion, encodeSettled(truth(1), by), bucketJobs, []byte("j"), bucketSettled, binary.BigEndian.AppendUint64(nil, 1)),
		2: seal(binary.BigEndian.AppendUint64(nil, truth(2)), bucketJobs, []byte("j"), bucketSettled, binary.BigEndian.AppendUint64(nil, 2)),
	} {
		if got := storedValue(t, dir, bucketJobs, []byte("j"), bucketSettled, binary.BigEndian.AppendUint64(nil, uint64(idx))); !bytes.Equal(got, want) {
			t.Errorf("subtask %d stored as %x, want %x", idx, got, want)
		}
	}
	r := recs[0]
	if r.Settled[1] != truth(1) || r.Settled[2] != truth(2) || len(r.Damaged) != 0 {
		t.Fatalf("settled %v, damaged %v", r.Settled, r.Damaged)
	}
	got, ok := r.SettledBy[1]
	if !ok || got.Worker != by.Worker || got.Times != by.Times || !got.End.Equal(by.End) {
		t.Errorf("subtask 1 settled by %+v, want %+v", got, by)
	}
	if _, ok := r.SettledBy[2]; ok {
		t.Errorf("subtask 2 has an attempt: %+v", r.SettledBy[2])
	}
	for _, bad := range [][]byte{
		nil,
		binary.BigEndian.AppendUint64(nil, 5), // no worker, no times
		append(binary.BigEndian.AppendUint64(nil, 5), 9), // a name longer than the rest
		append(encodeSettled(5, by), 0),                  // a byte too many
		encodeSettled(5, SettledBy{Worker: "w", Times: api.AttemptTimes{Device: api.MaxDevices}}),
		encodeSettled(5, SettledBy{Worker: "w", Times: api.AttemptTimes{Busy: -1}}),
	} {
		if _, _, err := decodeSettled(settledVersion, bad); err == nil {
			t.Errorf("settled entry %x accepted", bad)
		}
	}
	if _, _, err := decodeSettled(9, encodeSettled(5, by)); err == nil {
		t.Error("record version 9 accepted")
	}
}

// A database of layout 2 (settled counts alone) opens as layout 3: its
// entries read as before, it is marked layout 3, and new entries carry
// their attempts.
func TestStateUpgradesLayout2(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := JobRecord{ID: "j", Created: time.Unix(100, 0).UTC(), State: api.JobRunning, Subtasks: testTasks(2)}
	if err := db.PutJob(rec); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordSettled([]SettledChange{{Ref: api.SubtaskRef{Job: "j", Index: 3}, Triangles: truth(3)}}); err != nil {
		t.Fatal(err)
	}
	// Made layout 2: the format key says so, and the entry is a count.
	if err := db.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyFormat, []byte(stateFormatV2)) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if v := storedValue(t, dir, bucketJobs, []byte("j"), bucketSettled, binary.BigEndian.AppendUint64(nil, 3)); v[0] != recordVersion || len(v) != 1+8+8 {
		t.Fatalf("layout 2 entry %x", v)
	}
	db, err = OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	by := SettledBy{Worker: "w", Times: api.AttemptTimes{KernelTime: time.Second}}
	if err := db.RecordSettled([]SettledChange{{Ref: api.SubtaskRef{Job: "j", Index: 4}, Triangles: truth(4), By: &by}}); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Jobs()
	db.Close()
	if err != nil || len(recs) != 1 {
		t.Fatal(err)
	}
	if want := map[int]uint64{3: truth(3), 4: truth(4)}; !reflect.DeepEqual(recs[0].Settled, want) {
		t.Errorf("settled %v, want %v", recs[0].Settled, want)
	}
	if got := recs[0].SettledBy[4]; got.Worker != "w" || got.Times.KernelTime != time.Second {
		t.Errorf("subtask 4 settled by %+v", got)
	}
	if f := storedValue(t, dir, bucketMeta, keyFormat); string(f) != stateFormat {
		t.Errorf("format %q after opening, want %q", f, stateFormat)
	}
}

// BenchmarkRecordSettled writes a job's settled subtasks, with their
// accepted attempts, 64 to a transaction, as the settle queue does under
// load; ns/subtask is the wall time of one subtask's share, the sync
// included.
func BenchmarkRecordSettled(b *testing.B) {
	db, err := OpenState(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tasks := testTasks(32)
	if err := db.PutJob(JobRecord{ID: "j", Created: time.Unix(100, 0).UTC(), State: api.JobRunning, Subtasks: tasks}); err != nil {
		b.Fatal(err)
	}
	by := SettledBy{Worker: "host-pid4242", End: time.Unix(1700000000, 0),
		Times: api.AttemptTimes{Fetch: 1000, Decode: 20000, KernelTime: 30000, Busy: 30000}}
	batch := make([]SettledChange, 64)
	idx := 0
	b.ReportAllocs()
	for b.Loop() {
		for i := range batch {
			batch[i] = SettledChange{Ref: api.SubtaskRef{Job: "j", Index: idx % len(tasks)}, Triangles: truth(idx), By: &by}
			idx++
		}
		if err := db.RecordSettled(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(idx), "ns/subtask")
}
