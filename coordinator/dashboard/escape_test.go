package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// hostile are strings that break out of HTML text, attributes, script
// blocks, comments, templates or JSON when written unescaped.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	`'><svg onload=alert(3)>`,
	`</script><script>alert(4)</script>`,
	`<!-- --> ]]> <![CDATA[`,
	`&lt;b&gt; &amp; &#60;`,
	`javascript:alert(5)`,
	`{{.}} ${alert(6)} #{7}`,
	"line\u2028sep\u2029para",
	"nul\x00bell\x07esc\x1b",
	"bad utf-8 \xff\xfe",
	`\"}]},{"id":"forged`,
}

// hostileInput puts a hostile string in every string the dashboard shows.
func hostileInput() Input {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	h := func(i int) string { return hostile[i%len(hostile)] }
	var in Input
	in.Now, in.Tick, in.Heartbeat, in.NowTick = now, time.Second, time.Second, 10
	for i := range hostile {
		id := api.JobID(h(i))
		w := api.WorkerID(h(i + 1))
		st := api.JobStatus{Job: id, State: api.JobFailed, Source: h(i + 2), Scheme: h(i + 3), Kernel: h(i + 4),
			Err: h(i + 5), Faulty: []api.FaultyWorker{{Worker: w, Reason: h(i + 6)}}, Partitions: 1, Subtasks: 1,
			PerWorker: []api.WorkerStats{{Worker: w, Subtasks: 1}}}
		sts := []scheduler.SubtaskStatus{{State: h(i + 7), Tries: []scheduler.TryReport{
			{Attempt: 1, Worker: w, Outcome: "failed: " + h(i+8)},
			{Attempt: 2, Worker: w, Outcome: "running", Started: 3},
		}}}
		in.Jobs = append(in.Jobs, JobInput{Status: st, Subtasks: sts})
		hello := api.Hello{Worker: w, Version: h(i + 9), Devices: []api.Device{{Kind: h(i + 10), Name: h(i + 11)}}}
		in.Workers = append(in.Workers, WorkerInput{Status: scheduler.WorkerStatus{Hello: hello, Faulty: errors.New(h(i + 12))},
			Peer: h(i + 13), Heard: now})
		in.Departed = append(in.Departed, scheduler.DepartedWorker{Hello: hello, Reason: h(i + 14)})
	}
	return in
}

// collect gathers every string in a decoded JSON value.
func collect(v any, out map[string]bool) {
	switch x := v.(type) {
	case string:
		out[x] = true
	case []any:
		for _, e := range x {
			collect(e, out)
		}
	case map[string]any:
		for _, e := range x {
			collect(e, out)
		}
	}
}

// Every answer carries hostile strings only escaped: no <, > or & byte
// and no raw U+2028/2029 anywhere in the body, JSON that decodes, and
// each string back exactly (an invalid byte as U+FFFD), with nothing
// forged beside it.
func TestHandlerEscapesHostileStrings(t *testing.T) {
	in := hostileInput()
	src := func(ctx context.Context, detail api.JobID) (Input, error) { return in, nil }
	srv := serve(t, Config{Source: src})
	paths := []string{"/api/v1/overview"}
	for _, s := range hostile {
		if api.CheckID("job", s) == nil {
			paths = append(paths, "/api/v1/jobs/"+s)
		}
	}
	d, ok := Detail(in, in.Jobs[0].Status.Job)
	if !ok || len(d.InFlight) != 1 || len(d.Marked) != 1 {
		t.Fatalf("detail of a hostile job %+v", d)
	}
	bodies := [][]byte{fetch(t, srv.Client(), "GET", srv.URL+paths[0]).body}
	for _, p := range paths[1:] {
		bodies = append(bodies, fetch(t, srv.Client(), "GET", srv.URL+p).body)
	}
	rec := httptest.NewRecorder()
	writeJSON(rec, 200, d)
	bodies = append(bodies, rec.Body.Bytes())
	seen := map[string]bool{}
	for _, b := range bodies {
		if i := strings.IndexAny(string(b), "<>&\u2028\u2029"); i >= 0 {
			t.Fatalf("unescaped byte at %d: %s", i, b[max(0, i-40):min(len(b), i+40)])
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("answer is not JSON: %v: %s", err, b)
		}
		collect(v, seen)
	}
	for _, s := range hostile {
		want := string([]rune(s)) // each invalid byte as U+FFFD
		if !seen[want] && !seen["failed: "+want] {
			t.Errorf("%q did not come back intact", s)
		}
	}
	if seen["forged"] {
		t.Error("a hostile string forged a field")
	}
}

// The page writes data as text only: the script never turns a string
// into markup or code, and the page holds no inline script or handler,
// so the Content-Security-Policy (script-src 'self') leaves no way in.
func TestPageWritesTextOnly(t *testing.T) {
	js, err := os.ReadFile("assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(",
		"setAttribute", "createContextualFragment", "DOMParser", ".href", ".src", "srcdoc", "setTimeout(\"", "setInterval("} {
		if strings.Contains(string(js), bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
	html, err := os.ReadFile("assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>[^<]+</script>|\son[a-z]+=|style=`).Match(html) {
		t.Error("index.html has an inline script, event handler or style, which the policy forbids")
	}
	if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).Match(html) || strings.Contains(string(js), "://") {
		t.Error("the page loads something from another host; it must work without a network")
	}
}
