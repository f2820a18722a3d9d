package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator/scheduler"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

const testGraph = "../testdata/ca-GrQc.txt.gz"

// wholeTriangles counts a graph file's triangles with the merge kernel on
// the whole graph, without partitioning: the independent count the tests
// compare with (the fake workers count blocks with the reference kernel).
var wholeTriangles = sync.OnceValues(func() (uint64, error) {
	fwd, _, _, _, err := partition.LoadGraph(context.Background(), testGraph, edgeio.ReadOptions{}, 1)
	if err != nil {
		return 0, err
	}
	c, err := kernels.NewCPU("merge", kernels.CPUOptions{})
	if err != nil {
		return 0, err
	}
	r, err := c.Count(context.Background(), kernels.Whole(fwd))
	return r.Triangles, err
})

// testServer is a Server on a loopback listener.
type testServer struct {
	s      *Server
	addr   string
	cancel context.CancelFunc
	done   chan struct{}
	gs     *grpc.Server
}

func startServer(t testing.TB, opts ...func(*Config)) *testServer {
	t.Helper()
	cfg := DefaultConfig()
	cfg.TickInterval = 20 * time.Millisecond
	cfg.HeartbeatInterval = 100 * time.Millisecond
	// The fake workers send no heartbeats: leases long enough for a loaded
	// test machine (20 s).
	cfg.Scheduler.LeaseTicks = 1000
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg.DataDirs = []string{filepath.Dir(testGraph)}
	cfg.Partitioner, cfg.CountsReader, cfg.Kernels = testPartitioner{}, testCounts{}, testKernels()
	for _, o := range opts {
		o(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	s.Register(gs)
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{s: s, addr: lis.Addr().String(), cancel: cancel, done: make(chan struct{}), gs: gs}
	go gs.Serve(lis)
	go func() { s.Run(ctx); close(ts.done) }()
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) stop() {
	ts.cancel()
	<-ts.done
	ts.gs.Stop()
	ts.s.Close()
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fakeWorker speaks the Work protocol and counts subtasks with the
// reference kernel on blocks fetched from the coordinator.
type fakeWorker struct {
	id string
	// instance is the worker process's Hello.Instance.
	instance string
	// answer may change a count (a faulty worker) or return an error.
	answer func(a api.Assignment, n uint64) (uint64, string)
	// stopAfter ends the stream after this many assignments received
	// without answering the last (a killed worker); 0 never.
	stopAfter int
	// stall keeps the stream open but never answers (a stopped process).
	stall     bool
	memory    int64
	counted   int
	mu        sync.Mutex
	manifests map[api.JobID]*storage.Manifest
	blocks    map[string]*graph.CSR
}

func (w *fakeWorker) run(ctx context.Context, conn *grpc.ClientConn) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cl := pb.NewClusterClient(conn)
	stream, err := cl.Work(ctx)
	if err != nil {
		return err
	}
	h := api.Hello{Worker: api.WorkerID(w.id), Version: "test", Slots: 1, Cores: 1, Instance: w.instance}
	if w.memory > 0 {
		h.Devices = []api.Device{{Kind: "gpu", Name: "test", Memory: w.memory}}
	}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: pb.EncodeHello(h)}}); err != nil {
		return err
	}
	m, err := stream.Recv()
	if err != nil {
		return err
	}
	if _, err := pb.DecodeWelcome(m.GetWelcome()); err != nil {
		return err
	}
	pull := func(n int) error {
		return stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Pull{Pull: &pb.Pull{Max: int32(n)}}})
	}
	if err := pull(2); err != nil {
		return err
	}
	received := 0
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		batch := m.GetAssignments()
		if batch == nil {
			continue // a cancel: our answers are quick, nothing to stop
		}
		as, err := pb.DecodeAssignments(batch)
		if err != nil {
			return err
		}
		for _, a := range as {
			received++
			if w.stopAfter > 0 && received >= w.stopAfter {
				return errors.New("killed")
			}
			if w.stall {
				continue
			}
			n, err := w.count(ctx, cl, a)
			r := api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: api.WorkerID(w.id), Kernel: "reference", Triangles: n}
			if err != nil {
				r.Triangles, r.Err = 0, err.Error()
			} else if w.answer != nil {
				if r.Triangles, r.Err = w.answer(a, n); r.Err != "" {
					r.Triangles = 0
				}
			}
			w.mu.Lock()
			w.counted++
			w.mu.Unlock()
			if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Result{Result: pb.EncodeResult(r)}}); err != nil {
				return err
			}
			if err := pull(1); err != nil {
				return err
			}
		}
	}
}

