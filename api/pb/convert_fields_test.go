package pb

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"google.golang.org/protobuf/proto"
)

// A hello's instance and a job's reading options survive the wire, and
// what they may not be is refused.
func TestInstanceAndReadingOptions(t *testing.T) {
	h := api.Hello{Worker: "w", Version: "v", Cores: 1, Slots: 1, Instance: "0123abcd"}
	got, err := DecodeHello(EncodeHello(h))
	if err != nil || got.Instance != h.Instance {
		t.Fatalf("hello round trip: %+v, %v", got, err)
	}
	bad := EncodeHello(h)
	bad.Instance = "../x"
	if _, err := DecodeHello(bad); err == nil || !strings.Contains(err.Error(), "instance") {
		t.Errorf("instance ../x: %v", err)
	}
	spec := api.JobSpec{Graph: "g.mtx", Format: "mtx", SkipBadLines: true}
	if got, err := DecodeSubmit(EncodeSubmit(spec)); err != nil || got.Format != "mtx" || !got.SkipBadLines {
		t.Errorf("submit round trip: %+v, %v", got, err)
	}
	for _, m := range []*SubmitRequest{
		{Graph: "g", Format: "nosuch"},
		{Shards: "s", Format: "mtx"},
		{Shards: "s", SkipBadLines: true},
	} {
		if _, err := DecodeSubmit(m); err == nil || !strings.Contains(err.Error(), "format") {
			t.Errorf("DecodeSubmit(%v): %v, want a refusal naming the format field", m, err)
		}
	}
}

func sampleStatus() api.JobStatus {
	return api.JobStatus{
		Job: "job-2", State: api.JobRunning, Source: "file:///s", Partitions: 8, Scheme: "hash",
		Subtasks: 512, Done: 3, Created: time.UnixMilli(1700000000000), Elapsed: time.Second,
		CoordinatorCPU: 12 * time.Millisecond,
		PerWorker: []api.WorkerStats{
			{Worker: "w-1", Subtasks: 2, Fetch: 1, Decode: 2, Upload: 3, KernelTime: 4, Busy: 7,
				FirstStart: time.UnixMilli(1700000000100), LastEnd: time.UnixMilli(1700000000900), Wall: 800 * time.Millisecond,
				Edges: 12345, Devices: []api.DeviceStats{{Device: 0, Subtasks: 1, Busy: 3, KernelTime: 2, Upload: 1}, {Device: 3, Subtasks: 1, Busy: 4, KernelTime: 2, Upload: 2}}},
			{Worker: "w-2", Subtasks: 1, KernelTime: 9, Busy: 9, Edges: 7},
		},
	}
}

// The timing fields of a result, a batch of results with its pull, and a
// status's per-worker sums survive the wire; out-of-range values are
// refused naming their field.
func TestStatsFields(t *testing.T) {
	r := api.Result{Ref: api.SubtaskRef{Job: "j", Index: 4}, Attempt: 2, Worker: "w-1", Triangles: 99, Kernel: "merge",
		Fetch: 1, Decode: 2, KernelTime: 3, Upload: 4, Busy: 7, Device: 5}
	b, err := proto.Marshal(EncodeResults([]api.Result{r, r}, 16))
	if err != nil {
		t.Fatal(err)
	}
	var m Results
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	rs, pull, err := DecodeResults(&m)
	if err != nil || pull != 16 || len(rs) != 2 || !reflect.DeepEqual(rs[1], r) {
		t.Fatalf("results round trip: %+v, pull %d, %v; want 2 of %+v, pull 16", rs, pull, err, r)
	}
	st := sampleStatus()
	var sm JobStatus
	if b, err = proto.Marshal(EncodeStatus(st)); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, &sm); err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeStatus(&sm); err != nil || !reflect.DeepEqual(got, st) {
		t.Errorf("status round trip:\n got %+v, %v\nwant %+v", got, err, st)
	}
	refuse := []struct {
		field string
		err   func() error
	}{
		{"upload_ns", func() error { m := EncodeResult(r); m.UploadNs = -1; _, err := DecodeResult(m); return err }},
		{"busy_ns", func() error {
			m := EncodeResult(r)
			m.BusyNs = api.MaxDuration + 1
			_, err := DecodeResult(m)
			return err
		}},
		{"device", func() error { m := EncodeResult(r); m.Device = api.MaxDevices; _, err := DecodeResult(m); return err }},
		{"device", func() error { m := EncodeResult(r); m.Device = -1; _, err := DecodeResult(m); return err }},
		{"Results.items", func() error { _, _, err := DecodeResults(&Results{}); return err }},
		{"Results.pull", func() error {
			_, _, err := DecodeResults(&Results{Items: []*Result{EncodeResult(r)}, Pull: api.MaxBatch + 1})
			return err
		}},
		{"Results.items[1]", func() error {
			_, _, err := DecodeResults(&Results{Items: []*Result{EncodeResult(r), {}}})
			return err
		}},
		{"Results", func() error { _, _, err := DecodeResults(nil); return err }},
		{"coordinator_cpu_ns", func() error { m := EncodeStatus(st); m.CoordinatorCpuNs = -5; _, err := DecodeStatus(m); return err }},
		{"per_worker[1].worker", func() error {
			m := EncodeStatus(st)
			m.PerWorker[1].Worker = "../x"
			_, err := DecodeStatus(m)
			return err
		}},
		{"per_worker[0].busy_ns", func() error { m := EncodeStatus(st); m.PerWorker[0].BusyNs = -1; _, err := DecodeStatus(m); return err }},
		{"per_worker[0].edges", func() error { m := EncodeStatus(st); m.PerWorker[0].Edges = -1; _, err := DecodeStatus(m); return err }},
		{"per_worker[1]", func() error { m := EncodeStatus(st); m.PerWorker[1] = nil; _, err := DecodeStatus(m); return err }},
		{"per_worker[0].devices[1].device", func() error {
			m := EncodeStatus(st)
			m.PerWorker[0].Devices[1].Device = api.MaxDevices
			_, err := DecodeStatus(m)
			return err
		}},
		{"per_worker[0].devices[0].kernel_ns", func() error {
			m := EncodeStatus(st)
			m.PerWorker[0].Devices[0].KernelNs = -1
			_, err := DecodeStatus(m)
			return err
		}},
	}
	for _, c := range refuse {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: got %v, want a refusal naming it", c.field, err)
		}
	}
}
