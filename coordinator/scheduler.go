package coordinator

import (
	"errors"
	"fmt"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/partition"
)

// SchedulerConfig tunes the scheduler. Durations are in ticks; the caller
// decides what a tick is (Config.TickInterval in the service).
type SchedulerConfig struct {
	// LeaseTicks is how long an attempt stays assigned without a
	// heartbeat naming it; when it lapses the attempt is presumed lost,
	// the subtask is requeued and the worker gets no more work until it
	// pulls, heartbeats or answers again. Longer leases tolerate slow
	// networks and long pauses but leave a stalled worker's subtasks idle
	// longer. 0 means the default.
	LeaseTicks int64
	// MaxAttempts is how many attempts of one subtask may fail (an error
	// result, a lapsed lease, the worker leaving) before its job fails
	// with an error naming the subtask and the workers that tried.
	// Attempts handed back by a draining worker, speculative copies that
	// lose, and recounts do not count. 0 means the default.
	MaxAttempts int
	// NoSpeculation turns off re-offering stragglers to idle workers.
	NoSpeculation bool
	// SpeculateAfter is the fraction of a job's subtasks that must be done
	// before stragglers are re-offered; the done subtasks give the median
	// time per unit of estimated work. 0 means the default.
	SpeculateAfter float64
	// SpeculateFactor: an attempt is a straggler when it has run longer
	// than this many times its estimate (median time per work unit times
	// the subtask's Work). 0 means the default.
	SpeculateFactor float64
	// SpeculateMinTicks: attempts younger than this are never re-offered,
	// so that subtasks shorter than a few ticks (whose measured times are
	// mostly rounding) are not duplicated. 0 means the default.
	SpeculateMinTicks int64
	// Verify counts every subtask on two different workers and accepts it
	// only when both agree (a disagreement is settled by a third). It
	// doubles the work; it catches silent faults that speculation and
	// duplicates catch only by chance.
	Verify bool
	// RecountWaitTicks is how long a subtask that only a worker that has
	// not yet counted it may take (a verification copy, a recount after a
	// disagreement) waits while no connected worker qualifies, before its
	// job fails saying so. 0 means the default.
	RecountWaitTicks int64
}

// Scheduler defaults. A tick is Config.TickInterval in the service (100 ms
// by default), so the lease is 10 s: ten missed one-second heartbeats
// (Ray declares a node dead after five missed three-second checks; ours
// is shorter because a lost attempt costs a whole subtask's time).
const (
	DefaultLeaseTicks        = 100
	DefaultMaxAttempts       = 4 // Hadoop's mapreduce.map.maxattempts
	DefaultSpeculateAfter    = 0.75
	DefaultSpeculateFactor   = 1.5 // Spark's spark.speculation.multiplier
	DefaultSpeculateMinTicks = 20
	DefaultRecountWaitTicks  = 300
)

// DefaultSchedulerConfig returns the defaults: 100-tick leases, 4
// attempts, speculation of attempts running 1.5x past their estimate once
// 75% of a job is done (as Spark), no verification of every subtask.
func DefaultSchedulerConfig() SchedulerConfig {
	return SchedulerConfig{
		LeaseTicks:        DefaultLeaseTicks,
		MaxAttempts:       DefaultMaxAttempts,
		SpeculateAfter:    DefaultSpeculateAfter,
		SpeculateFactor:   DefaultSpeculateFactor,
		SpeculateMinTicks: DefaultSpeculateMinTicks,
		RecountWaitTicks:  DefaultRecountWaitTicks,
	}
}

// Validate fills zero fields with defaults and rejects impossible values.
func (c *SchedulerConfig) Validate() error {
	d := DefaultSchedulerConfig()
	if c.LeaseTicks == 0 {
		c.LeaseTicks = d.LeaseTicks
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = d.MaxAttempts
	}
	if c.SpeculateAfter == 0 {
		c.SpeculateAfter = d.SpeculateAfter
	}
	if c.SpeculateFactor == 0 {
		c.SpeculateFactor = d.SpeculateFactor
	}
	if c.SpeculateMinTicks == 0 {
		c.SpeculateMinTicks = d.SpeculateMinTicks
	}
	if c.RecountWaitTicks == 0 {
		c.RecountWaitTicks = d.RecountWaitTicks
	}
	switch {
	case c.LeaseTicks < 0:
		return fmt.Errorf("coordinator: lease of %d ticks: must be positive", c.LeaseTicks)
	case c.MaxAttempts < 0:
		return fmt.Errorf("coordinator: max attempts %d: must be positive", c.MaxAttempts)
	case c.SpeculateAfter < 0 || c.SpeculateAfter > 1:
		return fmt.Errorf("coordinator: speculate after %v: must be a fraction in (0, 1]", c.SpeculateAfter)
	case c.SpeculateFactor < 1:
		return fmt.Errorf("coordinator: speculation factor %v: must be at least 1", c.SpeculateFactor)
	case c.SpeculateMinTicks < 0:
		return fmt.Errorf("coordinator: speculation minimum of %d ticks: must be positive", c.SpeculateMinTicks)
	case c.RecountWaitTicks < 0:
		return fmt.Errorf("coordinator: recount wait of %d ticks: must be positive", c.RecountWaitTicks)
	}
	return nil
}

// JobSpec is a job as the scheduler sees it: a fixed list of subtasks and
// what the workers need to count them.
type JobSpec struct {
	ID api.JobID
	// Subtasks are the job's subtasks; a subtask's index in this list is
	// its api.SubtaskRef.Index. A job with none is done at once with 0.
	Subtasks []partition.Subtask
	// Store is the URL workers read the shards from; Kernel the kernel
	// name ("" is the worker's default). Both are copied into assignments.
	Store  string
	Kernel string
	// PerVertex and PerEdge are copied into assignments: the workers
	// return partial counts, and the winning attempt's partial comes with
	// DecideSubtaskDone.
	PerVertex, PerEdge bool
	// GroupJK groups the subtasks that share JK, not IJ: a worker keeps
	// taking subtasks of the group it took last, so the block a group
	// shares stays resident (a GPU that streams IJ and IK beside a
	// resident JK).
	GroupJK bool
	// Settled holds the counts of subtasks already settled, by index
	// (restored from persistence after a restart); they are not counted
	// again.
	Settled map[int]uint64
}

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
	// unless the job asked for them). A later DecideSubtaskDone for the
	// same Ref replaces the value (a recount overturned it).
	DecideSubtaskDone
	// DecideSubtaskReopened: an earlier DecideSubtaskDone for Ref no longer
	// holds (a disagreeing result, or its worker was found faulty); forget
	// the persisted value.
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
	Err       error
	Reason    string
}

// Errors the scheduler returns or puts in decisions.
var (
	ErrJobExists   = errors.New("coordinator: job already exists")
	ErrUnknownJob  = errors.New("coordinator: no such job")
	ErrJobCanceled = errors.New("coordinator: job cancelled")
)
