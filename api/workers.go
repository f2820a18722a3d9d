package api

import "time"

// WorkerState is what a worker is doing as the coordinator sees it.
type WorkerState string

const (
	// WorkerBusy has attempts out; WorkerIdle has none.
	WorkerBusy WorkerState = "busy"
	WorkerIdle WorkerState = "idle"
	// WorkerDraining is stopping: it hands back its queued attempts and
	// finishes the running ones.
	WorkerDraining WorkerState = "draining"
	// WorkerLost has left or is silent: its stream ended, membership
	// declared it dead, or it missed several heartbeats, or one of its
	// leases lapsed.
	WorkerLost WorkerState = "lost"
)

// HandBackDraining begins the error of an attempt a worker hands back
// because it is draining (it stops: a signal, or its context ended).
const HandBackDraining = "worker draining"

// WorkerInfo is what a coordinator shows of one worker (trigrid status,
// the dashboard).
type WorkerInfo struct {
	Worker  WorkerID
	Host    string // the host its stream comes from ("" when unknown)
	Version string
	Devices []Device
	Cores   int
	Slots   int
	State   WorkerState
	// Running is its attempts out now; Counted and Failed its results
	// over its connection.
	Running, Counted, Failed int
	// Faulty is why it gets no more work (its count was outvoted); Left
	// why a lost worker left.
	Faulty, Left string
	// Heard is how long ago its last message arrived (for a worker that
	// left: how long ago it left).
	Heard time.Duration
	// Stats sums its accepted attempts over the jobs the coordinator
	// holds (JobStatus.PerWorker); Wall is the sum of the jobs' spans.
	Stats WorkerStats
}
