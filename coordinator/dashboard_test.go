package coordinator

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator/dashboard"
)

// The dashboard of a real server: a job counted by a worker over gRPC
// shows its exact total, a full grid, and the worker, which ListWorkers
// lists too, idle while connected and lost once it left.
func TestDashboardOfServer(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w := &fakeWorker{id: "w1", memory: 1 << 30}
	go func() { defer close(done); w.run(ctx, dial(t, ts.addr)) }()
	defer func() { cancel(); <-done }()
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2})
	if st := waitJob(t, ts.addr, id); st.State != api.JobDone || st.Triangles != want {
		t.Fatalf("job %+v, want %d triangles", st, want)
	}

	h, err := dashboard.Handler(dashboard.Config{Source: ts.s.DashboardInput})
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(h)
	defer web.Close()
	get := func(path string, v any) {
		t.Helper()
		r, err := http.Get(web.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, r.StatusCode, b)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	var o dashboard.Overview
	get("/api/v1/overview", &o)
	exact := strconv.FormatUint(want, 10)
	if len(o.Jobs) != 1 || o.Jobs[0].Triangles != exact || o.Jobs[0].TrianglesSoFar != exact || o.Jobs[0].State != "done" {
		t.Fatalf("jobs %+v, want %s triangles", o.Jobs, exact)
	}
	if len(o.Workers) != 1 || o.Workers[0].ID != "w1" || o.Workers[0].State != "idle" || o.Workers[0].Host != "127.0.0.1" ||
		o.Workers[0].Done < int(o.Jobs[0].Subtasks) || len(o.Workers[0].Devices) != 1 {
		t.Fatalf("workers %+v", o.Workers)
	}
	var d dashboard.JobDetail
	get("/api/v1/jobs/"+id, &d)
	if d.Grid == nil || d.Grid.P != 2 {
		t.Fatalf("detail %+v", d)
	}
	n := 0
	for c, v := range d.Grid.Done {
		if v != d.Grid.Total[c] {
			t.Fatalf("cell %d: %d of %d done", c, v, d.Grid.Total[c])
		}
		n += v
	}
	if int64(n) != d.Job.Subtasks || len(d.InFlight) != 0 {
		t.Fatalf("grid holds %d subtasks of %d; %d in flight", n, d.Job.Subtasks, len(d.InFlight))
	}

	jobs := pb.NewJobsClient(dial(t, ts.addr))
	list := func() []api.WorkerInfo {
		t.Helper()
		m, err := jobs.ListWorkers(context.Background(), &pb.ListWorkersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := pb.DecodeWorkers(m)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	if ws := list(); len(ws) != 1 || ws[0].Worker != "w1" || ws[0].State != api.WorkerIdle || ws[0].Counted != o.Workers[0].Done {
		t.Fatalf("ListWorkers %+v", ws)
	}
	cancel()
	<-done
	deadline := time.Now().Add(20 * time.Second)
	for {
		ws := list()
		if len(ws) == 1 && ws[0].State == api.WorkerLost && ws[0].Left != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker that left: %+v", ws)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
