package coordinator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api/pb"
)

func TestStatusPage(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t)
	startWorkers(t, ts.addr, &fakeWorker{id: "w1"})
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2})
	waitJob(t, ts.addr, id)
	web := httptest.NewServer(ts.s.StatusHandler())
	defer web.Close()
	get := func(path string, code int) string {
		t.Helper()
		r, err := http.Get(web.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != code {
			t.Fatalf("GET %s: %d %s, want %d", path, r.StatusCode, b, code)
		}
		return string(b)
	}
	page := get("/", 200)
	for _, s := range []string{id, "w1", "done", "48260"} {
		if !strings.Contains(page, s) {
			t.Errorf("overview lacks %q", s)
		}
	}
	var v jobView
	if err := json.Unmarshal([]byte(get("/job?id="+id+"&format=json", 200)), &v); err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, st := range v.Subtasks {
		if st.State != "done" || len(st.Tries) == 0 {
			t.Fatalf("subtask %+v", st)
		}
		sum += st.Triangles
	}
	if sum != want || v.Job.Triangles != want {
		t.Fatalf("subtasks sum to %d, job %d, want %d", sum, v.Job.Triangles, want)
	}
	if !strings.Contains(get("/job?id="+id, 200), "<td>") {
		t.Error("job page has no rows")
	}
	get("/job?id=../x", 400)
	get("/job?id=nope", 404)
	get("/other", 404)
}
