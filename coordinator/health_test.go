package coordinator

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// /healthz answers whatever ready says; /readyz follows ready.
func TestHealthHandler(t *testing.T) {
	var notReady error = errors.New("gRPC not serving yet")
	web := httptest.NewServer(HealthHandler(func(context.Context) error { return notReady }))
	defer web.Close()
	if code, body := getBody(t, web.URL+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, body := getBody(t, web.URL+"/readyz"); code != 503 || !strings.Contains(body, "gRPC not serving yet") {
		t.Fatalf("/readyz not ready: %d %q", code, body)
	}
	notReady = nil
	if code, body := getBody(t, web.URL+"/readyz"); code != 200 || body != "ready\n" {
		t.Fatalf("/readyz ready: %d %q", code, body)
	}
}

// A running server is ready; a stopped one is not.
func TestServerReady(t *testing.T) {
	ts := startServer(t)
	web := httptest.NewServer(HealthHandler(ts.s.Ready))
	defer web.Close()
	if code, body := getBody(t, web.URL+"/readyz"); code != 200 {
		t.Fatalf("/readyz of a running server: %d %q", code, body)
	}
	ts.cancel()
	<-ts.done
	if code, body := getBody(t, web.URL+"/readyz"); code != 503 {
		t.Fatalf("/readyz of a stopped server: %d %q", code, body)
	}
}