func fetch(ctx context.Context, cl pb.ClusterClient, job api.JobID, name string) ([]byte, error) {
	st, err := cl.FetchShard(ctx, &pb.FetchShardRequest{Job: string(job), Name: name})
	if err != nil {
		return nil, err
	}
	var data []byte
	var size int64
	var sum uint64
	for first := true; ; first = false {
		c, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := pb.CheckChunk(c, first, int64(len(data)), size); err != nil {
			return nil, err
		}
		if first {
			size, sum = c.GetSize(), c.GetXxhash64()
		}
		data = append(data, c.GetData()...)
	}
	if int64(len(data)) != size || xxhash.Sum64(data) != sum {
		return nil, fmt.Errorf("fetched %s: %d bytes, want %d, or checksum mismatch", name, len(data), size)
	}
	return data, nil
}

func (w *fakeWorker) count(ctx context.Context, cl pb.ClusterClient, a api.Assignment) (uint64, error) {
	w.mu.Lock()
	if w.manifests == nil {
		w.manifests = map[api.JobID]*storage.Manifest{}
	}
	m := w.manifests[a.Ref.Job]
	w.mu.Unlock()
	if m == nil {
		data, err := fetch(ctx, cl, a.Ref.Job, storage.ManifestName)
		if err != nil {
			return 0, err
		}
		if m, err = storage.DecodeManifest("coordinator", data); err != nil {
			return 0, err
		}
		w.mu.Lock()
		w.manifests[a.Ref.Job] = m
		w.mu.Unlock()
	}
	block := func(i, j int) (*graph.CSR, error) {
		key := fmt.Sprintf("%s/%d/%d", a.Ref.Job, i, j)
		w.mu.Lock()
		b := w.blocks[key]
		w.mu.Unlock()
		if b != nil {
			return b, nil
		}
		var data []byte
		if info, ok := m.Shard(i, j); ok {
			var err error
			if data, err = fetch(ctx, cl, a.Ref.Job, info.File); err != nil {
				return nil, err
			}
		}
		b, err := storage.DecodeBlock(m, i, j, data)
		if err == nil {
			w.mu.Lock()
			if w.blocks == nil {
				w.blocks = map[string]*graph.CSR{}
			}
			w.blocks[key] = b
			w.mu.Unlock()
		}
		return b, err
	}
	ij, err := block(a.I, a.J)
	if err != nil {
		return 0, err
	}
	ik, err := block(a.I, a.K)
	if err != nil {
		return 0, err
	}
	jk, err := block(a.J, a.K)
	if err != nil {
		return 0, err
	}
	return kernels.Reference(kernels.Subtask{IJ: ij, IK: ik, JK: jk, Clip: a.Clip, TailOffset: a.TailOffset})
}

// startWorkers runs fake workers until the test ends.
func startWorkers(t *testing.T, addr string, ws ...*fakeWorker) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, w := range ws {
		conn := dial(t, addr)
		wg.Go(func() { w.run(ctx, conn) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// waitJob waits for a job's final status through the Watch stream.
func waitJob(t *testing.T, addr string, id string) api.JobStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := pb.NewJobsClient(dial(t, addr)).Watch(ctx, &pb.WatchRequest{Job: id})
	if err != nil {
		t.Fatal(err)
	}
	var last api.JobStatus
	for {
		m, err := st.Recv()
		if err == io.EOF {
			return last
		}
		if err != nil {
			t.Fatalf("watching %s: %v (last %+v)", id, err, last)
		}
		if last, err = pb.DecodeStatus(m); err != nil {
			t.Fatal(err)
		}
	}
}

func submit(t *testing.T, addr string, req *pb.SubmitRequest) string {
	t.Helper()
	r, err := pb.NewJobsClient(dial(t, addr)).Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return r.GetJob()
}

func TestServerCountsGraphExactly(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	// Range partitioning at P = 3 takes seconds under the race detector;
	// P = 2 covers its clip offsets as well.
	for _, tc := range []struct {
		scheme string
		p      int32
	}{{"hash", 3}, {"range", 2}} {
		scheme := tc.scheme
		t.Run(scheme, func(t *testing.T) {
			ts := startServer(t)
			ws := []*fakeWorker{{id: "w1"}, {id: "w2"}, {id: "w3"}}
			startWorkers(t, ts.addr, ws...)
			id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: tc.p, Scheme: scheme})
			st := waitJob(t, ts.addr, id)
			if st.State != api.JobDone || st.Triangles != want {
				t.Fatalf("status %+v, want done with %d", st, want)
			}
			if st.Done != st.Subtasks || st.Subtasks == 0 || st.Partitions != int(tc.p) || st.Scheme != scheme {
				t.Fatalf("status %+v", st)
			}
			if got := counterValue(ts.s.met.settled); int64(got) != st.Subtasks {
				t.Fatalf("metric subtasks_done_total %v, want %d", got, st.Subtasks)
			}
		})
	}
}

