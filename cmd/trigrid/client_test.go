package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/internal/cluster"
	"github.com/trigrid/trigrid/internal/testcerts"
)

// fakeJobs is a Jobs service that replays a script of statuses; it tests
// the client commands' plumbing (flags, token, decoding, printing, exit
// status), not counting, which the multi-process tests cover.
type fakeJobs struct {
	pb.UnimplementedJobsServer
	mu        sync.Mutex
	submitted []*pb.SubmitRequest
	cancelled []string
	script    []api.JobStatus // Watch sends these in order
}

func (f *fakeJobs) Submit(_ context.Context, r *pb.SubmitRequest) (*pb.SubmitResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submitted = append(f.submitted, r)
	return &pb.SubmitResponse{Job: "job-1"}, nil
}

func (f *fakeJobs) Watch(r *pb.WatchRequest, s grpc.ServerStreamingServer[pb.JobStatus]) error {
	if r.GetJob() != "job-1" {
		return status.Error(codes.NotFound, "no job "+r.GetJob())
	}
	for _, st := range f.script {
		if err := s.Send(pb.EncodeStatus(st)); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeJobs) Status(_ context.Context, r *pb.StatusRequest) (*pb.JobStatus, error) {
	if r.GetJob() != "job-1" {
		return nil, status.Error(codes.NotFound, "no job "+r.GetJob())
	}
	return pb.EncodeStatus(f.script[len(f.script)-1]), nil
}

func (f *fakeJobs) List(context.Context, *pb.ListRequest) (*pb.ListResponse, error) {
	return &pb.ListResponse{Jobs: []*pb.JobStatus{pb.EncodeStatus(f.script[len(f.script)-1])}}, nil
}

func (f *fakeJobs) Cancel(_ context.Context, r *pb.CancelRequest) (*pb.CancelResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, r.GetJob())
	return &pb.CancelResponse{}, nil
}

