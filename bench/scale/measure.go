package scale

import (
	"fmt"
	"time"

	"github.com/trigrid/trigrid/api"
)

// measure turns a finished job's status into a Run of n workers. The
// per-worker statistics must account for every subtask once and name no
// more workers than the cluster has: otherwise they are an error, not a
// figure.
func measure(st api.JobStatus, n int, edges int64) (Run, error) {
	run := Run{Workers: n, Job: string(st.Job), Triangles: st.Triangles, JobSeconds: st.Elapsed.Seconds(),
		CoordinatorCPUSeconds: st.CoordinatorCPU.Seconds(), Attempts: st.Attempts, Requeued: st.Requeued,
		Speculated: st.Speculated, TEPS: TEPS(edges, st.Elapsed.Seconds())}
	if len(st.PerWorker) == 0 && st.Subtasks > 0 {
		return run, fmt.Errorf("bench scale: job %s: the coordinator reported no per-worker statistics (it predates them?)", st.Job)
	}
	if len(st.PerWorker) > n {
		return run, fmt.Errorf("bench scale: job %s: statistics of %d workers from a cluster of %d", st.Job, len(st.PerWorker), n)
	}
	var first, last time.Time
	var total int64
	busy := make([]float64, n) // workers that counted nothing stay 0
	for x, w := range st.PerWorker {
		wr := WorkerRun{Worker: string(w.Worker), Subtasks: w.Subtasks, Edges: w.Edges,
			FetchSeconds: w.Fetch.Seconds(), DecodeSeconds: w.Decode.Seconds(), UploadSeconds: w.Upload.Seconds(),
			KernelSeconds: w.KernelTime.Seconds(), BusySeconds: w.Busy.Seconds(), WallSeconds: w.Wall.Seconds()}
		if w.Busy == 0 {
			// A worker that does not measure busy time apart: busy is its
			// upload and kernel time, as api.Result defines it.
			wr.BusySeconds = (w.Upload + w.KernelTime).Seconds()
		}
		run.PerWorker = append(run.PerWorker, wr)
		run.FetchSeconds += wr.FetchSeconds
		run.DecodeSeconds += wr.DecodeSeconds
		run.UploadSeconds += wr.UploadSeconds
		run.KernelSeconds += wr.KernelSeconds
		run.BusySeconds += wr.BusySeconds
		busy[x] = wr.BusySeconds
		total += w.Subtasks
		if first.IsZero() || w.FirstStart.Before(first) {
			first = w.FirstStart
		}
		if w.LastEnd.After(last) {
			last = w.LastEnd
		}
	}
	if total != st.Subtasks {
		return run, fmt.Errorf("bench scale: job %s: the workers' statistics hold %d subtasks, the job %d", st.Job, total, st.Subtasks)
	}
	if ir, ok := Imbalance(busy); ok {
		run.IR = &ir
	}
	if !first.IsZero() {
		run.StartSeconds = max(first.Sub(st.Created).Seconds(), 0)
		run.EndSeconds = max(st.Created.Add(st.Elapsed).Sub(last).Seconds(), 0)
	}
	return run, nil
}
