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