func serveFake(t *testing.T, f *fakeJobs, token string) string {
	t.Helper()
	opts, err := cluster.Security{Token: token}.ServerOptions()
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	pb.RegisterJobsServer(s, f)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

const bigCount = 1<<63 + 12345 // a count above 2^63 must survive as uint64

func doneScript() []api.JobStatus {
	return []api.JobStatus{
		{Job: "job-1", State: api.JobRunning, Subtasks: 64, Done: 10, Running: 4, Queued: 50, Partitions: 4, Scheme: "hash"},
		{Job: "job-1", State: api.JobDone, Subtasks: 64, Done: 64, Attempts: 66, Requeued: 2, Recounted: 1, Workers: 4, Triangles: bigCount, Partitions: 4, Scheme: "hash"},
	}
}

func TestSubmitWaitJSON(t *testing.T) {
	f := &fakeJobs{script: doneScript()}
	addr := serveFake(t, f, "tok")
	t.Setenv("TRIGRID_TOKEN", "tok")
	out, stderr, err := run(t, "submit", "--coordinator", addr, "--wait", "--json", "--partitions", "4", "--scheme", "range", "--kernel", "merge", "some/graph.txt")
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	var got struct {
		Triangles *uint64 `json:"triangles"`
		Subtasks  int64   `json:"subtasks"`
		Workers   int     `json:"workers"`
		Seconds   float64 `json:"seconds"`
		Attempts  int64   `json:"attempts"`
		Recounted int64   `json:"recounted"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if got.Triangles == nil || *got.Triangles != bigCount || got.Subtasks != 64 || got.Workers != 4 || got.Attempts != 66 || got.Recounted != 1 {
		t.Errorf("result %s", out)
	}
	if len(f.submitted) != 1 || f.submitted[0].GetGraph() != "some/graph.txt" || f.submitted[0].GetPartitions() != 4 || f.submitted[0].GetScheme() != "range" || f.submitted[0].GetKernel() != "merge" {
		t.Errorf("submitted %v", f.submitted)
	}
	if !strings.Contains(stderr, "10/64 subtasks done") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
}

func TestSubmitFailedPrintsNoTotal(t *testing.T) {
	f := &fakeJobs{script: []api.JobStatus{{Job: "job-1", State: api.JobFailed, Subtasks: 8, Done: 3, Triangles: 77, Err: "shard b0001_0002.shard: checksum mismatch"}}}
	addr := serveFake(t, f, "")
	for _, args := range [][]string{{"--json"}, {}} {
		out, _, err := run(t, append([]string{"submit", "--coordinator", addr, "--wait", "--shards", "mem://x"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "b0001_0002.shard") {
			t.Errorf("%v: error %v, want the shard named", args, err)
		}
		if strings.Contains(out, "77") || strings.Contains(out, "triangles") {
			t.Errorf("%v: a failed job printed a total: %q", args, out)
		}
	}
}

func TestClientRefusedWithoutToken(t *testing.T) {
	addr := serveFake(t, &fakeJobs{script: doneScript()}, "tok")
	_, _, err := run(t, "status", "--coordinator", addr)
	if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "join token") {
		t.Errorf("status without token: %v", err)
	}
}

func TestStatusAndCancel(t *testing.T) {
	f := &fakeJobs{script: doneScript()}
	addr := serveFake(t, f, "")
	out, _, err := run(t, "status", "--coordinator", addr)
	if err != nil || !strings.Contains(out, "job-1") || !strings.Contains(out, "64/64") {
		t.Errorf("status: %v\n%s", err, out)
	}
	out, _, err = run(t, "status", "--coordinator", addr, "--json", "job-1")
	if err != nil || !strings.Contains(out, `"triangles":9223372036854788153`) || !strings.Contains(out, `"recounted":1`) {
		t.Errorf("status --json: %v\n%s", err, out)
	}
	if _, _, err := run(t, "status", "--coordinator", addr, "nope"); err == nil || !strings.Contains(err.Error(), "no job nope") {
		t.Errorf("status of an unknown job: %v", err)
	}
	if _, _, err := run(t, "status", "--coordinator", addr, "../x"); err == nil {
		t.Error("status accepted a job id with a slash")
	}
	if _, _, err := run(t, "cancel", "--coordinator", addr, "job-1"); err != nil || len(f.cancelled) != 1 {
		t.Errorf("cancel: %v, %v", err, f.cancelled)
	}
	if _, _, err := run(t, "submit", "--coordinator", addr, "--scheme", "zigzag", "g.txt"); err == nil || !strings.Contains(err.Error(), "--scheme") {
		t.Errorf("bad scheme: %v", err)
	}
	if _, _, err := run(t, "submit", "--coordinator", addr); err == nil {
		t.Error("submit without a graph or store succeeded")
	}
	if _, _, err := run(t, "submit", "--coordinator", addr, "--kernel", "trix", "--top", "3", "g.txt"); err == nil || !strings.Contains(err.Error(), "GPU kernels with one: auto, polak, wetric") {
		t.Errorf("per-vertex counts with trix: %v", err)
	}
}

// The client settings come from a config file too, and a flag beats it.
func TestClientConfigFile(t *testing.T) {
	addr := serveFake(t, &fakeJobs{script: doneScript()}, "tok")
	cfg := write(t, "cluster.yaml", "coordinator: "+addr+"\ntoken: tok\n")
	if out, stderr, err := run(t, "status", "--config", cfg); err != nil || !strings.Contains(out, "job-1") {
		t.Errorf("status with a config file: %v\n%s%s", err, out, stderr)
	}
	if _, _, err := run(t, "status", "--config", cfg, "--token", "wrong"); err == nil || !strings.Contains(err.Error(), "join token") {
		t.Errorf("--token did not override the config file: %v", err)
	}
}

func TestCoordinatorRefusesUnsafeSettings(t *testing.T) {
	state := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "without TLS"},
		{[]string{"--listen", "127.0.0.1:0", "--gossip", "0.0.0.0:0"}, "--gossip-key"},
		{[]string{"--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0", "--gossip-key", "not base64"}, "--gossip-key"},
		{[]string{"--listen", "127.0.0.1:0", "--tls-cert", "c.pem"}, "--tls-key"},
		{[]string{"--listen", "127.0.0.1:0", "--log-format", "xml"}, "--log-format"},
		{[]string{"--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0", "--name", "../x"}, "--name"},
		{[]string{"--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0", "--metrics", "0.0.0.0:0"}, "--metrics 0.0.0.0:0"},
	} {
		_, _, err := run(t, append([]string{"coordinator", "--state", state}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("coordinator %v: %v, want an error about %s", c.args, err, c.want)
		}
	}
}

// TLS protects gRPC only: with it on, the plain-HTTP metrics and status
// page still stay on loopback unless --insecure. A coordinator that starts
// anyway is stopped after a few seconds, and the test fails.
func TestCoordinatorMetricsLoopbackWithTLS(t *testing.T) {
	certs, err := testcerts.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	root := newRootCommand()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs([]string{"coordinator", "--state", t.TempDir(), "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0",
		"--metrics", ":0", "--tls-cert", certs.ServerCert, "--tls-key", certs.ServerKey, "--tls-ca", certs.CA})
	err = root.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "--metrics :0") || !strings.Contains(err.Error(), "plain HTTP") {
		t.Fatalf("coordinator with TLS and --metrics :0: %v, want a refusal naming --metrics", err)
	}
}

// The coordinator's finer settings are flags (so config keys and
// TRIGRID_ variables too); values it cannot take are refused naming the
// flag.
func TestCoordinatorTuningFlags(t *testing.T) {
	base := []string{"coordinator", "--state", t.TempDir(), "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--speculate-after", "0"}, "--speculate-after 0: want"},
		{[]string{"--speculate-after", "1.5"}, "--speculate-after 1.5: want"},
		{[]string{"--speculate-factor", "0.5"}, "--speculate-factor 0.5: want"},
		{[]string{"--speculate-min-ticks", "0"}, "--speculate-min-ticks 0: want"},
		{[]string{"--recount-wait-ticks", "-1"}, "--recount-wait-ticks -1: want"},
		{[]string{"--fetch-concurrency", "0"}, "--fetch-concurrency 0: want"},
		{[]string{"--send-queue", "0"}, "--send-queue 0: want"},
		{[]string{"--keep-finished", "0"}, "--keep-finished 0: want"},
		{[]string{"--chunk-size", "8MiB"}, "--chunk-size 8MiB: want"},
		{[]string{"--chunk-size", "lots"}, "--chunk-size"},
	} {
		_, _, err := run(t, append(append([]string(nil), base...), c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("coordinator %v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	// Good values from flags and the environment start a coordinator,
	// stopped after a second.
	t.Setenv("TRIGRID_SPECULATE_FACTOR", "2")
	t.Setenv("TRIGRID_KEEP_FINISHED", "3")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	root := newRootCommand()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(append(base, "--speculate-after", "0.5", "--speculate-min-ticks", "5", "--recount-wait-ticks", "50",
		"--fetch-concurrency", "2", "--chunk-size", "64KiB", "--send-queue", "64"))
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("coordinator with good settings: %v\n%s", err, errb.String())
	}
}
