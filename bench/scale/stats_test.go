package scale

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/bench/report"
)

func fp(v float64) *float64 { return &v }

// Speedup, efficiency, IR and TEPS of a hand-made set of runs: the medians
// of three repeats at N = 1 (10, 12, 11 s: 11), two at N = 2 (6, 5 s:
// 5.5) and one at N = 4 with an idle worker (IR infinite).
func TestSummarize(t *testing.T) {
	runs := []Run{
		{Workers: 2, JobSeconds: 6, KernelSeconds: 9, IR: fp(1.2)},
		{Workers: 1, JobSeconds: 10, KernelSeconds: 9, IR: fp(1)},
		{Workers: 4, JobSeconds: 4, KernelSeconds: 8, IR: nil},
		{Workers: 1, JobSeconds: 12, KernelSeconds: 11, IR: fp(1)},
		{Workers: 2, JobSeconds: 5, KernelSeconds: 10, IR: fp(1.1)},
		{Workers: 1, JobSeconds: 11, KernelSeconds: 10, IR: fp(1)},
	}
	rows, err := Summarize(runs, 22_000_000)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		n                   int
		job, min, max, kern float64
		speedup, eff, ir    float64
		teps                float64
		runs                int
	}{
		{1, 11, 10, 12, 10, 1, 1, 1, 2e6, 3},
		{2, 5.5, 5, 6, 9.5, 2, 1, 1.15, 4e6, 2},
		{4, 4, 4, 4, 8, 2.75, 0.6875, math.Inf(1), 5.5e6, 1},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for i, w := range want {
		r := rows[i]
		if r.Workers != w.n || r.Runs != w.runs || !near(r.JobSeconds, w.job) || !near(r.MinJobSeconds, w.min) ||
			!near(r.MaxJobSeconds, w.max) || !near(r.KernelSeconds, w.kern) || !near(r.Speedup, w.speedup) ||
			!near(r.Efficiency, w.eff) || !near(r.TEPS, w.teps) {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
		if math.IsInf(w.ir, 1) != (r.IR == nil) || (r.IR != nil && !near(*r.IR, w.ir)) {
			t.Errorf("row %d: IR %v, want %v", i, report.IR(r.IR), w.ir)
		}
	}
	if _, err := Summarize(runs[:1], 1); err == nil || !strings.Contains(err.Error(), "1 worker") {
		t.Errorf("no N = 1 run: %v", err)
	}
}

func TestImbalanceAndTEPS(t *testing.T) {
	for _, tc := range []struct {
		busy []float64
		ir   float64
		ok   bool
	}{
		{[]float64{2, 3, 4}, 2, true},
		{[]float64{5}, 1, true},
		{[]float64{0, 0}, 1, true},
		{[]float64{0, 3}, 0, false},
		{nil, 0, false},
	} {
		ir, ok := Imbalance(tc.busy)
		if ir != tc.ir || ok != tc.ok {
			t.Errorf("Imbalance(%v) = %v, %v; want %v, %v", tc.busy, ir, ok, tc.ir, tc.ok)
		}
	}
	if v := TEPS(3_000_000, 1.5); v != 2e6 {
		t.Errorf("TEPS = %v, want 2e6", v)
	}
	if v := TEPS(10, 0); v != 0 {
		t.Errorf("TEPS at 0 s = %v", v)
	}
}

// measure takes the job's per-worker statistics as they are and checks
// that they account for every subtask.
func TestMeasure(t *testing.T) {
	created := time.Unix(1000, 0)
	st := api.JobStatus{Job: "j1", State: api.JobDone, Triangles: 42, Subtasks: 3, Created: created, Elapsed: 10 * time.Second,
		Attempts: 4, Speculated: 1, CoordinatorCPU: 300 * time.Millisecond,
		PerWorker: []api.WorkerStats{
			{Worker: "a", Subtasks: 2, Edges: 70, Fetch: time.Second, Decode: 2 * time.Second, KernelTime: 6 * time.Second,
				Busy: 6 * time.Second, FirstStart: created.Add(time.Second), LastEnd: created.Add(9 * time.Second), Wall: 8 * time.Second},
			{Worker: "b", Subtasks: 1, Edges: 30, KernelTime: 2 * time.Second, Upload: time.Second,
				FirstStart: created.Add(2 * time.Second), LastEnd: created.Add(5 * time.Second), Wall: 3 * time.Second},
		}}
	run, err := measure(st, 3, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if run.JobSeconds != 10 || run.KernelSeconds != 8 || run.BusySeconds != 9 || run.FetchSeconds != 1 || run.DecodeSeconds != 2 ||
		run.StartSeconds != 1 || run.EndSeconds != 1 || run.TEPS != 100 || run.CoordinatorCPUSeconds != 0.3 || run.Speculated != 1 {
		t.Errorf("run %+v", run)
	}
	if run.IR != nil {
		t.Errorf("a cluster of 3 with 2 counting: IR %v, want infinite", *run.IR)
	}
	// b reports no busy time of its own: its upload and kernel time are.
	run, err = measure(st, 2, 1000)
	if err != nil || run.IR == nil || *run.IR != 2 || run.PerWorker[1].BusySeconds != 3 {
		t.Errorf("two workers: IR %v, %v; want 6/3 = 2", report.IR(run.IR), err)
	}
	if _, err := measure(st, 1, 1000); err == nil || !strings.Contains(err.Error(), "2 workers from a cluster of 1") {
		t.Errorf("more workers than the cluster: %v", err)
	}
	st.Subtasks = 4
	if _, err := measure(st, 2, 1000); err == nil || !strings.Contains(err.Error(), "hold 3 subtasks, the job 4") {
		t.Errorf("a subtask missing from the statistics: %v", err)
	}
	st.PerWorker = nil
	if _, err := measure(st, 2, 1000); err == nil || !strings.Contains(err.Error(), "per-worker") {
		t.Errorf("no statistics: %v", err)
	}
}
