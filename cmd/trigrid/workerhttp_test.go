package main

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/worker"
)

// The worker's listener: alive at once, ready only once connected, and
// not ready again when the connection says so; /metrics serves the
// worker's series and the runtime's and process's collectors; beyond
// loopback it needs --insecure.
func TestWorkerHTTP(t *testing.T) {
	var r workerReadiness
	reg := processRegistry()
	if _, err := worker.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	srv, addr, err := serveWorkerHTTP("127.0.0.1:0", false, r.ready, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "looking for the coordinator") {
		t.Fatalf("/readyz before connecting: %d %q", code, body)
	}
	var connErr error
	r.set(func() error { return connErr })
	if code, body := get("/readyz"); code != 200 {
		t.Fatalf("/readyz connected: %d %q", code, body)
	}
	connErr = errors.New("the coordinator's stream ended")
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "stream ended") {
		t.Fatalf("/readyz disconnected: %d %q", code, body)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "go_goroutines") || !strings.Contains(body, "process_cpu_seconds_total") ||
		!strings.Contains(body, `trigrid_worker_subtasks_total{outcome="counted"} 0`) {
		t.Fatalf("/metrics: %d %.200q", code, body)
	}
	if _, _, err := serveWorkerHTTP("0.0.0.0:0", false, r.ready, reg); err == nil || !strings.Contains(err.Error(), "--insecure") {
		t.Fatalf("0.0.0.0 without --insecure: %v", err)
	}
}
