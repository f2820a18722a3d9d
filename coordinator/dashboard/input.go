package dashboard

import (
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// Input is the coordinator's state at one moment: everything Snapshot
// and Detail read, and nothing else.
type Input struct {
	// Now is the wall clock; NowTick the scheduler's tick and Tick its
	// length, which turn attempts' start ticks into running times.
	Now     time.Time
	NowTick int64
	Tick    time.Duration
	// Heartbeat is the interval workers heartbeat at; a worker silent
	// for SilentAfter(Heartbeat) shows as lost.
	Heartbeat time.Duration
	Jobs      []JobInput
	Workers   []WorkerInput
	Departed  []scheduler.DepartedWorker
}

// JobInput is one job in submission order.
type JobInput struct {
	Status api.JobStatus
	// Sched is the scheduler's view while it holds the job (nil before
	// the job is queued and once it is forgotten).
	Sched *scheduler.JobStatus
	// Subtasks are the job's subtasks when the coordinator gathered them
	// (Detail asked for the job); nil otherwise. The overview reads only
	// Status and Sched, so that a poll costs no per-subtask copies.
	Subtasks []scheduler.SubtaskStatus
}

// WorkerInput is one connected worker.
type WorkerInput struct {
	Status scheduler.WorkerStatus
	// Peer is its stream's remote address; Heard when its last message
	// arrived.
	Peer  string
	Heard time.Time
}

// SilentAfter is how long a connected worker may go unheard before it
// shows as lost: several missed heartbeats, never under a second.
func SilentAfter(heartbeat time.Duration) time.Duration { return max(3*heartbeat, time.Second) }
