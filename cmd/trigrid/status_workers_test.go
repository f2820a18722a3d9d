package main

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// workersJobs adds a ListWorkers answer to fakeJobs.
type workersJobs struct {
	*fakeJobs
	workers []api.WorkerInfo
}

func (f *workersJobs) ListWorkers(context.Context, *pb.ListWorkersRequest) (*pb.ListWorkersResponse, error) {
	return pb.EncodeWorkers(f.workers), nil
}

func serveWorkers(t *testing.T, ws []api.WorkerInfo) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterJobsServer(s, &workersJobs{fakeJobs: &fakeJobs{script: doneScript()}, workers: ws})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

func TestStatusShowsWorkers(t *testing.T) {
	ws := []api.WorkerInfo{
		{Worker: "gpu-1", Host: "10.0.0.7", State: api.WorkerBusy, Running: 2, Counted: 40, Slots: 2, Heard: 300 * time.Millisecond,
			Devices: []api.Device{{Kind: "gpu", Name: "NVIDIA H200", Memory: 140 << 30}, {Kind: "gpu", Name: "NVIDIA H200", Memory: 140 << 30}},
			Stats: api.WorkerStats{Worker: "gpu-1", Subtasks: 40, KernelTime: 3 * time.Second, Fetch: time.Second, Decode: 2 * time.Second,
				Busy: 8 * time.Second, Wall: 5 * time.Second, Edges: 2_000_000}},
		{Worker: "cpu-9", State: api.WorkerLost, Left: "membership: dead", Heard: time.Minute},
	}
	addr := serveWorkers(t, ws)
	out, stderr, err := run(t, "status", "--coordinator", addr)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, stderr)
	}
	for _, want := range []string{"job-1", "WORKER", "gpu-1", "10.0.0.7", "busy", "2 x gpu NVIDIA H200 (140.0 GiB)", "400.0K", "80%",
		"cpu-9", "lost", "cpu-9: membership: dead", "1m0s ago"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	// One job's status shows no workers.
	if out, _, err := run(t, "status", "--coordinator", addr, "job-1"); err != nil || strings.Contains(out, "gpu-1") {
		t.Errorf("status job-1: %v\n%s", err, out)
	}
	out, _, err = run(t, "status", "--coordinator", addr, "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("status --json: %d lines, want a job and two workers:\n%s", len(lines), out)
	}
	var w map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &w); err != nil {
		t.Fatal(err)
	}
	if w["worker"] != "gpu-1" || w["id"] != "gpu-1" || w["state"] != "busy" || w["edges_per_second"] != 400000.0 || w["busy_share"] != 0.8 {
		t.Errorf("worker JSON %v", w)
	}
}

// A coordinator that cannot list workers still shows its jobs.
func TestStatusOlderCoordinator(t *testing.T) {
	addr := serveFake(t, &fakeJobs{script: doneScript()}, "")
	out, stderr, err := run(t, "status", "--coordinator", addr)
	if err != nil || !strings.Contains(out, "job-1") || !strings.Contains(stderr, "does not list its workers") {
		t.Fatalf("status: %v\n%s\n%s", err, out, stderr)
	}
}

// A CPU, named "cpu", is said once; GPUs by kind and name, alike ones
// counted once.
func TestStatusDevicesText(t *testing.T) {
	for _, tc := range []struct {
		ds   []api.Device
		want string
	}{
		{nil, "-"},
		{[]api.Device{{Kind: "cpu", Name: "cpu", Memory: 47 << 29}}, "cpu (23.5 GiB)"},
		{[]api.Device{{Kind: "cpu"}}, "cpu"},
		{[]api.Device{{Kind: "gpu", Name: "NVIDIA H200", Memory: 140 << 30}, {Kind: "gpu", Name: "NVIDIA H200", Memory: 140 << 30}, {Kind: "cpu", Name: "cpu"}},
			"2 x gpu NVIDIA H200 (140.0 GiB), cpu"},
	} {
		if got := devices(tc.ds); got != tc.want {
			t.Errorf("devices(%+v) = %q, want %q", tc.ds, got, tc.want)
		}
	}
}
