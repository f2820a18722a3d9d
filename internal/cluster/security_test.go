package cluster

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/internal/testcerts"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// jobsStub answers every call with Unimplemented: a call that gets that
// far passed the security checks.
type jobsStub struct{ pb.UnimplementedJobsServer }

func serve(t *testing.T, sec Security) string {
	t.Helper()
	opts, err := sec.ServerOptions()
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	pb.RegisterJobsServer(s, jobsStub{})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

// call makes one unary and one streaming call and returns their codes.
func call(t *testing.T, addr string, sec Security) (unary, stream codes.Code) {
	t.Helper()
	opts, err := sec.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := pb.NewJobsClient(conn)
	_, err = c.List(ctx, &pb.ListRequest{})
	unary = status.Code(err)
	ws, err := c.Watch(ctx, &pb.WatchRequest{Job: "j"})
	if err == nil {
		_, err = ws.Recv()
	}
	return unary, status.Code(err)
}

func TestToken(t *testing.T) {
	addr := serve(t, Security{Token: "s3cret", Logger: testLogger(t)})
	for _, c := range []struct {
		name  string
		token string
		want  codes.Code
	}{
		{"no token", "", codes.Unauthenticated},
		{"wrong token", "s3cret!", codes.Unauthenticated},
		{"prefix of the token", "s3c", codes.Unauthenticated},
		{"right token", "s3cret", codes.Unimplemented},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, s := call(t, addr, Security{Token: c.token})
			if u != c.want || s != c.want {
				t.Errorf("unary %v, stream %v; want %v", u, s, c.want)
			}
		})
	}
}

func TestTLSRefusals(t *testing.T) {
	f, err := testcerts.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logged syncBuffer
	logger := slog.New(slog.NewTextHandler(io.MultiWriter(&logged, testLogWriter{t}), nil))
	addr := serve(t, Security{TLS: TLSFiles{Cert: f.ServerCert, Key: f.ServerKey, CA: f.CA}, Token: "tok", Logger: logger})
	good := TLSFiles{Cert: f.ClientCert, Key: f.ClientKey, CA: f.CA}
	if u, s := call(t, addr, Security{TLS: good, Token: "tok"}); u != codes.Unimplemented || s != codes.Unimplemented {
		t.Fatalf("a client with a good certificate and token: unary %v, stream %v", u, s)
	}
	// A client certificate but no token.
	if u, _ := call(t, addr, Security{TLS: good}); u != codes.Unauthenticated {
		t.Errorf("no token over TLS: %v, want Unauthenticated", u)
	}
	// The server's own certificate is not a client certificate; the
	// stranger's is signed by a CA the server does not trust; a plain
	// connection speaks no TLS at all.
	for _, c := range []struct {
		name string
		sec  Security
	}{
		{"no client certificate", Security{TLS: TLSFiles{CA: f.CA}, Token: "tok"}},
		{"server certificate as client", Security{TLS: TLSFiles{Cert: f.ServerCert, Key: f.ServerKey, CA: f.CA}, Token: "tok"}},
		{"certificate from another CA", Security{TLS: TLSFiles{Cert: f.StrangerCert, Key: f.StrangerKey, CA: f.CA}, Token: "tok"}},
		{"no TLS", Security{Token: "tok"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if u, _ := call(t, addr, c.sec); u != codes.Unavailable {
				t.Errorf("code %v, want Unavailable (handshake refused)", u)
			}
		})
	}
	// The server logs in its own goroutine, maybe after the client gave up.
	for deadline := time.Now().Add(30 * time.Second); strings.Count(logged.String(), "TLS handshake") < 4 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(logged.String(), "TLS handshake"); n < 4 {
		t.Errorf("the server logged %d refused handshakes, want at least 3:\n%s", n, logged.String())
	}
	// Half the TLS settings is an error, not a silent plain connection.
	if _, err := (Security{TLS: TLSFiles{Cert: f.ClientCert}}).DialOptions(); err == nil {
		t.Error("DialOptions with a certificate but no key or CA succeeded")
	}
}

func TestCheckListen(t *testing.T) {
	plain := Security{}
	for _, ok := range []string{"127.0.0.1:7000", "localhost:0", "[::1]:7000"} {
		if err := plain.CheckListen(ok); err != nil {
			t.Errorf("CheckListen(%s): %v", ok, err)
		}
	}
	for _, bad := range []string{":7000", "0.0.0.0:7000", "10.1.2.3:7000", "[::]:7000", "nonsense"} {
		if err := plain.CheckListen(bad); err == nil {
			t.Errorf("CheckListen(%s) without TLS accepted", bad)
		}
	}
	if err := (Security{Insecure: true}).CheckListen("0.0.0.0:7000"); err != nil {
		t.Errorf("--insecure: %v", err)
	}
	if err := (Security{TLS: TLSFiles{Cert: "c", Key: "k", CA: "a"}}).CheckListen(":7000"); err != nil {
		t.Errorf("with TLS: %v", err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