func TestServerKilledWorkerRequeued(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t)
	// The doomed worker is alone until it has died holding an attempt (its
	// third of the job's eight subtasks); the other joins only then, so it
	// cannot take the subtasks first, and finishes.
	startWorkers(t, ts.addr, &fakeWorker{id: "dies", stopAfter: 3})
	waitSessions(t, ts, 1)
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2})
	waitSessions(t, ts, 0)
	startWorkers(t, ts.addr, &fakeWorker{id: "lives"})
	st := waitJob(t, ts.addr, id)
	if st.State != api.JobDone || st.Triangles != want {
		t.Fatalf("status %+v, want done with %d", st, want)
	}
	if st.Requeued == 0 {
		t.Fatalf("nothing requeued after a worker died: %+v", st)
	}
}

func TestServerStalledWorkerLeaseExpires(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) { c.Scheduler.LeaseTicks = 10; c.HeartbeatInterval = 50 * time.Millisecond })
	startWorkers(t, ts.addr, &fakeWorker{id: "stalled", stall: true})
	waitSessions(t, ts, 1)
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2})
	startWorkers(t, ts.addr, &fakeWorker{id: "late"}) // joins mid-job
	st := waitJob(t, ts.addr, id)
	if st.State != api.JobDone || st.Triangles != want || st.Requeued == 0 {
		t.Fatalf("status %+v, want done with %d after requeues", st, want)
	}
}

func TestServerWorkerGoneRequeues(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	// Leases (200 s) outlast waitJob's bound: only WorkerGone can requeue
	// the stalled worker's attempts in time.
	ts := startServer(t, func(c *Config) { c.Scheduler.LeaseTicks = 10000 })
	stalled := &fakeWorker{id: "stalled", stall: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stalledErr := make(chan error, 1)
	conn := dial(t, ts.addr)
	go func() { stalledErr <- stalled.run(ctx, conn) }()
	waitSessions(t, ts, 1)
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2})
	for i := 0; ; i++ { // the stalled worker holds two attempts
		st, _ := ts.s.Status(ctx, api.JobID(id))
		if st.Running == 2 {
			break
		}
		if i > 3000 {
			t.Fatalf("stalled worker got no work: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.s.WorkerGone("stalled", "membership: dead")
	if err := <-stalledErr; status.Code(err) != codes.Aborted {
		t.Fatalf("the gone worker's stream ended with %v, want Aborted", err)
	}
	startWorkers(t, ts.addr, &fakeWorker{id: "w1"})
	st := waitJob(t, ts.addr, id)
	if st.State != api.JobDone || st.Triangles != want || st.Requeued < 2 {
		t.Fatalf("status %+v, want done with %d after 2 requeues", st, want)
	}
}

func TestServerReconnectReplacesSession(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan error, 1)
	conn := dial(t, ts.addr)
	go func() { first <- (&fakeWorker{id: "w1", instance: "p1", stall: true}).run(ctx, conn) }()
	waitSessions(t, ts, 1)
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2})
	for i := 0; ; i++ {
		st, _ := ts.s.Status(ctx, api.JobID(id))
		if st.Running == 2 {
			break
		}
		if i > 3000 {
			t.Fatalf("no work handed out: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The same worker process comes back on a new stream (the old one is
	// half-dead): the old session ends and its attempts are requeued at
	// once.
	startWorkers(t, ts.addr, &fakeWorker{id: "w1", instance: "p1"})
	if err := <-first; status.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("old stream ended with %v", err)
	}
	st := waitJob(t, ts.addr, id)
	if st.State != api.JobDone || st.Triangles != want || st.Requeued < 2 {
		t.Fatalf("status %+v, want done with %d after 2 requeues", st, want)
	}
}

func TestServerForgetsOldFinishedJobs(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.KeepFinished = 1; c.Logger = nil })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	conn := dial(t, ts.addr)
	wg.Go(func() { instantWorker(ctx, conn, "w1") })
	t.Cleanup(func() { cancel(); wg.Wait() })
	waitSessions(t, ts, 1)
	tasks := testTasks(2)
	n := uint64(len(tasks))
	for _, id := range []api.JobID{"first", "second"} {
		ts.s.call(ctx, func() {
			j := &jobInfo{rec: JobRecord{ID: id, Subtasks: tasks, Created: time.Now()}, state: api.JobQueued, workers: map[api.WorkerID]bool{}}
			ts.s.jobs[id] = j
			ts.s.order = append(ts.s.order, id)
			ts.s.addToScheduler(j, nil)
		})
		if st := waitJob(t, ts.addr, string(id)); st.State != api.JobDone || st.Triangles != n*(n+1)/2 {
			t.Fatalf("job %s: %+v", id, st)
		}
	}
	var kept []scheduler.JobStatus
	ts.s.call(ctx, func() { kept = ts.s.sched.Jobs() })
	if len(kept) != 1 || kept[0].ID != "second" {
		t.Fatalf("scheduler keeps %+v, want only the second job", kept)
	}
	st, err := ts.s.Status(ctx, "first")
	if err != nil || st.State != api.JobDone || st.Triangles != n*(n+1)/2 || st.Done != int64(n) || st.Attempts != int64(n) {
		t.Fatalf("forgotten job's status %+v, %v", st, err)
	}
}

