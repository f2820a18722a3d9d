// Package api holds the messages that pass between the coordinator and its
// workers. The in-process run (package pipeline) and the network transport
// carry the same messages: Assignment from the coordinator to a worker,
// Result and Heartbeat from a worker to the coordinator. The gRPC protocol
// (api/pb, generated from api/trigrid.proto) converts to and from these
// types at the edge; nothing else depends on protobuf.
//
// Dependency rule: api imports nothing of this module but the standard
// library, so both coordinator and worker can import it without importing
// each other.
package api

import "time"

// WorkerID names a worker for the life of its process (memberlist node
// name on the network, "local-N" in process).
type WorkerID string

// JobID names a job on one coordinator.
type JobID string

// SubtaskRef names one subtask of one job: Index is its position in the
// job's subtask list, which is fixed when the job is created.
type SubtaskRef struct {
	Job   JobID
	Index int
}

// Assignment hands one attempt of one subtask to a worker. The worker reads
// blocks B[I][J], B[I][K] and B[J][K] from the job's store and counts them
// with Kernel.
type Assignment struct {
	Ref SubtaskRef
	// Attempt numbers the hand-outs of one subtask from 1. A result names
	// the attempt it answers, so a late result of an expired lease is
	// recognised.
	Attempt int
	I, J, K int
	// Clip and TailOffset are partition.Subtask's clip, passed to the
	// kernel unchanged.
	Clip       bool
	TailOffset int64
	// Edges and Work are the subtask's size and cost estimate
	// (partition.Subtask), used for leases and straggler detection.
	Edges int64
	Work  int64
	// Store is the URL of the job's shard store ("" in process, where the
	// worker has a block source of its own). Kernel is the kernel name
	// ("" means the worker's default).
	Store  string
	Kernel string
	// PerVertex asks for the subtask's per-vertex triangle counts in
	// Result.Partial; PerEdge for its per-edge support as well (which
	// implies PerVertex).
	PerVertex, PerEdge bool
}

// Result is a worker's answer to one Assignment. Exactly one of Err and
// the counts is meaningful: a non-empty Err says the attempt failed.
type Result struct {
	Ref     SubtaskRef
	Attempt int
	Worker  WorkerID
	// Triangles is the subtask's exact count.
	Triangles uint64
	// Partial holds the subtask's per-vertex (and per-edge) counts when
	// the assignment asked for them; nil otherwise. The coordinator adds
	// the partials of the attempt whose result wins, and of no other.
	Partial *Partial
	// Kernel is the kernel that ran ("auto (wetric)").
	Kernel string
	// Fetch, Decode and KernelTime are the time spent getting the blocks'
	// bytes, decoding them, and counting; Upload the time moving them to
	// the device. Busy is the time the device (or the cores) was busy on
	// the attempt as the worker measures it: upload and kernel. Device is
	// the index of the worker's device that counted it (0 on the CPU).
	Fetch, Decode, KernelTime time.Duration
	Upload, Busy              time.Duration
	Device                    int
	// Err is the reason the attempt failed; "" on success.
	Err string
	// HandedBack says the worker gave the attempt back without counting
	// it (it is draining, or its device went away); Err says why. The
	// coordinator requeues the subtask without holding the attempt
	// against it or the worker.
	HandedBack bool
}

// AttemptTimes are the times and the device a worker reports for one
// attempt (see Result).
type AttemptTimes struct {
	Fetch, Decode, KernelTime time.Duration
	Upload, Busy              time.Duration
	Device                    int
}

// Times returns the result's times and device.
func (r *Result) Times() AttemptTimes {
	return AttemptTimes{Fetch: r.Fetch, Decode: r.Decode, KernelTime: r.KernelTime, Upload: r.Upload, Busy: r.Busy, Device: r.Device}
}

// Partial is one subtask's share of the per-vertex and per-edge triangle
// counts, in the local index spaces of its blocks: a triangle a < b < c
// with a in group I, b in J and c in K adds 1 to VI[a], VJ[b] and VK[c]
// (local ids), and 1 to the support of its edges ab in B[I][J], ac in
// B[I][K] and bc in B[J][K], indexed by the edge's position in that
// block's column array. Every slice is as long as the block or group it
// indexes; the E slices are nil without per-edge counts. When two of the
// groups are the same (I == J, say), their slices are still separate:
// the receiver adds each to the group it names.
type Partial struct {
	VI, VJ, VK    []uint64
	EIJ, EIK, EJK []uint64
}

// Heartbeat tells the coordinator a worker is alive and which attempts it
// is still running; it renews their leases.
type Heartbeat struct {
	Worker  WorkerID
	Running []SubtaskRef
}

// Device is one counting device of a worker.
type Device struct {
	// Kind is "gpu" or "cpu"; Name the device's name; Memory its usable
	// bytes (0 when unknown).
	Kind   string
	Name   string
	Memory int64
}

// Hello is what a worker says of itself when it joins.
type Hello struct {
	Worker  WorkerID
	Version string
	Devices []Device
	Kernels []string
	Cores   int
	// Slots is how many subtasks the worker counts at once (one per GPU,
	// or one on the CPU).
	Slots int
	// Instance identifies the worker process, the same on each of its
	// reconnects: the coordinator takes a Hello naming a worker it holds
	// a live session of as a reconnect when the instance is the same, and
	// refuses it when it differs. "" is an instance unlike any other.
	Instance string
}

// Welcome is the coordinator's answer to a Hello: the heartbeat interval
// the worker must keep and the lease an attempt has without a heartbeat.
type Welcome struct {
	Version   string
	Heartbeat time.Duration
	Lease     time.Duration
}

// Cancel tells a worker to drop one attempt and send no result for it.
type Cancel struct {
	Ref     SubtaskRef
	Attempt int
	Reason  string
}
