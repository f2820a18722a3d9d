package main

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/api/pb"
)

// watchUntilCancelled is a coordinator whose Watch streams stay silent
// until the caller gives up.
type watchUntilCancelled struct{ pb.JobsClient }

func (watchUntilCancelled) Watch(ctx context.Context, _ *pb.WatchRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[pb.JobStatus], error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// An interrupted submit --wait says that the job goes on and how to stop
// it, not only that the signal stopped the command.
func TestInterruptedWaitSaysTheJobGoesOn(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := watchJob(ctx, watchUntilCancelled{}, "j1", time.Minute, newProgress(&bytes.Buffer{}, progressNone))
	if err == nil {
		t.Fatal("a cancelled watch returned no error")
	}
	var b bytes.Buffer
	interruptedReport(&b, syscall.SIGINT, err)
	out := b.String()
	for _, want := range []string{"job j1", "the job goes on", "trigrid cancel", "stopped by SIGINT"} {
		if !strings.Contains(out, want) {
			t.Errorf("report %q lacks %q", out, want)
		}
	}
	b.Reset()
	interruptedReport(&b, syscall.SIGTERM, context.Canceled)
	if got := b.String(); got != "trigrid: stopped by SIGTERM\n" {
		t.Errorf("a plain cancellation: %q, want only the signal", got)
	}
}
