// Package coordinator schedules the subtasks of triangle-counting jobs on
// workers and sums each subtask's count exactly once.
//
// Scheduler is the core: a pure state machine in the manner of etcd's raft
// RawNode. It has no goroutines, does no I/O and never reads the clock;
// time is a count of Tick calls. Every event method returns the decisions
// the event caused, and the caller carries them out: it persists
// DecideSubtaskDone and DecideSubtaskReopened first, then sends
// assignments and cancellations. A Scheduler is not safe for concurrent
// use: one goroutine owns it (Server.Run, or the in-process run in package
// pipeline).
//
// Accounting is exactly-once while execution is at-least-once: a subtask
// may be counted more than once (lease expiry, speculation, verification),
// but one value per subtask reaches the job's total, and only a value that
// no other worker contradicted. When two counts of a subtask disagree, a
// worker that has not counted it recounts it and the majority wins; the
// outvoted worker is reported faulty and gets no more work, and its other
// counts in unfinished jobs are discarded and recounted.
//
// StateDB keeps jobs and settled counts in bbolt, each value checksummed,
// so that a restarted coordinator resumes without recounting and never
// sums a damaged count. Server is the gRPC service
// (workers' Work streams and shard fetches, clients' jobs), with
// Prometheus metrics and a status page.
//
// Dependency rule: coordinator imports api and the packages below it
// (partition, storage, graph/edgeio), never worker or pipeline; the
// command injects the pipeline's partitioner through Config.Partitioner.
package coordinator
