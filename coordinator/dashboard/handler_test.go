package dashboard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/internal/testcerts"
)

func serve(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	h, err := Handler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func sceneSource(t *testing.T) Source {
	c := newScene(t)
	c.run()
	in := c.input()
	return func(ctx context.Context, detail api.JobID) (Input, error) { return in, nil }
}

type answer struct {
	code   int
	header http.Header
	body   []byte
}

func fetch(t *testing.T, c *http.Client, method, url string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	r, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{r.StatusCode, r.Header, b}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The JSON shape of version 1, field by field: a change here is a change
// of the documented API (docs/dashboard.md) and of Version when a field
// goes or changes its type.
func TestHandlerJSONShape(t *testing.T) {
	srv := serve(t, Config{Source: sceneSource(t)})
	a := fetch(t, srv.Client(), "GET", srv.URL+"/api/v1/overview")
	if a.code != 200 || a.header.Get("Content-Type") != "application/json" || a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("overview: %d %v %s", a.code, a.header, a.body)
	}
	var o map[string]any
	if err := json.Unmarshal(a.body, &o); err != nil {
		t.Fatal(err)
	}
	if got := keys(o); !slices.Equal(got, []string{"jobs", "time", "version", "workers"}) || o["version"] != 1.0 {
		t.Fatalf("overview keys %v, version %v", got, o["version"])
	}
	job := o["jobs"].([]any)[0].(map[string]any)
	wantJob := []string{"attempts", "created", "done", "elapsed_seconds", "failures", "graph", "id", "kernel", "p", "queued",
		"recounted", "recounts", "remaining_seconds", "requeued", "restored", "running", "scheme", "speculated", "state",
		"subtasks", "triangles_so_far", "workers"}
	if got := keys(job); !slices.Equal(got, wantJob) {
		t.Errorf("job keys\n got %v\nwant %v", got, wantJob)
	}
	if _, ok := job["triangles_so_far"].(string); !ok {
		t.Errorf("triangles_so_far is %T, want a decimal string", job["triangles_so_far"])
	}
	ws := o["workers"].([]any)
	worker := ws[0].(map[string]any)
	wantWorker := []string{"busy_seconds", "busy_share", "cores", "decode_seconds", "devices", "done", "edges_per_second",
		"failed", "fetch_seconds", "heartbeat_age_seconds", "host", "id", "kernel_seconds", "running", "slots", "state",
		"subtasks", "upload_seconds", "version"}
	if got := keys(worker); !slices.Equal(got, wantWorker) {
		t.Errorf("worker keys\n got %v\nwant %v", got, wantWorker)
	}
	if d := worker["devices"].([]any)[0].(map[string]any); !slices.Equal(keys(d), []string{"kind", "memory", "name"}) {
		t.Errorf("device keys %v", keys(d))
	}
	if lost := ws[len(ws)-1].(map[string]any); lost["state"] != "lost" || lost["left"] != "membership: dead" {
		t.Errorf("lost worker %v", lost)
	}

	a = fetch(t, srv.Client(), "GET", srv.URL+"/api/v1/jobs/j")
	var d map[string]any
	if err := json.Unmarshal(a.body, &d); err != nil || a.code != 200 {
		t.Fatalf("detail %d %s: %v", a.code, a.body, err)
	}
	if got := keys(d); !slices.Equal(got, []string{"grid", "in_flight", "in_flight_total", "job", "marked", "marked_total", "time", "version"}) {
		t.Errorf("detail keys %v", got)
	}
	g := d["grid"].(map[string]any)
	if got := keys(g); !slices.Equal(got, []string{"done", "failed", "group", "p", "recounted", "retried", "running", "size", "speculative", "total"}) {
		t.Errorf("grid keys %v", got)
	}
	f := d["in_flight"].([]any)[0].(map[string]any)
	if got := keys(f); !slices.Equal(got, []string{"attempt", "i", "j", "k", "running_seconds", "speculative", "subtask", "worker"}) {
		t.Errorf("in flight keys %v", got)
	}
	m := d["marked"].([]any)[0].(map[string]any)
	if got := keys(m); !slices.Equal(got, []string{"i", "j", "k", "marks", "state", "subtask", "tries"}) {
		t.Errorf("marked keys %v", got)
	}
}

func TestHandlerPaths(t *testing.T) {
	down := func(ctx context.Context, detail api.JobID) (Input, error) {
		return Input{}, errors.New("coordinator: stopped")
	}
	srv := serve(t, Config{Source: sceneSource(t)})
	c := srv.Client()
	for _, tc := range []struct {
		method, path string
		code         int
		ctype        string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8"},
		{"HEAD", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/static/app.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/static/app.css", 200, "text/css; charset=utf-8"},
		{"GET", "/static/", 404, ""},
		{"GET", "/static/index.html", 404, ""},
		{"GET", "/index.html", 404, ""},
		{"GET", "/job?id=x", 404, ""},
		{"GET", "/api/v1/jobs/nope", 404, "application/json"},
		{"GET", "/api/v1/jobs/..%2Fx", 400, "application/json"},
		{"GET", "/api/v2/overview", 404, "application/json"},
		{"POST", "/api/v1/overview", 405, "application/json"},
		{"DELETE", "/", 405, "application/json"},
	} {
		a := fetch(t, c, tc.method, srv.URL+tc.path)
		if a.code != tc.code || tc.ctype != "" && a.header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s %s: %d %q, want %d %q: %s", tc.method, tc.path, a.code, a.header.Get("Content-Type"), tc.code, tc.ctype, a.body)
		}
		if csp := a.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || a.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: headers %v", tc.method, tc.path, a.header)
		}
	}
	if a := fetch(t, c, "GET", serve(t, Config{Source: down}).URL+"/api/v1/overview"); a.code != 503 || !strings.Contains(string(a.body), "stopped") {
		t.Errorf("a stopped coordinator: %d %s", a.code, a.body)
	}
}

