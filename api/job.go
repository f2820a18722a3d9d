package api

import "time"

// JobSpec is what a client submits: a graph file on the coordinator's
// filesystem to clean and partition, or an existing shard store.
type JobSpec struct {
	// Exactly one of Graph and Shards is set.
	Graph  string
	Shards string
	// Partitions is P for a graph; 0 chooses it from the workers' device
	// memory. Ignored for a shard store, whose manifest fixes P.
	Partitions int
	// Scheme is "hash" or "range" ("" means hash) for a graph.
	Scheme string
	// Kernel is the kernel name; "" means each worker's default.
	Kernel string
	// PerVertex asks for per-vertex triangle counts, PerEdge for per-edge
	// support as well (PerEdge implies PerVertex); the coordinator keeps
	// them for the client to fetch once the job is done.
	PerVertex, PerEdge bool
	// Format forces the graph file's format by name ("" or "auto":
	// detected from content and extension); SkipBadLines skips text lines
	// that are not edges instead of failing the job. Both apply to a
	// graph file only.
	Format       string
	SkipBadLines bool
}

// JobState is where a job is in its life.
type JobState int

const (
	JobUnknown JobState = iota
	// JobQueued waits behind other jobs; JobPreparing is reading and
	// partitioning its graph; JobRunning has subtasks out.
	JobQueued
	JobPreparing
	JobRunning
	// The final states.
	JobDone
	JobFailed
	JobCancelled
)

// String returns the state's lower-case name.
func (s JobState) String() string {
	switch s {
	case JobQueued:
		return "queued"
	case JobPreparing:
		return "preparing"
	case JobRunning:
		return "running"
	case JobDone:
		return "done"
	case JobFailed:
		return "failed"
	case JobCancelled:
		return "cancelled"
	}
	return "unknown"
}

// Final reports whether the job can no longer change.
func (s JobState) Final() bool { return s == JobDone || s == JobFailed || s == JobCancelled }

// FaultyWorker names a worker whose result disagreed with the recount of
// the same subtask.
type FaultyWorker struct {
	Worker WorkerID
	Reason string
}

// JobStatus is a job's progress and, once done, its result.
type JobStatus struct {
	Job        JobID
	State      JobState
	Source     string
	Partitions int
	Scheme     string
	Kernel     string
	// Subtask counts.
	Subtasks, Queued, Running, Done int64
	// Attempts counts every hand-out; Requeued the hand-outs after a lost,
	// expired or failed attempt; Speculated the duplicates of stragglers.
	Attempts, Requeued, Speculated int64
	// Workers is the number of distinct workers that returned a result.
	Workers int
	// Triangles is the exact total; meaningful only when State is JobDone.
	Triangles uint64
	Created   time.Time
	Elapsed   time.Duration
	// Err says why a failed job failed.
	Err    string
	Faulty []FaultyWorker
	// Recounted is how many settled subtasks were counted again because
	// their stored counts were found damaged when the coordinator
	// restarted.
	Recounted int64
	// PerWorker sums, per worker, the accepted attempts of the job's
	// settled subtasks (each subtask once), by worker name.
	PerWorker []WorkerStats
	// CoordinatorCPU is the CPU time the coordinator process spent while
	// the job ran in it, from when its subtasks were queued (after
	// preparing or resuming it) until it ended, shared by the jobs running
	// at the same time.
	CoordinatorCPU time.Duration
}

// WorkerStats sums one worker's accepted attempts in one job: every
// settled subtask adds the numbers of the attempt whose count was
// accepted, and of no other.
type WorkerStats struct {
	Worker   WorkerID
	Subtasks int64
	// The attempts' times, as in Result.
	Fetch, Decode, Upload, KernelTime, Busy time.Duration
	// FirstStart and LastEnd are on the coordinator's clock: an attempt
	// ends when its result arrives and starts that long before it as its
	// fetch, decode, upload and kernel times add up. Wall is the span
	// between them.
	FirstStart, LastEnd time.Time
	Wall                time.Duration
	// Edges sums the accepted subtasks' edges (Assignment.Edges).
	Edges int64
	// Devices splits the sums by the worker's device index, in index
	// order.
	Devices []DeviceStats
}

// DeviceStats is one device's share of a WorkerStats.
type DeviceStats struct {
	Device                   int
	Subtasks                 int64
	Busy, KernelTime, Upload time.Duration
}
