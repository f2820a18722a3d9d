package clustertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/internal/workerclient"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

// inProcessCoordinator runs a coordinator.Server on a loopback gRPC
// listener in this process.
type inProcessCoordinator struct {
	srv    *coordinator.Server
	addr   string
	conn   *grpc.ClientConn
	cancel context.CancelFunc
	done   chan struct{}
	gs     *grpc.Server
}

func startInProcess(tb testing.TB, state string) *inProcessCoordinator {
	tb.Helper()
	cfg := coordinator.DefaultConfig()
	cfg.StateDir = state
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.DataDirs = []string{os.TempDir()} // the tests' shard stores
	srv, err := coordinator.NewServer(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	ctx, cancel := context.WithCancel(context.Background())
	c := &inProcessCoordinator{srv: srv, addr: lis.Addr().String(), cancel: cancel, done: make(chan struct{}), gs: gs}
	go gs.Serve(lis)
	go func() { srv.Run(ctx); close(c.done) }()
	c.conn, err = grpc.NewClient(c.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c.conn.Close()
		cancel()
		<-c.done
		gs.Stop()
		srv.Close()
	})
	return c
}

// instantWorker speaks the Work protocol directly and answers every
// assignment at once with a count of 0, keeping up to batch assignments
// requested: it measures the coordinator, not counting.
func instantWorker(ctx context.Context, conn *grpc.ClientConn, id string, batch int) error {
	stream, err := pb.NewClusterClient(conn).Work(ctx)
	if err != nil {
		return err
	}
	hello := pb.EncodeHello(api.Hello{Worker: api.WorkerID(id), Version: "bench", Cores: 1, Slots: 1, Devices: []api.Device{{Kind: "cpu", Name: "cpu"}}})
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: hello}}); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != nil {
		return err
	}
	pull := &pb.WorkerMessage{Msg: &pb.WorkerMessage_Pull{Pull: &pb.Pull{Max: int32(batch)}}}
	if err := stream.Send(pull); err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		as := m.GetAssignments()
		if as == nil {
			continue
		}
		items, err := pb.DecodeAssignments(as)
		if err != nil {
			return err
		}
		for _, a := range items {
			r := pb.EncodeResult(api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: api.WorkerID(id), Kernel: "instant"})
			if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Result{Result: r}}); err != nil {
				return err
			}
		}
		pull.GetPull().Max = int32(len(items))
		if err := stream.Send(pull); err != nil {
			return err
		}
	}
}

// shardStore partitions ca-GrQc at P with the hash scheme into a file
// store (every block is non-empty, so there are P^3 subtasks).
func shardStore(tb testing.TB, p int) string {
	tb.Helper()
	store, err := storage.Open(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := partition.PartitionFile(context.Background(), repoFile("testdata", "ca-GrQc.txt.gz"), edgeio.ReadOptions{}, store, partition.Config{Scheme: storage.SchemeHash, P: p}); err != nil {
		tb.Fatal(err)
	}
	return store.URL()
}

// runJob submits a shard store and waits for the job to end.
func runJob(tb testing.TB, c *inProcessCoordinator, store string) api.JobStatus {
	tb.Helper()
	jobs := pb.NewJobsClient(c.conn)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := jobs.Submit(ctx, pb.EncodeSubmit(api.JobSpec{Shards: store}))
	if err != nil {
		tb.Fatal(err)
	}
	w, err := jobs.Watch(ctx, &pb.WatchRequest{Job: resp.GetJob()})
	if err != nil {
		tb.Fatal(err)
	}
	for {
		m, err := w.Recv()
		if err != nil {
			tb.Fatalf("watch: %v", err)
		}
		st, err := pb.DecodeStatus(m)
		if err != nil {
			tb.Fatal(err)
		}
		if st.State.Final() {
			return st
		}
	}
}

func startInstantWorkers(tb testing.TB, c *inProcessCoordinator, n, batch int) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := instantWorker(ctx, c.conn, fmt.Sprintf("instant-%d", i), batch); err != nil {
				errs <- err
			}
		}()
	}
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			tb.Errorf("instant worker: %v", err)
		}
	})
}