func TestServerManyWorkers(t *testing.T) {
	// 64 workers on the real gRPC path, 512 subtasks answered at once:
	// every subtask's count is its index + 1, so the total is exact only
	// if each entered once.
	ts := startServer(t, func(c *Config) { c.Logger = nil })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 64 {
		conn := dial(t, ts.addr)
		wg.Go(func() { instantWorker(ctx, conn, fmt.Sprintf("w%d", w)) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	waitSessions(t, ts, 64)
	tasks := testTasks(8)
	done := make(chan struct{}, 1)
	ts.s.call(ctx, func() {
		j := &jobInfo{rec: JobRecord{ID: "many", Subtasks: tasks, Created: time.Now()}, state: api.JobQueued,
			workers: map[api.WorkerID]bool{}, watchers: map[chan struct{}]struct{}{done: {}}}
		ts.s.jobs["many"] = j
		ts.s.order = append(ts.s.order, "many")
		ts.s.addToScheduler(j, nil)
	})
	st := waitJob(t, ts.addr, "many")
	n := uint64(len(tasks))
	if st.State != api.JobDone || st.Triangles != n*(n+1)/2 || st.Workers < 2 {
		t.Fatalf("status %+v, want done with %d", st, n*(n+1)/2)
	}
}

func TestServerCatchesFaultyWorker(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) { c.Scheduler.Verify = true })
	liar := &fakeWorker{id: "liar", answer: func(a api.Assignment, n uint64) (uint64, string) { return n + 1, "" }}
	startWorkers(t, ts.addr, liar, &fakeWorker{id: "w1"}, &fakeWorker{id: "w2"})
	waitSessions(t, ts, 3)
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Scheme: "range"})
	st := waitJob(t, ts.addr, id)
	if st.State != api.JobDone || st.Triangles != want {
		t.Fatalf("status %+v, want done with %d", st, want)
	}
	if len(st.Faulty) != 1 || st.Faulty[0].Worker != "liar" || !strings.Contains(st.Faulty[0].Reason, "outvoted") {
		t.Fatalf("faulty %+v", st.Faulty)
	}
	if n := counterValue(ts.s.met.faulty); n != 1 {
		t.Fatalf("workers_faulty_total %v", n)
	}
	// The liar is refused when it comes back.
	err = (&fakeWorker{id: "liar"}).run(context.Background(), dial(t, ts.addr))
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "faulty") {
		t.Fatalf("faulty worker reconnecting: %v", err)
	}
}

