package scale

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// ReportFormat is the version of Report's JSON; bench simulate refuses
// others.
const ReportFormat = 1

// Report is what one `bench scale` measured: the graph, every run, and
// per worker count the medians. Its JSON (scale.json in --out) is the
// input `bench simulate` fits its cost model to.
type Report struct {
	Format int `json:"format"`
	// Source is the graph file or store URL given; Store the shard store
	// the jobs counted (a temporary one for a graph file).
	Source string `json:"source"`
	Store  string `json:"store"`
	Scheme string `json:"scheme"`
	P      int    `json:"p"`
	// Vertices and Edges are the forward graph's, from the manifest;
	// Subtasks the job's subtask count.
	Vertices int64 `json:"vertices"`
	Edges    int64 `json:"edges"`
	Subtasks int   `json:"subtasks"`
	// GroupSizes (P) and BlockEdges (P x P, row-major) are the
	// manifest's block statistics, so that the report alone is enough
	// to simulate its runs.
	GroupSizes []int64 `json:"group_sizes"`
	BlockEdges []int64 `json:"block_edges"`
	// Triangles is the independent count every job matched; Reference
	// says how it was made.
	Triangles uint64 `json:"triangles"`
	Reference string `json:"reference"`
	// Device is "cpu" or "gpu"; CoresPerWorker the cores each CPU worker
	// counted on; HostCores this machine's.
	Device         string `json:"device"`
	CoresPerWorker int    `json:"cores_per_worker,omitempty"`
	HostCores      int    `json:"host_cores"`
	// CacheBytes is the workers' block cache (worker --cache); Prefetch
	// their assignments pulled ahead per slot, 0 when they chose.
	CacheBytes int64 `json:"cache_bytes"`
	Prefetch   int   `json:"prefetch,omitempty"`
	Runs       []Run `json:"runs"`
	Rows       []Row `json:"rows"`
}

// Run is one job on a fresh coordinator with Workers fresh workers.
type Run struct {
	Workers int    `json:"workers"`
	Repeat  int    `json:"repeat"`
	Job     string `json:"job"`
	// Triangles is the job's count (equal to Report.Triangles, or the
	// bench failed).
	Triangles uint64 `json:"triangles"`
	// JobSeconds is the coordinator's job time (submitted to done);
	// WallSeconds the bench's, from the submit call to the final status.
	JobSeconds  float64 `json:"job_s"`
	WallSeconds float64 `json:"wall_s"`
	// StartSeconds is from the job's creation to the first accepted
	// attempt's start, EndSeconds from the last one's end to the job's
	// end (both on the coordinator's clock).
	StartSeconds float64 `json:"start_s"`
	EndSeconds   float64 `json:"end_s"`
	// Sums over the workers of their accepted attempts' times.
	KernelSeconds float64 `json:"kernel_s"`
	FetchSeconds  float64 `json:"fetch_s"`
	DecodeSeconds float64 `json:"decode_s"`
	UploadSeconds float64 `json:"upload_s"`
	BusySeconds   float64 `json:"busy_s"`
	// IR is the time imbalance ratio, max over min busy time over the
	// run's workers; nil when a worker counted nothing (infinite).
	IR *float64 `json:"ir"`
	// TEPS is forward edges per second of job time.
	TEPS                  float64 `json:"teps"`
	CoordinatorCPUSeconds float64 `json:"coordinator_cpu_s"`
	Attempts              int64   `json:"attempts"`
	Requeued              int64   `json:"requeued"`
	Speculated            int64   `json:"speculated"`
	// WorkerCPUSeconds is the CPU time the workers' processes used
	// during the job (submit to final status); WorkerCores that over the
	// bench's wall time, the cores they had on average; OtherCores the
	// same of everything else the host ran meanwhile (all its cores'
	// busy time less the workers': the coordinator, the bench, other
	// processes). All 0 where the system does not say (Linux's /proc
	// does).
	WorkerCPUSeconds float64     `json:"worker_cpu_s,omitempty"`
	WorkerCores      float64     `json:"worker_cores,omitempty"`
	OtherCores       float64     `json:"other_cores,omitempty"`
	PerWorker        []WorkerRun `json:"per_worker"`
}

// WorkerRun is one worker's part of a run.
type WorkerRun struct {
	Worker   string `json:"worker"`
	Subtasks int64  `json:"subtasks"`
	// Edges sums the base edges of its accepted subtasks.
	Edges         int64   `json:"edges"`
	FetchSeconds  float64 `json:"fetch_s"`
	DecodeSeconds float64 `json:"decode_s"`
	UploadSeconds float64 `json:"upload_s"`
	KernelSeconds float64 `json:"kernel_s"`
	BusySeconds   float64 `json:"busy_s"`
	// WallSeconds is from its first accepted attempt's start to its last
	// one's end.
	WallSeconds float64 `json:"wall_s"`
}

