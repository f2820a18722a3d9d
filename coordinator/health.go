package coordinator

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// StatusHandler serves a read-only status page for people: "/" lists the
// jobs and the connected workers, "/job?id=ID" a job's subtasks with their
// attempts. "?format=json" gives the same data as JSON. Mount it beside
// /metrics; it shows job sources and worker names, so serve it where
// metrics may be seen.
func (s *Server) StatusHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.serveOverview)
	mux.HandleFunc("/job", s.serveJob)
	return mux
}

type overview struct {
	Jobs    []api.JobStatus
	Workers []workerView
}

type workerView struct {
	ID      api.WorkerID
	Devices []api.Device
	Slots   int
	Running int
	Counted int
	Failed  int
	Faulty  string
}

type jobView struct {
	Job      api.JobStatus
	Subtasks []scheduler.SubtaskStatus
}

func (s *Server) serveOverview(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	var v overview
	err := s.call(r.Context(), func() {
		s.flush()
		for _, id := range s.order {
			v.Jobs = append(v.Jobs, s.status(s.jobs[id]))
		}
		for _, ws := range s.sched.Workers() {
			wv := workerView{ID: ws.Hello.Worker, Devices: ws.Hello.Devices, Slots: ws.Hello.Slots,
				Running: ws.Running, Counted: ws.Counted, Failed: ws.Failed}
			if ws.Faulty != nil {
				wv.Faulty = ws.Faulty.Error()
			}
			v.Workers = append(v.Workers, wv)
		}
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	render(w, r, overviewPage, v)
}

func (s *Server) serveJob(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if err := api.CheckID("job id", id); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var v jobView
	found := false
	err := s.call(r.Context(), func() {
		s.flush()
		j := s.jobs[api.JobID(id)]
		if j == nil {
			return
		}
		found = true
		v.Job = s.status(j)
		v.Subtasks, _ = s.sched.Subtasks(api.JobID(id))
	})
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case !found:
		http.Error(w, "no such job: "+strconv.Quote(id), http.StatusNotFound)
	default:
		render(w, r, jobPage, v)
	}
}

func render(w http.ResponseWriter, r *http.Request, t *template.Template, v any) {
	if r.URL.Query().Get("format") == "json" {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(v)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	t.Execute(w, v)
}

var pageFuncs = template.FuncMap{
	"secs": func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) },
}

const pageHead = `<!doctype html><html><head><meta charset="utf-8"><title>trigrid coordinator</title>
<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td.l,th.l{text-align:left}</style></head><body>`

var overviewPage = template.Must(template.New("overview").Funcs(pageFuncs).Parse(pageHead + `
<h1>trigrid coordinator</h1>
<h2>Jobs</h2>
<table><tr><th class="l">job</th><th class="l">state</th><th class="l">source</th><th>P</th><th>done</th><th>running</th><th>queued</th><th>attempts</th><th>requeued</th><th>speculated</th><th>workers</th><th>triangles</th><th>seconds</th><th class="l">error</th></tr>
{{range .Jobs}}<tr><td class="l"><a href="job?id={{.Job}}">{{.Job}}</a></td><td class="l">{{.State}}</td><td class="l">{{.Source}}</td><td>{{.Partitions}}</td><td>{{.Done}}/{{.Subtasks}}</td><td>{{.Running}}</td><td>{{.Queued}}</td><td>{{.Attempts}}</td><td>{{.Requeued}}</td><td>{{.Speculated}}</td><td>{{.Workers}}</td><td>{{if eq .State.String "done"}}{{.Triangles}}{{end}}</td><td>{{secs .Elapsed}}</td><td class="l">{{.Err}}{{range .Faulty}}<br>faulty {{.Worker}}: {{.Reason}}{{end}}</td></tr>
{{end}}</table>
<h2>Workers</h2>
<table><tr><th class="l">worker</th><th class="l">devices</th><th>slots</th><th>running</th><th>counted</th><th>failed</th><th class="l">faulty</th></tr>
{{range .Workers}}<tr><td class="l">{{.ID}}</td><td class="l">{{range .Devices}}{{.Kind}} {{.Name}} {{.Memory}} B; {{end}}</td><td>{{.Slots}}</td><td>{{.Running}}</td><td>{{.Counted}}</td><td>{{.Failed}}</td><td class="l">{{.Faulty}}</td></tr>
{{end}}</table></body></html>`))

var jobPage = template.Must(template.New("job").Funcs(pageFuncs).Parse(pageHead + `
<p><a href="./">all jobs</a></p>
<h1>job {{.Job.Job}}: {{.Job.State}}</h1>
<p>{{.Job.Source}}, P = {{.Job.Partitions}} ({{.Job.Scheme}}), {{.Job.Done}}/{{.Job.Subtasks}} done{{if eq .Job.State.String "done"}}, {{.Job.Triangles}} triangles{{end}}. {{.Job.Err}}</p>
<table><tr><th>#</th><th>I</th><th>J</th><th>K</th><th class="l">state</th><th>triangles</th><th class="l">attempts</th></tr>
{{range .Subtasks}}<tr><td>{{.Index}}</td><td>{{.I}}</td><td>{{.J}}</td><td>{{.K}}</td><td class="l">{{.State}}{{if .Restored}} (restored){{end}}</td><td>{{if eq .State "done"}}{{.Triangles}}{{end}}</td><td class="l">{{range .Tries}}{{.Attempt}} {{.Worker}}: {{.Outcome}}; {{end}}</td></tr>
{{end}}</table></body></html>`))

// Ready reports whether the coordinator can take work: its state was
// loaded (NewServer restored it) and its loop answers within ctx. It
// fails once the server stops.
func (s *Server) Ready(ctx context.Context) error {
	return s.call(ctx, func() {})
}

// HealthHandler serves the probes of a process manager (Kubernetes):
// /healthz answers 200 while the process serves HTTP at all (liveness);
// /readyz answers 200 when ready returns nil and 503 with its error
// otherwise (readiness). ready gets the request's context, bounded to
// 2 s. Both answer a short text body and are cheap enough to poll.
func HealthHandler(ready func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("not ready: " + err.Error() + "\n"))
			return
		}
		w.Write([]byte("ready\n"))
	})
	return mux
}