// waitSessions waits until n workers are connected.
func waitSessions(t testing.TB, ts *testServer, n int) {
	t.Helper()
	for i := 0; ; i++ {
		var got int
		ts.s.call(context.Background(), func() { got = len(ts.s.sessions) })
		if got == n {
			return
		}
		if i > 3000 {
			t.Fatalf("%d workers connected, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServerResumesAfterRestart(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ts := startServer(t, func(c *Config) { c.StateDir = dir })
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 3})
	// One worker counts a few subtasks, then the coordinator stops.
	w := &fakeWorker{id: "w1", stopAfter: 6}
	startWorkers(t, ts.addr, w)
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := ts.s.Status(context.Background(), api.JobID(id))
		if err != nil {
			t.Fatal(err)
		}
		if st.Done >= 3 { // of the 5 it answers, the last may be lost with its stream
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.stop()

	ts2 := startServer(t, func(c *Config) { c.StateDir = dir })
	var restored, subtasks int
	if err := ts2.s.call(context.Background(), func() {
		js, _ := ts2.s.sched.Job(api.JobID(id))
		restored, subtasks = js.Restored, js.Subtasks
	}); err != nil {
		t.Fatal(err)
	}
	if restored < 3 {
		t.Fatalf("restored %d settled subtasks, want at least 3", restored)
	}
	w2 := &fakeWorker{id: "w2"}
	startWorkers(t, ts2.addr, w2)
	st := waitJob(t, ts2.addr, id)
	if st.State != api.JobDone || st.Triangles != want {
		t.Fatalf("status %+v, want done with %d", st, want)
	}
	w2.mu.Lock()
	defer w2.mu.Unlock()
	if w2.counted != subtasks-restored {
		t.Fatalf("after the restart %d subtasks counted, want %d (%d restored)", w2.counted, subtasks-restored, restored)
	}
	// A third start reports the finished job without counting anything.
	ts2.stop()
	ts3 := startServer(t, func(c *Config) { c.StateDir = dir })
	st3, err := ts3.s.Status(context.Background(), api.JobID(id))
	if err != nil || st3.State != api.JobDone || st3.Triangles != want {
		t.Fatalf("after a second restart: %+v, %v", st3, err)
	}
}

func TestServerDamagedShardFailsJob(t *testing.T) {
	dir := t.TempDir()
	// Partition first, then damage one shard, then submit the store.
	store, err := storage.Open(filepath.Join(dir, "shards"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := testPartitioner{}.Partition(context.Background(), PartitionRequest{Graph: testGraph, Scheme: storage.SchemeHash, P: 2, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	victim := m.Shards[0].File
	p := filepath.Join(dir, "shards", victim)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) { c.DataDirs = []string{dir} })
	startWorkers(t, ts.addr, &fakeWorker{id: "w1"}, &fakeWorker{id: "w2"})
	id := submit(t, ts.addr, &pb.SubmitRequest{Shards: store.URL()})
	st := waitJob(t, ts.addr, id)
	if st.State != api.JobFailed || st.Triangles != 0 || !strings.Contains(st.Err, victim) || !strings.Contains(st.Err, "damaged") {
		t.Fatalf("status %+v, want failed naming %s", st, victim)
	}
}

func TestServerFetchShardRefuses(t *testing.T) {
	ts := startServer(t)
	cl := pb.NewClusterClient(dial(t, ts.addr))
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2})
	// Wait until prepared (the job is queued with no workers).
	for i := 0; ; i++ {
		st, _ := ts.s.Status(context.Background(), api.JobID(id))
		if st.Subtasks > 0 {
			break
		}
		if i > 3000 {
			t.Fatal("job not prepared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		job, name string
		code      codes.Code
	}{
		{id, "../../etc/passwd", codes.InvalidArgument},
		{id, "other.bin", codes.NotFound},
		{"nojob", storage.ManifestName, codes.NotFound},
		{"../x", storage.ManifestName, codes.InvalidArgument},
	} {
		_, err := fetch(ctx, cl, api.JobID(tc.job), tc.name)
		if status.Code(err) != tc.code {
			t.Errorf("fetch %s/%s: %v, want %v", tc.job, tc.name, err, tc.code)
		}
	}
	if _, err := fetch(ctx, cl, api.JobID(id), storage.ManifestName); err != nil {
		t.Fatal(err)
	}
	if counterValue(ts.s.met.bytesServed) == 0 {
		t.Fatal("bytes served not counted")
	}
}

func TestServerJobsService(t *testing.T) {
	ts := startServer(t)
	jc := pb.NewJobsClient(dial(t, ts.addr))
	ctx := context.Background()
	for _, req := range []*pb.SubmitRequest{
		{},
		{Graph: testGraph, Shards: "file:///x"},
		{Graph: "/does/not/exist"},
		{Graph: testGraph, Scheme: "diagonal"},
	} {
		if _, err := jc.Submit(ctx, req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("submit %+v: %v", req, err)
		}
	}
	if _, err := jc.Status(ctx, &pb.StatusRequest{Job: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("status of unknown job: %v", err)
	}
	// A job can be cancelled while it prepares; List shows it.
	id2 := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2})
	if _, err := jc.Cancel(ctx, &pb.CancelRequest{Job: id2}); err != nil {
		t.Fatal(err)
	}
	if st := waitJob(t, ts.addr, id2); st.State != api.JobCancelled {
		t.Fatalf("cancelled job: %+v", st)
	}
	l, err := jc.List(ctx, &pb.ListRequest{})
	if err != nil || len(l.GetJobs()) != 1 || l.GetJobs()[0].GetJob() != id2 {
		t.Fatalf("list: %v %v", l, err)
	}
	// P 0 waits for a worker; with workers that report no memory it fails
	// saying why.
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph})
	time.Sleep(100 * time.Millisecond)
	if st, err := ts.s.Status(ctx, api.JobID(id)); err != nil || st.State != api.JobPreparing {
		t.Fatalf("P 0 before any worker: %+v %v", st, err)
	}
	startWorkers(t, ts.addr, &fakeWorker{id: "cpu-only"})
	if st := waitJob(t, ts.addr, id); st.State != api.JobFailed || !strings.Contains(st.Err, "device memory") {
		t.Fatalf("P 0 with a worker reporting no memory: %+v", st)
	}
}

func TestServerChoosesPFromWorkerMemory(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	// The smallest worker's memory is just below what P = 1 needs under
	// partition's model, found by bisection.
	fwd, _, _, _, err := partition.LoadGraph(context.Background(), testGraph, edgeio.ReadOptions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := int64(1), int64(1)<<40
	for lo < hi {
		mid := lo + (hi-lo)/2
		if p, err := partition.ChoosePForGraph(fwd, storage.SchemeHash, mid, partition.MemModel{}, 1); err == nil && p == 1 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	small := lo - 1
	if p, err := partition.ChoosePForGraph(fwd, storage.SchemeHash, small, partition.MemModel{}, 1); err != nil || p < 2 {
		t.Fatalf("%d bytes: P %d, %v", small, p, err)
	}
	ts := startServer(t)
	startWorkers(t, ts.addr, &fakeWorker{id: "small", memory: small}, &fakeWorker{id: "big", memory: 1 << 40})
	waitSessions(t, ts, 2)
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph})
	st := waitJob(t, ts.addr, id)
	if st.State != api.JobDone || st.Triangles != want || st.Partitions < 2 {
		t.Fatalf("status %+v, want done with %d at P > 1 for %d bytes", st, want, small)
	}
}

func TestServerRefusesBadHello(t *testing.T) {
	ts := startServer(t)
	cl := pb.NewClusterClient(dial(t, ts.addr))
	for _, h := range []*pb.Hello{
		{Protocol: api.Protocol + 1, Worker: "w"},
		{Protocol: api.Protocol, Worker: "../w"},
	} {
		stream, err := cl.Work(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: h}})
		if _, err := stream.Recv(); status.Code(err) != codes.InvalidArgument {
			t.Errorf("hello %+v: %v", h, err)
		}
	}
	// a message before the hello
	stream, _ := cl.Work(context.Background())
	stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Pull{Pull: &pb.Pull{Max: 1}}})
	if _, err := stream.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("pull first: %v", err)
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// A worker found faulty stays refused by a coordinator restarted on the
// same state.
func TestServerRefusesFaultyAfterRestart(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ts := startServer(t, func(c *Config) { c.StateDir = dir; c.Scheduler.Verify = true })
	liar := &fakeWorker{id: "liar", answer: func(a api.Assignment, n uint64) (uint64, string) { return n + 1, "" }}
	startWorkers(t, ts.addr, liar, &fakeWorker{id: "w1"}, &fakeWorker{id: "w2"})
	waitSessions(t, ts, 3)
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Scheme: "range"})
	st := waitJob(t, ts.addr, id)
	if st.State != api.JobDone || st.Triangles != want || len(st.Faulty) != 1 || st.Faulty[0].Worker != "liar" {
		t.Fatalf("status %+v, want done with %d and the liar faulty", st, want)
	}
	ts.stop()

	ts2 := startServer(t, func(c *Config) { c.StateDir = dir })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = (&fakeWorker{id: "liar"}).run(ctx, dial(t, ts2.addr))
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "faulty") || !strings.Contains(err.Error(), id) {
		t.Fatalf("faulty worker connecting after a restart: %v", err)
	}
	// An honest worker still counts a new job.
	startWorkers(t, ts2.addr, &fakeWorker{id: "w3"})
	id2 := submit(t, ts2.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Scheme: "hash"})
	if st := waitJob(t, ts2.addr, id2); st.State != api.JobDone || st.Triangles != want {
		t.Fatalf("new job after the restart: %+v, want done with %d", st, want)
	}
}

