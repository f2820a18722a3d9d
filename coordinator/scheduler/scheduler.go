package scheduler

import (
	"errors"
	"fmt"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/partition"
)

// Scheduler is the pure scheduling core (see the package comment). It is
// not safe for concurrent use: one goroutine owns it.
type Scheduler struct {
	cfg         Config
	now         int64
	jobs        map[api.JobID]*job
	order       []*job // every job in submission order
	workers     map[api.WorkerID]*worker
	workerOrder []api.WorkerID // connected workers in join order
	workerList  []*worker      // the same, for the hot loops
	slots       int            // the connected workers' slots (countSlots)
	faulty      map[api.WorkerID]error
	// departed are the workers that left, oldest first, at most
	// maxDeparted; one that joins again is taken off.
	departed []DepartedWorker
	out      []Decision
}

// New returns an empty scheduler at tick 0; cfg is validated first (zero
// fields take their defaults).
func New(cfg Config) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Scheduler{
		cfg:     cfg,
		jobs:    make(map[api.JobID]*job),
		workers: make(map[api.WorkerID]*worker),
		faulty:  make(map[api.WorkerID]error),
	}, nil
}

func (s *Scheduler) emit(d Decision) { s.out = append(s.out, d) }

func (s *Scheduler) flush() []Decision {
	out := s.out
	s.out = nil
	return out
}

func (s *Scheduler) ignore(w api.WorkerID, ref api.SubtaskRef, attempt int, format string, args ...any) {
	s.emit(Decision{Kind: DecideIgnore, Worker: w, Job: ref.Job, Ref: ref, Attempt: attempt, Reason: fmt.Sprintf(format, args...)})
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

// Errors the scheduler returns (wrapped with the job's id) or puts in
// decisions.
var (
	// ErrJobExists: AddJob was given an id the scheduler has.
	ErrJobExists = errors.New("coordinator: job already exists")
	// ErrUnknownJob: CancelJob or Forget was given an id it does not have.
	ErrUnknownJob = errors.New("coordinator: no such job")
	// ErrJobCanceled is the Err of DecideJobCancelled.
	ErrJobCanceled = errors.New("coordinator: job cancelled")
)
