// Package coordinator schedules the subtasks of triangle-counting jobs on
// workers and sums each subtask's count exactly once.
//
// The core is package coordinator/scheduler: a pure state machine (events
// in, decisions out, time as ticks) with no goroutines, I/O or clock.
// Server owns one scheduler on its Run goroutine and is the edges around
// it: it feeds it the workers' Work streams, membership and a ticker,
// persists DecideSubtaskDone and DecideSubtaskReopened first, then sends
// assignments and cancellations.
//
// StateDB keeps jobs and settled counts in bbolt, each value checksummed,
// so that a restarted coordinator resumes without recounting and never
// sums a damaged count. Server is the gRPC service (workers' Work streams
// and shard fetches, clients' jobs), with Prometheus metrics and a status
// page.
//
// Dependency rule: coordinator imports api and the packages below it that
// hold data and stores (partition, storage, counts), and never imports
// graph, kernels, worker or pipeline itself; a test keeps it so
// (deps_test.go). It reads no graph file and loads no CSR array: the
// command hands it a Partitioner, a CountsReader and the kernel names a
// job may give (Config).
package coordinator