// The shards cut from a submitted graph are deleted when the job ends (its
// status stays), unless KeepShards.
func TestServerDeletesEndedJobShards(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		dir := t.TempDir()
		ts := startServer(t, func(c *Config) { c.StateDir = dir; c.KeepShards = keep })
		startWorkers(t, ts.addr, &fakeWorker{id: "w1"})
		id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Scheme: "hash"})
		st := waitJob(t, ts.addr, id)
		if st.State != api.JobDone || st.Triangles != want {
			t.Fatalf("keep %v: status %+v, want done with %d", keep, st, want)
		}
		shards := filepath.Join(dir, "jobs", id)
		_, err := os.Stat(filepath.Join(shards, storage.ManifestName))
		if keep && err != nil {
			t.Errorf("KeepShards: the job's shards are gone: %v", err)
		}
		if !keep && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the ended job's shards are still in %s (%v)", shards, err)
		}
		ts.stop()
		// The final status survives a restart.
		ts2 := startServer(t, func(c *Config) { c.StateDir = dir; c.KeepShards = keep })
		if st, err := ts2.s.Status(context.Background(), api.JobID(id)); err != nil || st.State != api.JobDone || st.Triangles != want {
			t.Fatalf("keep %v: after a restart: %+v, %v", keep, st, err)
		}
		ts2.stop()
	}
}