// BenchmarkSchedulerThroughput runs jobs of P^3 subtasks through the real
// gRPC path on loopback with 64 workers that answer at once, and reports
// subtasks settled per second (with the job state persisted to bbolt, as
// a coordinator with --state does, and in memory).
func BenchmarkSchedulerThroughput(b *testing.B) {
	const workers, p = 64, 32
	store := shardStore(b, p)
	for _, persist := range []bool{true, false} {
		b.Run(fmt.Sprintf("workers=%d/P=%d/persist=%v", workers, p, persist), func(b *testing.B) {
			state := ""
			if persist {
				state = b.TempDir()
			}
			c := startInProcess(b, state)
			startInstantWorkers(b, c, workers, 8)
			var subtasks int64
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				st := runJob(b, c, store)
				if st.State != api.JobDone || st.Done != st.Subtasks || st.Triangles != 0 {
					b.Fatalf("job ended %v: %d/%d done, %d triangles, %s", st.State, st.Done, st.Subtasks, st.Triangles, st.Err)
				}
				subtasks += st.Subtasks
			}
			b.ReportMetric(float64(subtasks)/time.Since(start).Seconds(), "subtasks/s")
		})
	}
}

// The default run checks the throughput path once at a small size: 64
// instant workers settle every subtask of a P = 8 job exactly once.
func TestInstantWorkersSettleEverySubtask(t *testing.T) {
	store := shardStore(t, 8)
	c := startInProcess(t, t.TempDir())
	startInstantWorkers(t, c, 64, 4)
	st := runJob(t, c, store)
	if st.State != api.JobDone || st.Subtasks != 512 || st.Done != 512 || st.Triangles != 0 {
		t.Fatalf("job: %+v", st)
	}
	if st.Attempts < 512 {
		t.Errorf("%d attempts for 512 subtasks", st.Attempts)
	}
}

// instantCounter answers every subtask at once with 0.
type instantCounter struct{}

func (instantCounter) Name() string { return "instant" }

func (instantCounter) Count(context.Context, kernels.Subtask) (kernels.Result, error) {
	return kernels.Result{}, nil
}

// BenchmarkWorkerLoopThroughput is BenchmarkSchedulerThroughput with 64
// workers of package worker (their gRPC client, block cache and loop)
// whose counters return at once, so the worker side of the protocol is
// measured too; the blocks are read from the store and decoded once per
// worker, then cached.
func BenchmarkWorkerLoopThroughput(b *testing.B) {
	const workers, p = 64, 32
	store := shardStore(b, p)
	c := startInProcess(b, b.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range workers {
		conn, err := workerclient.New(workerclient.Config{Client: c.conn})
		if err != nil {
			b.Fatal(err)
		}
		cfg := worker.DefaultConfig()
		cfg.ID = api.WorkerID(fmt.Sprintf("instant-%d", i))
		cfg.Conn = conn
		cfg.Slots = []worker.Slot{{Device: api.Device{Kind: "cpu", Name: "cpu"}, NewCounter: func(string) (kernels.Counter, error) { return instantCounter{}, nil }}}
		cfg.OpenStore = conn.OpenStore
		cfg.DrainTimeout = 0
		cfg.Logger = slog.New(slog.DiscardHandler)
		w, err := worker.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			defer conn.Close()
			w.Run(ctx)
		})
	}
	b.Cleanup(func() { cancel(); wg.Wait() })
	runJob(b, c, store) // warm the workers' block caches
	var subtasks int64
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		st := runJob(b, c, store)
		if st.State != api.JobDone || st.Done != st.Subtasks || st.Triangles != 0 {
			b.Fatalf("job ended %v: %d/%d done, %d triangles, %s", st.State, st.Done, st.Subtasks, st.Triangles, st.Err)
		}
		subtasks += st.Subtasks
	}
	b.ReportMetric(float64(subtasks)/time.Since(start).Seconds(), "subtasks/s")
}
