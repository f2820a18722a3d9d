package simulate

import (
	"fmt"
	"slices"

	"github.com/trigrid/trigrid/bench/scale"
	"github.com/trigrid/trigrid/storage"
)

// defaultPrefetch is the worker's default assignments ahead per slot,
// what a report with prefetch 0 ran with.
const defaultPrefetch = 2

// ReportGrid is the grid of the partition a bench scale report counted.
func ReportGrid(rep *scale.Report) (*Grid, error) {
	if rep.Format != scale.ReportFormat {
		return nil, fmt.Errorf("simulate: a bench scale report of format %d; this build reads format %d", rep.Format, scale.ReportFormat)
	}
	sch, err := storage.ParseScheme(rep.Scheme)
	if err != nil {
		return nil, fmt.Errorf("simulate: the report's scheme: %w", err)
	}
	return NewGrid("the bench scale report of "+rep.Source, sch, rep.P, rep.Vertices, rep.Edges, rep.GroupSizes, rep.BlockEdges)
}

// Fit fits a cost model to the runs of rep with the given worker counts
// (all runs when workers is empty), each figure the median over the
// runs, so that a run slowed by a busy machine does not move it:
//
//   - kernel: a run's kernel time over the job's total work estimate,
//     ns per work unit (no per-subtask term: one partition's subtasks
//     all have about the same work, which leaves it unidentifiable);
//   - upload and load (fetch and decode): a run's times over the rows
//     and edges of the blocks its workers loaded, which the simulator
//     counts by replaying the run under its own cache model (twice, so
//     that the replay's timing uses the fitted load cost);
//   - start and end: the runs' own;
//   - the host, where the report measured the machine's other
//     processes: kernel and load figures are each divided by the
//     slowdown of its run's workers on the shared cores (Host), so the
//     model is that of a worker with its cores to itself.
//
// See docs/decisions/2026-12-01-simulator-cost-model.md.
func Fit(rep *scale.Report, workers []int) (*Model, error) {
	g, err := ReportGrid(rep)
	if err != nil {
		return nil, err
	}
	var runs []scale.Run
	for _, r := range rep.Runs {
		if len(workers) == 0 || slices.Contains(workers, r.Workers) {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("simulate: the report of %s has no runs with %v workers to fit", rep.Source, workers)
	}
	var work float64
	for _, t := range g.Subtasks() {
		work += float64(t.Work)
	}
	m := &Model{Kind: ModelKind, Format: ModelFormat, Device: rep.Device, CacheBytes: rep.CacheBytes,
		Prefetch: rep.Prefetch, OverlapLoads: rep.Device == "gpu" || rep.CoresPerWorker > 1,
		Fit: &FitInfo{Source: rep.Source, P: rep.P, Subtasks: rep.Subtasks, Runs: len(runs)}}
	if m.Prefetch == 0 {
		m.Prefetch = defaultPrefetch
	}
	host := shareOf(rep, runs)
	m.Host = host
	slow := func(r scale.Run) float64 {
		if host == nil {
			return 1
		}
		return host.Slowdown(r.Workers, r.OtherCores)
	}
	var kernel, start, end []float64
	for _, r := range runs {
		kernel = append(kernel, r.KernelSeconds*1e9/work/slow(r))
		start = append(start, r.StartSeconds*1e9)
		end = append(end, r.EndSeconds*1e9)
		if !slices.Contains(m.Fit.Workers, r.Workers) {
			m.Fit.Workers = append(m.Fit.Workers, r.Workers)
		}
	}
	slices.Sort(m.Fit.Workers)
	if work <= 0 {
		return nil, fmt.Errorf("simulate: the report of %s has no work to fit", rep.Source)
	}
	m.KernelNsPerWork = scale.Median(kernel)
	m.StartNs, m.EndNs = scale.Median(start), scale.Median(end)
	// Each worker loads each block it needs at most once while the cache
	// holds them: start from that and refine with the replays.
	m.LoadNsPerElement, m.UploadNsPerElement = 1, 1
	for range 2 {
		var load, upload []float64
		for _, r := range runs {
			res, err := Simulate(g, DefaultConfig(r.Workers, *m))
			if err != nil {
				return nil, fmt.Errorf("simulate: replaying the run of %d workers: %w", r.Workers, err)
			}
			if res.LoadElements > 0 {
				load = append(load, (r.FetchSeconds+r.DecodeSeconds)*1e9/float64(res.LoadElements)/slow(r))
				upload = append(upload, r.UploadSeconds*1e9/float64(res.LoadElements))
			}
		}
		m.LoadNsPerElement, m.UploadNsPerElement = scale.Median(load), scale.Median(upload)
	}
	return m, m.Check("the fitted model")
}

// shareOf is the host the runs' CPU workers shared, when the report says
// what the machine's other processes took (bench scale on Linux): nil
// for GPU workers and for reports without it. The fit divides each run's
// CPU costs by the slowdown its workers had on the host, with the other
// processes' cores measured during that run.
func shareOf(rep *scale.Report, runs []scale.Run) *Host {
	if rep.Device != "cpu" || rep.HostCores < 1 || rep.CoresPerWorker < 1 {
		return nil
	}
	var others []float64
	for _, r := range runs {
		if r.WorkerCPUSeconds <= 0 {
			return nil
		}
		others = append(others, r.OtherCores)
	}
	return &Host{Cores: rep.HostCores, CoresPerWorker: rep.CoresPerWorker, OtherCores: scale.Median(others)}
}
