package coordinator

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// openSession opens a Work stream under name and instance and waits for
// the coordinator's answer: the stream once welcomed, or the refusal.
func openSession(t *testing.T, addr, name, instance string) (pb.Cluster_WorkClient, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := pb.NewClusterClient(dial(t, addr)).Work(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := api.Hello{Worker: api.WorkerID(name), Version: "test", Slots: 1, Cores: 1, Instance: instance}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: pb.EncodeHello(h)}}); err != nil {
		t.Fatal(err)
	}
	m, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	if _, err := pb.DecodeWelcome(m.GetWelcome()); err != nil {
		t.Fatalf("first answer: %v", err)
	}
	return stream, nil
}

// heartbeat keeps a session live until the test ends.
func heartbeat(t *testing.T, stream pb.Cluster_WorkClient, name string) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			hb := pb.EncodeHeartbeat(api.Heartbeat{Worker: api.WorkerID(name)})
			if stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Heartbeat{Heartbeat: hb}}) != nil {
				return
			}
		}
	}()
}

// sessionInstance returns the instance of the session the coordinator
// holds under name ("-" for none).
func sessionInstance(t *testing.T, ts *testServer, name string) string {
	t.Helper()
	got := "-"
	if err := ts.s.call(context.Background(), func() {
		if sess := ts.s.sessions[api.WorkerID(name)]; sess != nil {
			got = sess.instance
		}
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// A second process under the name of a live worker is refused, naming
// the cause; the first keeps its session.
func TestServerRefusesSecondLiveWorkerOfAName(t *testing.T) {
	ts := startServer(t)
	first, err := openSession(t, ts.addr, "w", "i1")
	if err != nil {
		t.Fatal(err)
	}
	heartbeat(t, first, "w")
	_, err = openSession(t, ts.addr, "w", "i2")
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("second worker named w: %v, want AlreadyExists", err)
	}
	msg := status.Convert(err).Message()
	if !strings.Contains(msg, "worker name w is already in use by a live worker at 127.0.0.1:") || !strings.Contains(msg, "give each worker a unique --name") {
		t.Errorf("refusal %q does not say why", msg)
	}
	if got := sessionInstance(t, ts, "w"); got != "i1" {
		t.Errorf("the coordinator holds instance %q of w, want the first (i1)", got)
	}
}

// The same process reconnecting (same name and instance) while its old
// stream still looks open is taken in, and the old stream is ended.
func TestServerAcceptsReconnectOfSameInstance(t *testing.T) {
	ts := startServer(t)
	old, err := openSession(t, ts.addr, "w", "i1")
	if err != nil {
		t.Fatal(err)
	}
	heartbeat(t, old, "w")
	if _, err := openSession(t, ts.addr, "w", "i1"); err != nil {
		t.Fatalf("reconnect of the same instance refused: %v", err)
	}
	for {
		_, err := old.Recv()
		if err == nil {
			continue
		}
		if status.Code(err) != codes.Aborted {
			t.Errorf("old stream ended with %v, want Aborted", err)
		}
		break
	}
}

// Another process may take the name of a worker whose session went
// silent (no heartbeats for several intervals: stopped, or its link
// dead without the stream noticing).
func TestServerReplacesSilentSessionOfAName(t *testing.T) {
	ts := startServer(t)
	silent := silentAfter(ts.s.cfg.HeartbeatInterval)
	start := time.Now() // i1 is heard after this, at its Hello
	if _, err := openSession(t, ts.addr, "w", "i1"); err != nil {
		t.Fatal(err)
	}
	// Refused while i1 is fresh; a machine so slow that i1 went silent
	// before i2's Hello is answered may take the name over instead.
	if _, err := openSession(t, ts.addr, "w", "i2"); status.Code(err) != codes.AlreadyExists && time.Since(start) < silent {
		t.Fatalf("while i1 is fresh: %v, want AlreadyExists", err)
	}
	time.Sleep(silent + 200*time.Millisecond)
	if _, err := openSession(t, ts.addr, "w", "i2"); err != nil {
		t.Fatalf("after i1 went silent: %v", err)
	}
	if got := sessionInstance(t, ts, "w"); got != "i2" {
		t.Errorf("the coordinator holds instance %q of w, want i2", got)
	}
}

// Membership news of one process of a name does not end the session of
// another process under that name. The session is silent (no
// heartbeats), so news of its own process ends it at once.
func TestServerMemberGoneMatchesInstance(t *testing.T) {
	ts := startServer(t)
	if _, err := openSession(t, ts.addr, "w", "i2"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(silentAfter(ts.s.cfg.HeartbeatInterval) + 100*time.Millisecond)
	ts.s.MemberGone("w", "i1", "membership: dead")
	time.Sleep(100 * time.Millisecond)
	if got := sessionInstance(t, ts, "w"); got != "i2" {
		t.Fatalf("news of i1 ended i2's session (holding %q)", got)
	}
	ts.s.MemberGone("w", "i2", "membership: dead")
	deadline := time.Now().Add(30 * time.Second)
	for sessionInstance(t, ts, "w") != "-" {
		if time.Now().After(deadline) {
			t.Fatal("news of i2 did not end its session")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
