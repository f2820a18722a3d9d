package scheduler

import (
	"maps"
	"slices"

	"github.com/trigrid/trigrid/api"
)

// JobStatus is a read-only view of a job.
type JobStatus struct {
	ID       api.JobID
	State    JobState
	Subtasks int
	// Queued subtasks wait for a worker; Running have an attempt out;
	// Done are settled (Restored of them from persistence).
	Queued, Running, Done, Restored int
	// Requeued counts requeues after a lost or failed attempt; Speculated
	// speculative copies handed out; Recounts disagreements that asked
	// for a third count; Attempts every attempt handed out; Failures the
	// attempts that failed, lapsed or were lost.
	Requeued, Speculated, Recounts, Attempts, Failures int
	// Total is the exact count once State is JobDone; Sum is the sum of
	// the settled subtasks' counts so far (Total once done).
	Total, Sum uint64
	// Err is why the job failed or was cancelled.
	Err error
	// Counted is, per worker, how many counts it returned for this job.
	Counted map[api.WorkerID]int
	// Started is the tick the job's first attempt of this run was handed
	// out; -1 before.
	Started int64
}

// SubtaskStatus is a read-only view of one subtask.
type SubtaskStatus struct {
	Index   int
	I, J, K int
	// State is "queued", "running" or "done".
	State     string
	Triangles uint64 // when done
	Restored  bool   // settled before a restart, not recounted
	// Disputed says two of its counts disagreed, so it was recounted.
	Disputed bool
	Tries    []TryReport
}

// WorkerStatus is a read-only view of a connected worker.
type WorkerStatus struct {
	Hello   api.Hello
	Running int
	// Demand is how many more subtasks it asked for; Suspect says it gets
	// none until it shows life (one of its leases lapsed).
	Demand  int
	Suspect bool
	// Counted and Failed count its results over its connection.
	Counted, Failed int
	// Faulty is why it gets no more work (its count was outvoted), or nil.
	Faulty error
	// Joined is the tick it joined (a reconnect without leaving keeps it).
	Joined int64
	// Draining says it handed an attempt back because it is draining.
	Draining bool
}

// Holds reports whether the scheduler holds the job (added and not yet
// forgotten), without the walk over its subtasks that Job makes.
func (s *Scheduler) Holds(id api.JobID) bool {
	_, ok := s.jobs[id]
	return ok
}

// Job returns a job's status.
func (s *Scheduler) Job(id api.JobID) (JobStatus, bool) {
	j, ok := s.jobs[id]
	if !ok {
		return JobStatus{}, false
	}
	return s.jobStatus(j), true
}

// Jobs returns every job's status in submission order.
func (s *Scheduler) Jobs() []JobStatus {
	out := make([]JobStatus, 0, len(s.order))
	for _, j := range s.order {
		out = append(out, s.jobStatus(j))
	}
	return out
}

func (s *Scheduler) jobStatus(j *job) JobStatus {
	c := &j.tally
	js := JobStatus{ID: j.spec.ID, State: j.state, Subtasks: len(j.tasks), Total: j.total, Err: j.err,
		Recounts: j.recounts, Counted: maps.Clone(j.perWorker), Started: j.started,
		Done: j.settled, Running: c.running, Queued: len(j.tasks) - j.settled - c.running, Restored: c.restored,
		Sum: c.sum, Requeued: c.requeued, Speculated: c.speculated, Attempts: c.attempts, Failures: c.failures}
	if j.state != JobDone {
		js.Total = 0
	}
	return js
}

// Subtasks returns the status of each of a job's subtasks.
func (s *Scheduler) Subtasks(id api.JobID) ([]SubtaskStatus, bool) {
	j, ok := s.jobs[id]
	if !ok {
		return nil, false
	}
	out := make([]SubtaskStatus, len(j.tasks))
	for i := range j.tasks {
		st := &j.tasks[i]
		t := j.work(i)
		ss := SubtaskStatus{Index: i, I: t.I, J: t.J, K: t.K, State: "queued", Restored: st.restored,
			Disputed: st.disputed, Tries: st.reports()}
		switch {
		case st.settled:
			ss.State, ss.Triangles = "done", st.value
		case st.running() > 0:
			ss.State = "running"
		}
		out[i] = ss
	}
	return out, true
}

// Workers returns the connected workers in join order.
func (s *Scheduler) Workers() []WorkerStatus {
	out := make([]WorkerStatus, 0, len(s.workerOrder))
	for _, id := range s.workerOrder {
		w := s.workers[id]
		out = append(out, WorkerStatus{Hello: w.hello, Running: len(w.running), Demand: w.demand, Suspect: w.suspect,
			Counted: w.counted, Failed: w.failed, Faulty: s.faulty[id], Joined: w.joined,
			Draining: w.draining})
	}
	return out
}

// maxDeparted bounds the workers Departed remembers.
const maxDeparted = 32

// DepartedWorker is a worker that left and has not joined again.
type DepartedWorker struct {
	Hello           api.Hello
	Counted, Failed int
	// Joined and Left are ticks; Reason is why it left.
	Joined, Left int64
	Reason       string
}

// Departed returns the latest workers that left (at most 32) and have not
// joined again, oldest first.
func (s *Scheduler) Departed() []DepartedWorker { return slices.Clone(s.departed) }

// Now is the current tick: the number of Tick calls so far.
func (s *Scheduler) Now() int64 { return s.now }

// Fault returns why worker id gets no more work (its count was outvoted,
// or it was quarantined), or nil when it is sound.
func (s *Scheduler) Fault(id api.WorkerID) error { return s.faulty[id] }

// Load is how much the scheduler holds out now.
type Load struct {
	// Workers are the connected workers; Running the attempts out at
	// them.
	Workers, Running int
}

// Load returns the scheduler's load. It costs one step per connected
// worker, so that a caller may read it after every event.
func (s *Scheduler) Load() Load {
	l := Load{Workers: len(s.workerList)}
	for _, w := range s.workerList {
		l.Running += len(w.running)
	}
	return l
}

// Unsettled returns how many of job id's subtasks are not settled yet;
// false when the job has finished or is unknown. It costs one step.
func (s *Scheduler) Unsettled(id api.JobID) (int, bool) {
	j := s.jobs[id]
	if j == nil || j.state.Finished() {
		return 0, false
	}
	return len(j.tasks) - j.settled, true
}
