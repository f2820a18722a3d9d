package cluster

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/internal/testlong"
)

// A negative keepalive timeout is refused on both sides, naming the flag.
func TestKeepaliveTimeoutNegative(t *testing.T) {
	sec := Security{KeepaliveTimeout: -time.Second}
	if _, err := sec.ServerOptions(); err == nil || !strings.Contains(err.Error(), "--keepalive-timeout") {
		t.Errorf("server options: %v, want a refusal naming --keepalive-timeout", err)
	}
	if _, err := sec.DialOptions(); err == nil || !strings.Contains(err.Error(), "--keepalive-timeout") {
		t.Errorf("dial options: %v, want a refusal naming --keepalive-timeout", err)
	}
}

// The server allows pings at the rate the clients send them: a server
// refuses more frequent pings with GOAWAY, which would end every worker's
// stream whenever it heard nothing for a while.
func TestKeepalivePingRateAllowed(t *testing.T) {
	if keepaliveMinTime >= keepaliveTime {
		t.Fatalf("clients ping after %v of silence, the server allows one every %v", keepaliveTime, keepaliveMinTime)
	}
}

// holdStub holds every Watch open, silent, until the client goes.
type holdStub struct{ pb.UnimplementedJobsServer }

func (holdStub) Watch(_ *pb.WatchRequest, s grpc.ServerStreamingServer[pb.JobStatus]) error {
	<-s.Context().Done()
	return nil
}

// A stream on which the server says nothing for several keepalive
// intervals stays open: the client's pings are answered, not refused.
// Long: a server refuses pings only once three came too soon after
// others, the fourth ping, so it waits out five.
func TestSilentStreamOutlivesPings(t *testing.T) {
	testlong.Skip(t)
	opts, err := Security{}.ServerOptions()
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	pb.RegisterJobsServer(s, holdStub{})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	dopts, err := Security{}.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(lis.Addr().String(), dopts...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws, err := pb.NewJobsClient(conn).Watch(ctx, &pb.WatchRequest{Job: "j"})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := ws.Recv()
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("the silent stream ended: %v", err)
	case <-time.After(5 * keepaliveTime):
	}
}
