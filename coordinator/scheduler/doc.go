// Package scheduler is the coordinator's scheduling core: a pure state
// machine in the manner of etcd's raft RawNode. Events go in as method
// calls (AddJob, WorkerJoined, Pull, Result, Heartbeat, WorkerLeft,
// CancelJob, Quarantine, Tick) and each returns the decisions it caused,
// as data; the caller carries them out. Persist DecideSubtaskDone and
// DecideSubtaskReopened first, then send assignments and cancellations.
//
// The package has no goroutines, does no I/O and never reads the clock:
// time is a count of Tick calls, and the caller decides what a tick is. A
// test keeps it so (pure_test.go): it imports no time, os, net, grpc,
// bbolt or logging, and of trigrid only api and partition. A Scheduler is
// not safe for concurrent use: one goroutine owns it (coordinator.Server's
// Run, or the in-process run in package pipeline).
//
// Accounting is exactly-once while execution is at-least-once: a subtask
// may be counted more than once (lease expiry, speculation, verification),
// but one value per subtask reaches the job's total, and only a value that
// no other worker contradicted. When two counts of a subtask disagree, a
// worker that has not counted it recounts it and the majority wins; the
// outvoted worker is reported faulty and gets no more work, and its other
// counts in unfinished jobs are discarded and recounted.
//
// Errors read "coordinator: ...": they reach users as the coordinator's,
// in a failed job's status.
package scheduler
