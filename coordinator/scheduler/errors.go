package scheduler

import (
	"fmt"
	"strings"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/partition"
)

// TryReport is one attempt of a subtask, as the errors below report it.
type TryReport struct {
	Attempt int
	Worker  api.WorkerID
	// Outcome is "counted N", "failed: reason", "lease expired", "worker
	// left: reason", "handed back", "cancelled" or "running".
	Outcome string
	// Started is the tick it was handed out; Speculative says it was a
	// copy of a straggler.
	Started     int64
	Speculative bool
}

// SubtaskFailedError says a subtask could not be counted: it failed
// MaxAttempts times, or no worker qualified to recount it.
type SubtaskFailedError struct {
	Job     api.JobID
	Index   int
	Subtask partition.Subtask
	Reason  string
	Tries   []TryReport
}

func (e *SubtaskFailedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "coordinator: job %s: subtask %d (I=%d J=%d K=%d): %s", e.Job, e.Index,
		e.Subtask.I, e.Subtask.J, e.Subtask.K, e.Reason)
	writeTries(&b, e.Tries)
	return b.String()
}

// DisagreementError says the workers that counted a subtask gave
// different counts and no count had a majority.
type DisagreementError struct {
	Job     api.JobID
	Index   int
	Subtask partition.Subtask
	Counts  map[api.WorkerID]uint64
	Tries   []TryReport
}

func (e *DisagreementError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "coordinator: job %s: subtask %d (I=%d J=%d K=%d): workers disagree with no majority", e.Job, e.Index,
		e.Subtask.I, e.Subtask.J, e.Subtask.K)
	writeTries(&b, e.Tries)
	return b.String()
}

func writeTries(b *strings.Builder, tries []TryReport) {
	if len(tries) == 0 {
		return
	}
	b.WriteString("; attempts:")
	for i, t := range tries {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(b, " %d on %s: %s", t.Attempt, t.Worker, t.Outcome)
	}
}

// FaultyWorkerError says a worker's count was outvoted.
type FaultyWorkerError struct {
	Worker  api.WorkerID
	Job     api.JobID
	Index   int
	Subtask partition.Subtask
	Got     uint64
	Agreed  uint64
	// Agreeing names the workers whose counts won.
	Agreeing []api.WorkerID
}

func (e *FaultyWorkerError) Error() string {
	return fmt.Sprintf("coordinator: worker %s counted %d for job %s subtask %d (I=%d J=%d K=%d), outvoted by %v with %d",
		e.Worker, e.Got, e.Job, e.Index, e.Subtask.I, e.Subtask.J, e.Subtask.K, e.Agreeing, e.Agreed)
}