// Row is the summary of one worker count: medians over its repeats, and
// the speedup and efficiency of the median job time against one worker.
type Row struct {
	Workers       int     `json:"workers"`
	Runs          int     `json:"runs"`
	JobSeconds    float64 `json:"job_s"`
	MinJobSeconds float64 `json:"min_job_s"`
	MaxJobSeconds float64 `json:"max_job_s"`
	KernelSeconds float64 `json:"kernel_s"`
	FetchSeconds  float64 `json:"fetch_s"`
	DecodeSeconds float64 `json:"decode_s"`
	UploadSeconds float64 `json:"upload_s"`
	// Speedup is T(1) / T(N) of the median job times; Efficiency
	// Speedup / N.
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`
	// IR is the median of the runs' IR; nil when that median is
	// infinite.
	IR   *float64 `json:"ir"`
	TEPS float64  `json:"teps"`
	// WorkerCores and OtherCores are the runs' medians (Run).
	WorkerCores float64 `json:"worker_cores,omitempty"`
	OtherCores  float64 `json:"other_cores,omitempty"`
}

// Imbalance is max(busy) / min(busy) over workers (TRUST's IR), with one
// entry per worker that took part; a worker that counted nothing counts
// as 0 busy, which makes the ratio infinite (false). All zero is 1.
func Imbalance(busy []float64) (float64, bool) {
	if len(busy) == 0 {
		return 0, false
	}
	lo, hi := slices.Min(busy), slices.Max(busy)
	switch {
	case hi == 0:
		return 1, true
	case lo <= 0:
		return 0, false
	}
	return hi / lo, true
}

// TEPS is edges per second; 0 for a time that is not positive.
func TEPS(edges int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(edges) / seconds
}

// Summarize folds runs into one row per worker count, in ascending
// order. Runs must include one worker: speedup is against it. Edges is
// the graph's forward edge count, for TEPS.
func Summarize(runs []Run, edges int64) ([]Row, error) {
	by := map[int][]Run{}
	for _, r := range runs {
		if r.Workers < 1 {
			return nil, fmt.Errorf("bench scale: a run with %d workers", r.Workers)
		}
		by[r.Workers] = append(by[r.Workers], r)
	}
	if len(by[1]) == 0 {
		return nil, fmt.Errorf("bench scale: no run with 1 worker: speedup and efficiency are against one worker")
	}
	ns := make([]int, 0, len(by))
	for n := range by {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	rows := make([]Row, 0, len(ns))
	for _, n := range ns {
		rs := by[n]
		pick := func(get func(Run) float64) float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = get(r)
			}
			return Median(v)
		}
		row := Row{Workers: n, Runs: len(rs),
			JobSeconds:    pick(func(r Run) float64 { return r.JobSeconds }),
			KernelSeconds: pick(func(r Run) float64 { return r.KernelSeconds }),
			FetchSeconds:  pick(func(r Run) float64 { return r.FetchSeconds }),
			DecodeSeconds: pick(func(r Run) float64 { return r.DecodeSeconds }),
			UploadSeconds: pick(func(r Run) float64 { return r.UploadSeconds }),
			WorkerCores:   pick(func(r Run) float64 { return r.WorkerCores }),
			OtherCores:    pick(func(r Run) float64 { return r.OtherCores }),
			MinJobSeconds: math.Inf(1), MaxJobSeconds: math.Inf(-1),
		}
		for _, r := range rs {
			row.MinJobSeconds = min(row.MinJobSeconds, r.JobSeconds)
			row.MaxJobSeconds = max(row.MaxJobSeconds, r.JobSeconds)
		}
		if ir := pick(func(r Run) float64 { return irOrInf(r.IR) }); !math.IsInf(ir, 1) {
			row.IR = &ir
		}
		row.TEPS = TEPS(edges, row.JobSeconds)
		rows = append(rows, row)
	}
	base := rows[0].JobSeconds
	for i := range rows {
		if rows[i].JobSeconds > 0 {
			rows[i].Speedup = base / rows[i].JobSeconds
			rows[i].Efficiency = rows[i].Speedup / float64(rows[i].Workers)
		}
	}
	return rows, nil
}

func irOrInf(ir *float64) float64 {
	if ir == nil {
		return math.Inf(1)
	}
	return *ir
}

// Median is the middle value of v (the mean of the two middle ones for
// an even count; +Inf entries sort last); v is sorted in place. It is 0
// for no values.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
