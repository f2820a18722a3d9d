package coordinator

import (
	"context"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// gathered returns the registry's families by name.
func gathered(t *testing.T, ts *testServer) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := ts.s.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// jobGauges returns a family's samples of one job by their state label
// ("" for a gauge without one).
func jobGauges(f *dto.MetricFamily, job string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		var id, state string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "job_id":
				id = l.GetValue()
			case "state":
				state = l.GetValue()
			}
		}
		if id == job {
			out[state] = m.GetGauge().GetValue()
		}
	}
	return out
}

// A job counted by three workers shows in the per-job gauges with all its
// subtasks done and the exact count, in the attempt latency histogram
// once per result, and in the result handling one once per message; the
// state database's commits are timed.
func TestServerJobMetrics(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) { c.StateDir = t.TempDir() })
	startWorkers(t, ts.addr, &fakeWorker{id: "w1"}, &fakeWorker{id: "w2"}, &fakeWorker{id: "w3"})
	id := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Scheme: "hash"})
	st := waitJob(t, ts.addr, id)
	if st.State != api.JobDone || st.Triangles != want {
		t.Fatalf("status %+v, want done with %d", st, want)
	}
	fams := gathered(t, ts)
	sub := jobGauges(fams["trigrid_coordinator_job_subtasks"], id)
	if sub["done"] != float64(st.Subtasks) || sub["queued"] != 0 || sub["running"] != 0 {
		t.Errorf("job_subtasks %v, want %d done", sub, st.Subtasks)
	}
	if tri := jobGauges(fams["trigrid_coordinator_job_triangles"], id); tri[""] != float64(want) {
		t.Errorf("job_triangles %v, want %d", tri, want)
	}
	var results uint64
	for _, m := range fams["trigrid_coordinator_results_total"].GetMetric() {
		results += uint64(m.GetCounter().GetValue())
	}
	if h := fams["trigrid_coordinator_attempt_duration_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleCount() != results || results < uint64(st.Subtasks) {
		t.Errorf("attempt_duration_seconds: %d observations, %d results, %d subtasks", h.GetSampleCount(), results, st.Subtasks)
	}
	// One observation per message of results: a result alone or a batch.
	if h := fams["trigrid_coordinator_result_handling_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleCount() == 0 || h.GetSampleCount() > results {
		t.Errorf("result_handling_seconds: %d observations, %d results", h.GetSampleCount(), results)
	}
	if h := fams["trigrid_coordinator_state_commit_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleCount() == 0 || h.GetSampleSum() <= 0 {
		t.Errorf("state_commit_seconds: %d commits timed", h.GetSampleCount())
	}
}

// A job's series go when the scheduler forgets the job, and come for
// jobs it holds.
func TestServerForgottenJobLeavesMetrics(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.KeepFinished = 1; c.Logger = nil })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	conn := dial(t, ts.addr)
	wg.Go(func() { instantWorker(ctx, conn, "w1") })
	t.Cleanup(func() { cancel(); wg.Wait() })
	waitSessions(t, ts, 1)
	tasks := testTasks(2)
	n := uint64(len(tasks))
	for _, id := range []api.JobID{"first", "second"} {
		ts.s.call(ctx, func() {
			j := &jobInfo{rec: JobRecord{ID: id, Subtasks: tasks, Created: time.Now()}, state: api.JobQueued, workers: map[api.WorkerID]bool{}}
			ts.s.jobs[id] = j
			ts.s.order = append(ts.s.order, id)
			ts.s.addToScheduler(j, nil)
		})
		if st := waitJob(t, ts.addr, string(id)); st.State != api.JobDone {
			t.Fatalf("job %s: %+v", id, st)
		}
		fams := gathered(t, ts)
		// instantWorker counts subtask i as i+1.
		if tri := jobGauges(fams["trigrid_coordinator_job_triangles"], string(id)); tri[""] != float64(n*(n+1)/2) {
			t.Errorf("job %s: job_triangles %v, want %d", id, tri, n*(n+1)/2)
		}
	}
	fams := gathered(t, ts)
	for _, name := range []string{"trigrid_coordinator_job_subtasks", "trigrid_coordinator_job_triangles"} {
		if got := jobGauges(fams[name], "first"); len(got) != 0 {
			t.Errorf("%s of the forgotten job: %v", name, got)
		}
		if got := jobGauges(fams[name], "second"); len(got) == 0 {
			t.Errorf("%s of the kept job: none", name)
		}
	}
}

// descRecorder is a Registerer that keeps the names its collectors
// describe.
type descRecorder struct{ names map[string]bool }

var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (d *descRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		if m := descName.FindStringSubmatch(desc.String()); m != nil {
			d.names[m[1]] = true
		}
	}
	return nil
}
func (d *descRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		d.Register(c)
	}
}
func (d *descRecorder) Unregister(prometheus.Collector) bool { return false }

// docSeries returns the series docs/metrics.md's tables list with prefix.
func docSeries(t *testing.T, prefix string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(" + prefix + "[a-z_]+)` \\|")
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			out[m[1]] = true
		}
	}
	return out
}

// docs/metrics.md lists exactly the coordinator's series (the multi-process
// test checks their types against a real scrape).
func TestMetricsDocumented(t *testing.T) {
	rec := &descRecorder{names: map[string]bool{}}
	if _, err := newMetrics(rec); err != nil {
		t.Fatal(err)
	}
	rec.Register(newJobCollector(nil))
	docs := docSeries(t, "trigrid_coordinator_")
	if len(rec.names) < 20 || !maps.Equal(rec.names, docs) {
		t.Errorf("registered %v\ndocumented %v", slices.Sorted(maps.Keys(rec.names)), slices.Sorted(maps.Keys(docs)))
	}
}
