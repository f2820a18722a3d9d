package main

import (
	"fmt"
	"io"

	"github.com/trigrid/trigrid/api"
)

// jobStatsJS is the --json form of a job's per-worker sums and the
// coordinator's CPU time (api.JobStatus.PerWorker, CoordinatorCPU),
// part of jobResult.
type jobStatsJS struct {
	PerWorker []workerStatsJS `json:"per_worker,omitempty"`
	// CoordinatorCPUSeconds is the coordinator process's CPU time while
	// the job ran; CoordinatorCPUNsPerSubtask the same per subtask.
	CoordinatorCPUSeconds      float64 `json:"coordinator_cpu_seconds,omitempty"`
	CoordinatorCPUNsPerSubtask float64 `json:"coordinator_cpu_ns_per_subtask,omitempty"`
}

type workerStatsJS struct {
	Worker           string          `json:"worker"`
	Subtasks         int64           `json:"subtasks"`
	Edges            int64           `json:"edges"`
	FetchSeconds     float64         `json:"fetch_seconds"`
	DecodeSeconds    float64         `json:"decode_seconds"`
	UploadSeconds    float64         `json:"upload_seconds"`
	KernelSeconds    float64         `json:"kernel_seconds"`
	BusySeconds      float64         `json:"busy_seconds"`
	WallSeconds      float64         `json:"wall_seconds"`
	FirstStartUnixMs int64           `json:"first_start_unix_ms,omitempty"`
	LastEndUnixMs    int64           `json:"last_end_unix_ms,omitempty"`
	Devices          []deviceStatsJS `json:"devices,omitempty"`
}

type deviceStatsJS struct {
	Device        int     `json:"device"`
	Subtasks      int64   `json:"subtasks"`
	BusySeconds   float64 `json:"busy_seconds"`
	KernelSeconds float64 `json:"kernel_seconds"`
	UploadSeconds float64 `json:"upload_seconds"`
}

func statsOf(st api.JobStatus) jobStatsJS {
	var r jobStatsJS
	r.CoordinatorCPUSeconds = st.CoordinatorCPU.Seconds()
	if st.Subtasks > 0 {
		r.CoordinatorCPUNsPerSubtask = float64(st.CoordinatorCPU.Nanoseconds()) / float64(st.Subtasks)
	}
	for _, w := range st.PerWorker {
		js := workerStatsJS{Worker: string(w.Worker), Subtasks: w.Subtasks, Edges: w.Edges,
			FetchSeconds: w.Fetch.Seconds(), DecodeSeconds: w.Decode.Seconds(), UploadSeconds: w.Upload.Seconds(),
			KernelSeconds: w.KernelTime.Seconds(), BusySeconds: w.Busy.Seconds(), WallSeconds: w.Wall.Seconds()}
		if !w.FirstStart.IsZero() {
			js.FirstStartUnixMs = w.FirstStart.UnixMilli()
		}
		if !w.LastEnd.IsZero() {
			js.LastEndUnixMs = w.LastEnd.UnixMilli()
		}
		for _, d := range w.Devices {
			js.Devices = append(js.Devices, deviceStatsJS{Device: d.Device, Subtasks: d.Subtasks,
				BusySeconds: d.Busy.Seconds(), KernelSeconds: d.KernelTime.Seconds(), UploadSeconds: d.Upload.Seconds()})
		}
		r.PerWorker = append(r.PerWorker, js)
	}
	return r
}

// printJobStats prints a finished job's per-worker sums and the
// coordinator's CPU time, for people.
func printJobStats(out io.Writer, st api.JobStatus) {
	if st.CoordinatorCPU > 0 && st.Subtasks > 0 {
		fmt.Fprintf(out, "coordinator %.3f s CPU (%.1f µs per subtask)\n", st.CoordinatorCPU.Seconds(),
			float64(st.CoordinatorCPU.Nanoseconds())/float64(st.Subtasks)/1e3)
	}
	for _, w := range st.PerWorker {
		fmt.Fprintf(out, "worker      %s: %d subtasks, busy %.3f s (kernel %.3f, upload %.3f), fetch %.3f s, decode %.3f s over %.3f s\n",
			w.Worker, w.Subtasks, w.Busy.Seconds(), w.KernelTime.Seconds(), w.Upload.Seconds(), w.Fetch.Seconds(), w.Decode.Seconds(), w.Wall.Seconds())
	}
}
