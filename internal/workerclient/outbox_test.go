package workerclient

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// batchServer answers each pull with that many assignments and passes on
// every Results or Pull message it receives.
type batchServer struct {
	pb.UnimplementedClusterServer
	got  chan *pb.WorkerMessage
	next int
}

func (s *batchServer) Work(stream pb.Cluster_WorkServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	if err := stream.Send(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Welcome{Welcome: pb.EncodeWelcome(api.Welcome{
		Version: "test", Heartbeat: time.Second, Lease: time.Minute})}}); err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		n := int(m.GetPull().GetMax() + m.GetResults().GetPull())
		if m.GetPull() != nil || m.GetResults() != nil {
			s.got <- m
		}
		var as []api.Assignment
		for range n {
			as = append(as, api.Assignment{Ref: api.SubtaskRef{Job: "j", Index: s.next}, Attempt: 1})
			s.next++
		}
		if len(as) > 0 {
			if err := stream.Send(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Assignments{Assignments: pb.EncodeAssignments(as)}}); err != nil {
				return err
			}
		}
	}
}

// A batch goes when it is full, on Flush, or at once when the worker
// answers its last assignment; a pull made meanwhile rides with the
// results; a worker holding nothing pulls at once.
func TestOutboxBatches(t *testing.T) {
	srv := grpc.NewServer()
	bs := &batchServer{got: make(chan *pb.WorkerMessage, 16)}
	pb.RegisterClusterServer(srv, bs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	conn, err := New(Config{Client: cc, ResultBatch: 3, ResultLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := conn.Hello(ctx, api.Hello{Worker: "w", Version: "v", Cores: 1, Slots: 1}); err != nil {
		t.Fatal(err)
	}
	next := func(what string) *pb.WorkerMessage {
		t.Helper()
		select {
		case m := <-bs.got:
			return m
		case <-ctx.Done():
			t.Fatalf("%s: nothing sent", what)
		}
		return nil
	}
	none := func(what string) {
		t.Helper()
		select {
		case m := <-bs.got:
			t.Fatalf("%s: sent %v", what, m)
		case <-time.After(50 * time.Millisecond):
		}
	}
	var held []api.Assignment
	for len(held) < 6 {
		as, err := conn.Pull(ctx, 6-len(held))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, as...)
	}
	if m := next("the idle worker's pull"); m.GetPull().GetMax() != 6 {
		t.Fatalf("first message %v, want a pull of 6", m)
	}
	report := func(a api.Assignment) {
		t.Helper()
		if err := conn.Report(ctx, api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: "w", Triangles: uint64(a.Ref.Index)}); err != nil {
			t.Fatal(err)
		}
	}
	report(held[0])
	report(held[1])
	none("two results of a batch of three")
	report(held[2])
	if rs := next("a full batch").GetResults(); len(rs.GetItems()) != 3 || rs.GetItems()[2].GetTriangles() != 2 {
		t.Fatalf("full batch %v", rs)
	}
	report(held[3])
	pulled := make(chan []api.Assignment, 1)
	go func() {
		as, _ := conn.Pull(ctx, 1)
		pulled <- as
	}()
	none("one result and a pull, with assignments still held")
	if err := conn.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if rs := next("the flushed batch").GetResults(); len(rs.GetItems()) != 1 || rs.GetPull() != 1 {
		t.Fatalf("flushed batch %v, want one result and the pull of 1", rs)
	}
	held = append(held, <-pulled...)
	report(held[4])
	report(held[5])
	none("results with one assignment still held")
	report(held[6])
	if rs := next("the last answer").GetResults(); len(rs.GetItems()) != 3 {
		t.Fatalf("batch of the last answer %v, want results 4, 5 and 6", rs)
	}
}
