package clustertest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/internal/testcerts"
)

// A coordinator with TLS serves the dashboard on its --metrics port over
// TLS only (a plain request is redirected to https), asks a client
// without the token for it, and keeps /metrics and the probes on plain
// HTTP for Prometheus and the kubelet.
func TestDashboardOverTLS(t *testing.T) {
	t.Parallel()
	certs, err := testcerts.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const token = "tls-dashboard-token"
	c := startCoordinator(t, "--tls-cert", certs.ServerCert, "--tls-key", certs.ServerKey, "--tls-ca", certs.CA, "--token", token)
	pem, err := os.ReadFile(certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	secure := &http.Client{Timeout: 10 * time.Second, CheckRedirect: noFollow,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	plain := &http.Client{Timeout: 10 * time.Second, CheckRedirect: noFollow}
	get := func(c *http.Client, url, auth string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		r, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, r.Header, string(b)
	}
	if code, h, _ := get(plain, "http://"+c.metrics+"/api/v1/overview", token); code != http.StatusPermanentRedirect || h.Get("Location") != "https://"+c.metrics+"/api/v1/overview" {
		t.Fatalf("plain /api/: %d %v", code, h)
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		if code, _, body := get(plain, "http://"+c.metrics+path, ""); code != 200 {
			t.Fatalf("plain %s: %d %s", path, code, body)
		}
	}
	if code, _, body := get(secure, "https://"+c.metrics+"/api/v1/overview", ""); code != 401 || strings.Contains(body, token) {
		t.Fatalf("/api/ over TLS without the token: %d %s", code, body)
	}
	code, _, body := get(secure, "https://"+c.metrics+"/api/v1/overview", token)
	var o struct {
		Version int   `json:"version"`
		Jobs    []any `json:"jobs"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &o) != nil || o.Version != 1 {
		t.Fatalf("/api/ over TLS with the token: %d %s", code, body)
	}
	if code, _, body := get(secure, "https://"+c.metrics+"/", ""); code != 200 || !strings.Contains(body, "static/app.js") {
		t.Fatalf("the page over TLS: %d", code)
	}
}