// The token guards the data; the page and its assets, which hold none,
// load without it so that the page can ask for it.
func TestHandlerToken(t *testing.T) {
	srv := serve(t, Config{Source: sceneSource(t), Token: "s3cret"})
	c := srv.Client()
	for _, h := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "s3cret"},
		{"Authorization", "Bearer s3cretx"}, {"Authorization", "Basic s3cret"}} {
		a := fetch(t, c, "GET", srv.URL+"/api/v1/overview", h...)
		if a.code != 401 || a.header.Get("WWW-Authenticate") == "" || strings.Contains(string(a.body), "jobs") {
			t.Errorf("%v: %d %v %s", h, a.code, a.header, a.body)
		}
		if strings.Contains(string(a.body), "s3cret") {
			t.Errorf("the refusal shows the token: %s", a.body)
		}
		// The refusal says what is wrong: none sent, not a bearer token,
		// or a bearer token that is not the one.
		want := "token is required"
		if len(h) > 0 {
			want = "not of the form Bearer"
			if strings.HasPrefix(h[1], "Bearer ") {
				want = "token is wrong"
			}
		}
		if !strings.Contains(string(a.body), want) {
			t.Errorf("%v: %s, want it to say %q", h, a.body, want)
		}
	}
	for _, path := range []string{"/api/v1/overview", "/api/v1/jobs/j"} {
		if a := fetch(t, c, "GET", srv.URL+path, "Authorization", "Bearer s3cret"); a.code != 200 {
			t.Errorf("%s with the token: %d %s", path, a.code, a.body)
		}
	}
	for _, path := range []string{"/", "/static/app.js"} {
		a := fetch(t, c, "GET", srv.URL+path)
		if a.code != 200 || strings.Contains(string(a.body), "s3cret") {
			t.Errorf("%s without the token: %d", path, a.code)
		}
	}
}

func tlsClient(t *testing.T, files testcerts.Files, withCert bool) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if withCert {
		cert, err := tls.LoadX509KeyPair(files.ClientCert, files.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func serverTLS(t *testing.T, files testcerts.Files) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(files.ServerCert, files.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	pem, _ := os.ReadFile(files.CA)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
}

// With TLS on, a plain request is sent to https; a cluster without a
// token asks for a client certificate of its CA instead.
func TestHandlerTLS(t *testing.T) {
	files, err := testcerts.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, err := Handler(Config{Source: sceneSource(t), TLS: true, ClientCert: true})
	if err != nil {
		t.Fatal(err)
	}
	plain := httptest.NewServer(h)
	defer plain.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	a := fetch(t, noFollow, "GET", plain.URL+"/api/v1/overview?x=1")
	if a.code != http.StatusPermanentRedirect || a.header.Get("Location") != "https://"+strings.TrimPrefix(plain.URL, "http://")+"/api/v1/overview?x=1" {
		t.Fatalf("plain request: %d %v", a.code, a.header)
	}
	if strings.Contains(string(a.body), "jobs") {
		t.Fatalf("the redirect carries data: %s", a.body)
	}
	secure := httptest.NewUnstartedServer(h)
	secure.TLS = serverTLS(t, files)
	secure.StartTLS()
	defer secure.Close()
	if a := fetch(t, tlsClient(t, files, false), "GET", secure.URL+"/api/v1/overview"); a.code != 401 || !strings.Contains(string(a.body), "client certificate") {
		t.Fatalf("without a client certificate: %d %s", a.code, a.body)
	}
	if a := fetch(t, tlsClient(t, files, false), "GET", secure.URL+"/"); a.code != 200 {
		t.Fatalf("the page without a client certificate: %d", a.code)
	}
	if a := fetch(t, tlsClient(t, files, true), "GET", secure.URL+"/api/v1/overview"); a.code != 200 {
		t.Fatalf("with a client certificate: %d %s", a.code, a.body)
	}
	// A token set takes the place of the certificate.
	h, _ = Handler(Config{Source: sceneSource(t), TLS: true, ClientCert: true, Token: "t"})
	secure.Config.Handler = h
	if a := fetch(t, tlsClient(t, files, false), "GET", secure.URL+"/api/v1/overview", "Authorization", "Bearer t"); a.code != 200 {
		t.Fatalf("token without a certificate: %d %s", a.code, a.body)
	}
}

func TestHandlerNeedsSource(t *testing.T) {
	if _, err := Handler(Config{}); err == nil {
		t.Fatal("a handler without a source")
	}
}
