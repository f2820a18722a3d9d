package coordinator

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"google.golang.org/grpc"
)

// BenchmarkServerThroughput measures the whole gRPC path on loopback: 64
// workers, each with its own connection and Work stream, that answer every
// assignment at once (no counting) and pull one more per result.
func BenchmarkServerThroughput(b *testing.B) {
	const workers = 64
	tasks := testTasks(32) // 32,768 subtasks
	for b.Loop() {
		b.StopTimer()
		ts := startServer(b, func(c *Config) { c.Logger = nil })
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(context.Background())
		for w := range workers {
			conn := dial(b, ts.addr)
			wg.Go(func() { instantWorker(ctx, conn, fmt.Sprintf("w%d", w)) })
		}
		waitSessions(b, ts, workers)
		jobDone := make(chan struct{}, 1)
		b.StartTimer()
		ts.s.call(ctx, func() {
			j := &jobInfo{rec: JobRecord{ID: "bench", Subtasks: tasks, Created: time.Now()}, state: api.JobQueued,
				workers: map[api.WorkerID]bool{}, watchers: map[chan struct{}]struct{}{jobDone: {}}}
			ts.s.jobs["bench"] = j
			ts.s.order = append(ts.s.order, "bench")
			ts.s.addToScheduler(j, nil)
		})
		for final := false; !final; {
			<-jobDone
			ts.s.call(ctx, func() { final = ts.s.jobs["bench"].state.Final() })
		}
		b.StopTimer()
		if st, _ := ts.s.Status(ctx, "bench"); st.State != api.JobDone || st.Triangles != uint64(len(tasks))*uint64(len(tasks)+1)/2 {
			b.Fatalf("status %+v", st)
		}
		b.StopTimer()
		cancel()
		wg.Wait()
		ts.stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(tasks)*b.N)/b.Elapsed().Seconds(), "subtasks/s")
}

// instantWorker answers every assignment at once with its index + 1.
func instantWorker(ctx context.Context, conn *grpc.ClientConn, id string) error {
	stream, err := pb.NewClusterClient(conn).Work(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: pb.EncodeHello(api.Hello{Worker: api.WorkerID(id), Slots: 1, Cores: 1})}}); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != nil {
		return err
	}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Pull{Pull: &pb.Pull{Max: 2}}}); err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		for _, a := range m.GetAssignments().GetItems() {
			r := &pb.Result{Ref: a.GetRef(), Attempt: a.GetAttempt(), Worker: id, Triangles: uint64(a.GetRef().GetIndex()) + 1}
			if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Result{Result: r}}); err != nil {
				return err
			}
			if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Pull{Pull: &pb.Pull{Max: 1}}}); err != nil {
				return err
			}
		}
	}
}

// BenchmarkServerBatched is the coordinator's side of the issue's
// scheduler test in one process: four workers on loopback, each its own
// connection and Work stream, that answer every batch of assignments at
// once with one Results message carrying the next pull (as the gRPC
// client batches), a P = 32 job (32,768 subtasks) and the job state in
// bbolt. It reports subtasks per second and the process's CPU time per
// subtask (the coordinator and the four clients together).
func BenchmarkServerBatched(b *testing.B) {
	const workers = 4
	tasks := testTasks(32)
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		ts := startServer(b, func(c *Config) { c.Logger = nil; c.StateDir = b.TempDir() })
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w := range workers {
			conn := dial(b, ts.addr)
			wg.Go(func() { batchedWorker(ctx, conn, fmt.Sprintf("w%d", w)) })
		}
		waitSessions(b, ts, workers)
		jobDone := make(chan struct{}, 1)
		cpu0 := processCPU()
		b.StartTimer()
		ts.s.call(ctx, func() {
			rec := JobRecord{ID: "bench", Subtasks: tasks, Created: time.Now()}
			if err := ts.s.db.PutJob(rec); err != nil {
				b.Error(err)
			}
			j := &jobInfo{rec: rec, state: api.JobQueued, workers: map[api.WorkerID]bool{}, watchers: map[chan struct{}]struct{}{jobDone: {}}}
			ts.s.jobs["bench"] = j
			ts.s.order = append(ts.s.order, "bench")
			ts.s.addToScheduler(j, nil)
		})
		for final := false; !final; {
			<-jobDone
			ts.s.call(ctx, func() { final = ts.s.jobs["bench"].state.Final() })
		}
		b.StopTimer()
		cpu += processCPU() - cpu0
		if st, _ := ts.s.Status(ctx, "bench"); st.State != api.JobDone || st.Triangles != uint64(len(tasks))*uint64(len(tasks)+1)/2 {
			b.Fatalf("status %+v", st)
		}
		cancel()
		wg.Wait()
		ts.stop()
		b.StartTimer()
	}
	n := float64(len(tasks) * b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "subtasks/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/subtask")
}

// batchedWorker answers each batch of assignments at once, with index + 1,
// in one Results message that pulls as many again.
func batchedWorker(ctx context.Context, conn *grpc.ClientConn, id string) error {
	stream, err := pb.NewClusterClient(conn).Work(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: pb.EncodeHello(api.Hello{Worker: api.WorkerID(id), Slots: 1, Cores: 1})}}); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != nil {
		return err
	}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Pull{Pull: &pb.Pull{Max: 64}}}); err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		items := m.GetAssignments().GetItems()
		if len(items) == 0 {
			continue
		}
		rs := &pb.Results{Pull: int32(len(items))}
		for _, a := range items {
			rs.Items = append(rs.Items, &pb.Result{Ref: a.GetRef(), Attempt: a.GetAttempt(), Worker: id, Triangles: uint64(a.GetRef().GetIndex()) + 1})
		}
		if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Results{Results: rs}}); err != nil {
			return err
		}
	}
}
