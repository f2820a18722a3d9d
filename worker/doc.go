// Package worker counts subtasks handed out by a coordinator. A Worker
// pulls assignments (api.Assignment) through a Conn, loads the three
// blocks of each from a block source through a bounded cache, counts them
// on one of its slots (one per GPU, or the CPU) and reports an api.Result
// per assignment. While a slot counts, the blocks of the next pulled
// assignments are loaded, so fetching and decoding overlap counting.
//
// The worker does not know where assignments come from: the in-process run
// (package pipeline) and the gRPC client are two Conn implementations
// under the same loop. Coordinator and worker never import each other;
// they share only package api.
package worker
