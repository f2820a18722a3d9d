package tlssniff

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/internal/testcerts"
)

// One port answers plain HTTP and HTTPS; the handler sees which.
func TestListenerServesBoth(t *testing.T) {
	files, err := testcerts.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(files.ServerCert, files.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listener(raw, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, time.Second)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			io.WriteString(w, "tls")
		} else {
			io.WriteString(w, "plain")
		}
	}), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	addr := raw.Addr().String()

	// A client that connects and says nothing holds up no other.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	pem, _ := os.ReadFile(files.CA)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	secure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}, Timeout: 10 * time.Second}
	plain := &http.Client{Timeout: 10 * time.Second}
	for range 3 {
		for _, tc := range []struct {
			c    *http.Client
			url  string
			want string
		}{{plain, "http://" + addr + "/", "plain"}, {secure, "https://" + addr + "/", "tls"}} {
			r, err := tc.c.Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if string(b) != tc.want {
				t.Fatalf("GET %s: %q, want %q", tc.url, b, tc.want)
			}
		}
	}
	// The silent connection is closed after the timeout.
	idle.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := idle.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && (err == nil || !strings.Contains(err.Error(), "reset")) {
		t.Fatalf("the silent connection: %v, want it closed", err)
	}
	srv.Close()
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
}
