package storage_test

import (
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/storage"
)

// badHost is a name that never resolves (RFC 2606's .invalid).
const badHost = "no-such-host.invalid"

// checkUnreachable fails t unless err says at once (no retries) that the
// endpoint cannot be reached, naming it, its bucket and why.
func checkUnreachable(t *testing.T, err error, endpoint, why string) {
	t.Helper()
	if !errors.Is(err, storage.ErrUnreachable) {
		t.Fatalf("error %v, want ErrUnreachable", err)
	}
	for _, want := range []string{"endpoint " + endpoint, "bucket nobucket", why} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "gave up after") {
		t.Errorf("error %q: an error that cannot heal was retried", err)
	}
}

// openS3 opens s3://nobucket/p at endpoint with the default number of tries and
// fake credentials (no request here gets far enough to use them).
func openS3(t *testing.T, endpoint string) storage.Store {
	t.Helper()
	t.Setenv("TRIGRID_S3_ENDPOINT", endpoint)
	t.Setenv("TRIGRID_S3_RETRIES", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret-secret-secret")
	s, err := storage.Open("s3://nobucket/p")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A host name that does not resolve fails every operation at once.
func TestS3UnknownHostFailsAtOnce(t *testing.T) {
	var dns *net.DNSError
	if _, err := net.LookupHost(badHost); !errors.As(err, &dns) || !dns.IsNotFound {
		t.Skipf("this machine's resolver does not answer that %s does not exist (%v)", badHost, err)
	}
	s := openS3(t, "http://"+badHost+":9000")
	start := time.Now()
	_, err := s.Get(t.Context(), "manifest.json")
	checkUnreachable(t, err, badHost+":9000", "host name "+badHost+" does not resolve")
	_, err = s.List(t.Context())
	checkUnreachable(t, err, badHost+":9000", "does not resolve")
	checkUnreachable(t, s.Put(t.Context(), "x", []byte("x")), badHost+":9000", "does not resolve")
	// Ten tries wait more than 20 s between them.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("three operations took %v: retried", d)
	}
}

// An https endpoint whose certificate no authority here vouches for, and
// a plain-HTTP server named as https, fail at once.
func TestS3TLSMismatchFailsAtOnce(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	host := strings.TrimPrefix(tlsSrv.URL, "https://")
	_, err := openS3(t, "https://"+host).Get(t.Context(), "manifest.json")
	checkUnreachable(t, err, host, "TLS certificate is not trusted")

	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	host = strings.TrimPrefix(plain.URL, "http://")
	_, err = openS3(t, "https://"+host).Get(t.Context(), "manifest.json")
	checkUnreachable(t, err, host, "does not speak TLS")
}

// A refused connection may heal (a server restarting): it is retried the
// configured number of times.
func TestS3RefusedConnectionIsRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	openS3(t, "http://"+addr)
	t.Setenv("TRIGRID_S3_RETRIES", "2")
	s, err := storage.Open("s3://nobucket/p")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(t.Context(), "manifest.json")
	if err == nil || !strings.Contains(err.Error(), "gave up after 2 tries") || errors.Is(err, storage.ErrUnreachable) {
		t.Fatalf("Get from a closed port: %v, want retries that give up", err)
	}
}
