package workerclient

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/worker"
)

var _ worker.Canceller = (*Conn)(nil)

// cancelServer hands out two attempts on the first Pull, cancels the
// first once the worker has pulled, and records the results.
type cancelServer struct {
	pb.UnimplementedClusterServer
	as []api.Assignment

	mu      sync.Mutex
	results []api.Result
	got     chan struct{} // a result arrived
}

func (s *cancelServer) Work(stream pb.Cluster_WorkServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	if err := stream.Send(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Welcome{Welcome: pb.EncodeWelcome(api.Welcome{
		Version: "test", Heartbeat: time.Second, Lease: time.Minute})}}); err != nil {
		return err
	}
	handed := false
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		switch msg := m.GetMsg().(type) {
		case *pb.WorkerMessage_Pull:
			if handed {
				continue
			}
			handed = true
			if err := stream.Send(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Assignments{Assignments: pb.EncodeAssignments(s.as)}}); err != nil {
				return err
			}
			if err := stream.Send(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Cancel{Cancel: pb.EncodeCancel(api.Cancel{
				Ref: s.as[0].Ref, Attempt: s.as[0].Attempt, Reason: "settled elsewhere"})}}); err != nil {
				return err
			}
		case *pb.WorkerMessage_Results:
			rs, _, err := pb.DecodeResults(msg.Results)
			if err != nil {
				return err
			}
			for _, r := range rs {
				s.mu.Lock()
				s.results = append(s.results, r)
				s.mu.Unlock()
				s.got <- struct{}{}
			}
		}
	}
}

// waitingCounter counts 1, except for a block of rows rows, whose count
// waits for ctx to end.
type waitingCounter struct{ rows int64 }

func (waitingCounter) Name() string { return "waiting" }
func (c waitingCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	if t.IJ.NumRows() == c.rows {
		<-ctx.Done()
		return kernels.Result{}, ctx.Err()
	}
	return kernels.Result{Triangles: 1}, nil
}

// TestCancelStopsAttempt: a worker over a real gRPC stream on loopback
// drops the attempt the coordinator cancels (its count stops, no result)
// and reports the other.
func TestCancelStopsAttempt(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	cs := &cancelServer{got: make(chan struct{}, 4), as: []api.Assignment{
		{Ref: api.SubtaskRef{Job: "j", Index: 0}, Attempt: 1, I: 1}, // waits until cancelled
		{Ref: api.SubtaskRef{Job: "j", Index: 1}, Attempt: 1, I: 0},
	}}
	pb.RegisterClusterServer(srv, cs)
	go srv.Serve(lis)
	defer srv.Stop()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	conn, err := New(Config{Client: cc})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	cfg := worker.DefaultConfig()
	cfg.ID, cfg.Conn, cfg.HeartbeatInterval, cfg.Prefetch = "w1", conn, 0, 1
	cfg.Slots = []worker.Slot{{Device: api.Device{Kind: "cpu", Name: "cpu"}, NewCounter: func(string) (kernels.Counter, error) {
		return waitingCounter{rows: 2}, nil
	}}}
	// Block (i, j) has i+1 rows: assignment 0's IJ is (1, 0), 2 rows.
	cfg.Source = sourceFunc(func(i, j int) *graph.CSR { return &graph.CSR{Offsets: make([]uint64, i+2)} })
	w, err := worker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case <-cs.got:
	case <-ctx.Done():
		t.Fatal("no result within the time limit: the cancelled attempt was not stopped")
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.results) != 1 || cs.results[0].Ref.Index != 1 || cs.results[0].Triangles != 1 || cs.results[0].HandedBack {
		t.Fatalf("results %+v, want subtask 1 counted and nothing for the cancelled 0", cs.results)
	}
}

type sourceFunc func(i, j int) *graph.CSR

func (f sourceFunc) Block(ctx context.Context, i, j int) (*graph.CSR, worker.LoadTimes, error) {
	return f(i, j), worker.LoadTimes{}, nil
}
