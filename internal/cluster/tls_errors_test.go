package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/internal/testcerts"
)

// A client whose TLS settings do not fit the coordinator's is told why,
// every time, not that a write found the pipe broken: no certificate, a
// certificate the coordinator does not accept, no TLS against TLS, TLS
// against none.
func TestTLSMismatchSaysWhy(t *testing.T) {
	f, err := testcerts.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tlsAddr := serve(t, Security{TLS: TLSFiles{Cert: f.ServerCert, Key: f.ServerKey, CA: f.CA}, Logger: testLogger(t)})
	plainAddr := serve(t, Security{Logger: testLogger(t)})
	for _, c := range []struct {
		name, addr string
		sec        Security
		want       []string
	}{
		{"no TLS against TLS", tlsAddr, Security{}, []string{"the coordinator requires TLS", "--tls-ca", "--tls-cert", "--tls-key"}},
		{"no client certificate", tlsAddr, Security{TLS: TLSFiles{CA: f.CA}}, []string{"requires a client certificate", "--tls-cert", "--tls-key"}},
		{"certificate from another CA", tlsAddr, Security{TLS: TLSFiles{Cert: f.StrangerCert, Key: f.StrangerKey, CA: f.CA}}, []string{f.StrangerCert, "not signed by a CA the coordinator accepts"}},
		{"server certificate as client", tlsAddr, Security{TLS: TLSFiles{Cert: f.ServerCert, Key: f.ServerKey, CA: f.CA}}, []string{"the coordinator refused this client's certificate", "bad certificate"}},
		{"TLS against no TLS", plainAddr, Security{TLS: TLSFiles{Cert: f.ClientCert, Key: f.ClientKey, CA: f.CA}}, []string{"the coordinator does not speak TLS"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The race between the refusal and the client's first write
			// went either way; every try must tell the cause.
			for range 5 {
				for _, msg := range callErrors(t, c.addr, c.sec) {
					for _, w := range c.want {
						if !strings.Contains(msg, w) {
							t.Errorf("error %q does not say %q", msg, w)
						}
					}
					if !strings.Contains(msg, TLSErrorPrefix) {
						t.Errorf("error %q lacks the mark %q", msg, TLSErrorPrefix)
					}
				}
			}
		})
	}
}

// callErrors makes one unary and one streaming call on a fresh
// connection and returns their errors' texts.
func callErrors(t *testing.T, addr string, sec Security) []string {
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := pb.NewJobsClient(conn)
	_, uerr := c.List(ctx, &pb.ListRequest{})
	ws, serr := c.Watch(ctx, &pb.WatchRequest{Job: "j"})
	if serr == nil {
		_, serr = ws.Recv()
	}
	var out []string
	for _, err := range []error{uerr, serr} {
		if err == nil {
			t.Fatal("a call succeeded")
		}
		out = append(out, err.Error())
	}
	return out
}
