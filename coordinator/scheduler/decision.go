package scheduler

import (
	"fmt"

	"github.com/trigrid/trigrid/api"
)

// DecisionKind says what a Decision asks of the caller.
type DecisionKind uint8

const (
	// DecideAssign: send Assignment to Worker.
	DecideAssign DecisionKind = iota + 1
	// DecideCancel: tell Worker to stop attempt Attempt of Ref; its answer
	// is no longer needed (settled elsewhere, or its job ended).
	DecideCancel
	// DecideSubtaskDone: Ref is settled with Triangles (persist it), counted
	// by Worker in Attempt; Partial is that attempt's partial counts (nil
	// unless the job asked for them) and Times its times. A later
	// DecideSubtaskDone for the same Ref replaces the value and the
	// accepted attempt (a recount overturned it, or the accepted count's
	// worker was found faulty); Prev then names the attempt it replaces.
	DecideSubtaskDone
	// DecideSubtaskReopened: an earlier DecideSubtaskDone for Ref no longer
	// holds (a disagreeing result, or its worker was found faulty); forget
	// the persisted value. Prev names the attempt that was accepted.
	DecideSubtaskReopened
	// DecideJobDone: Job finished; Total is its exact count.
	DecideJobDone
	// DecideJobFailed: Job failed; Err says why.
	DecideJobFailed
	// DecideJobCancelled: Job was cancelled.
	DecideJobCancelled
	// DecideWorkerFaulty: Worker gave a count that other workers outvoted
	// (Err names the subtask and the counts); it gets no more work.
	DecideWorkerFaulty
	// DecideIgnore: the event changed nothing (Reason says why: a stale
	// or duplicate result, an unknown worker or job). For logs and
	// metrics only.
	DecideIgnore
)

var decisionNames = [...]string{"", "assign", "cancel", "subtask-done", "subtask-reopened", "job-done", "job-failed", "job-cancelled", "worker-faulty", "ignore"}

func (k DecisionKind) String() string {
	if int(k) < len(decisionNames) && k > 0 {
		return decisionNames[k]
	}
	return fmt.Sprintf("decision(%d)", k)
}

// Decision is one thing the caller must do. Which fields are set depends
// on Kind (see DecisionKind).
type Decision struct {
	Kind       DecisionKind
	Worker     api.WorkerID
	Assignment api.Assignment
	Job        api.JobID
	Ref        api.SubtaskRef
	Attempt    int
	// Speculative marks an assignment that duplicates a straggler.
	Speculative bool
	// Triangles is the settled count of Ref (DecideSubtaskDone); Total the
	// job's count (DecideJobDone).
	Triangles uint64
	Total     uint64
	Partial   *api.Partial
	// Times are the accepted attempt's times (DecideSubtaskDone).
	Times api.AttemptTimes
	// Prev is the attempt accepted before (DecideSubtaskDone replacing
	// one, DecideSubtaskReopened); nil when there was none, or when the
	// subtask was settled before a restart.
	Prev   *Accepted
	Err    error
	Reason string
}

// Accepted names the attempt whose count settled a subtask, and its
// times.
type Accepted struct {
	Worker  api.WorkerID
	Attempt int
	Times   api.AttemptTimes
}