// A worker found faulty while its job still runs stays refused by a
// coordinator restarted on the same state before the job ends.
func TestServerRefusesFaultyAfterRestartMidJob(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, func(c *Config) { c.StateDir = dir; c.Scheduler.Verify = true })
	slow := func(a api.Assignment, n uint64) (uint64, string) { time.Sleep(50 * time.Millisecond); return n, "" }
	liar := &fakeWorker{id: "liar", answer: func(a api.Assignment, n uint64) (uint64, string) { return n + 1, "" }}
	startWorkers(t, ts.addr, liar, &fakeWorker{id: "w1", answer: slow}, &fakeWorker{id: "w2", answer: slow})
	waitSessions(t, ts, 3)
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 4, Scheme: "hash"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := ts.s.Status(context.Background(), api.JobID(id))
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Final() {
			t.Skipf("the job ended (%s) before the stop; the finished-job case is tested above", st.State)
		}
		if len(st.Faulty) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the liar was not caught: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ts.stop()

	ts2 := startServer(t, func(c *Config) { c.StateDir = dir })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := (&fakeWorker{id: "liar"}).run(ctx, dial(t, ts2.addr))
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "faulty") {
		t.Fatalf("faulty worker connecting after a restart mid-job: %v", err)
	}
}

// A watcher coalesces changes over its interval, but the job's end cuts
// the wait short: the final status comes at once.
func TestWatchShowsTheEndAtOnce(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t)
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Scheme: "hash"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan struct{})
	done := make(chan error, 1)
	var last api.JobStatus
	go func() {
		done <- ts.s.Watch(ctx, api.JobID(id), time.Hour, func(st api.JobStatus) error {
			if last.Job == "" {
				close(first)
			}
			last = st
			return nil
		})
	}()
	<-first
	startWorkers(t, ts.addr, &fakeWorker{id: "w1"})
	select {
	case err := <-done:
		if err != nil || last.State != api.JobDone || last.Triangles != want {
			t.Fatalf("Watch = %v, last status %+v; want done with %d", err, last, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the final status waited for the watcher's hour-long interval")
	}
}
