package scheduler

import (
	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/partition"
)

// tryState is the state of one attempt.
type tryState uint8

const (
	tryRunning   tryState = iota
	tryCounted            // answered with a count
	tryFailed             // answered with an error
	tryExpired            // lease lapsed
	tryLost               // worker left
	tryHanded             // handed back unfinished
	tryCancelled          // no longer needed
	tryDiscarded          // answered by a worker found faulty
)

// try is one attempt of a subtask.
type try struct {
	worker      api.WorkerID
	attempt     int
	start       int64 // tick it was handed out
	deadline    int64 // tick its lease lapses
	state       tryState
	speculative bool
	triangles   uint64
	partial     *api.Partial
	times       api.AttemptTimes // of a count
	reason      string
}

func (t *try) outcome() string {
	switch t.state {
	case tryRunning:
		return "running"
	case tryCounted:
		return "counted " + uitoa(t.triangles)
	case tryFailed:
		return "failed: " + t.reason
	case tryExpired:
		return "lease expired"
	case tryLost:
		return "worker left: " + t.reason
	case tryHanded:
		return "handed back: " + t.reason
	case tryCancelled:
		return "cancelled"
	case tryDiscarded:
		return "discarded (worker faulty): counted " + uitoa(t.triangles)
	}
	return "?"
}

// failure says whether the attempt counts against MaxAttempts.
func (t *try) failure() bool {
	return t.state == tryFailed || t.state == tryExpired || t.state == tryLost
}

// subtask is the scheduler's record of one subtask.
type subtask struct {
	index    int
	tries    []try
	settled  bool
	value    uint64
	restored bool  // settled from JobSpec.Settled
	inRetry  bool  // on its job's retry list
	waitFrom int64 // tick since which no connected worker qualified (-1: not waiting)
	// won is the attempt whose count settled it (0: none, or settled
	// before a restart).
	won int32
	// disputed is set once two counts disagreed.
	disputed   bool
	requeued   int
	speculated int
	nrun       int // attempts running (job.addTry, job.setTry)
}

func (s *subtask) running() int { return s.nrun }

func (s *subtask) failures() int {
	n := 0
	for i := range s.tries {
		if s.tries[i].failure() {
			n++
		}
	}
	return n
}

// counted reports whether w answered s with a count or is running it.
func (s *subtask) busyWith(w api.WorkerID) bool {
	for i := range s.tries {
		t := &s.tries[i]
		if t.worker == w && (t.state == tryRunning || t.state == tryCounted || t.state == tryDiscarded) {
			return true
		}
	}
	return false
}

// failedOn reports whether an attempt of s failed on w, or w handed it
// back.
func (s *subtask) failedOn(w api.WorkerID) bool {
	for i := range s.tries {
		t := &s.tries[i]
		if t.worker == w && (t.state == tryFailed || t.state == tryExpired || t.state == tryHanded) {
			return true
		}
	}
	return false
}

func (s *subtask) try(attempt int) *try {
	if attempt < 1 || attempt > len(s.tries) {
		return nil
	}
	return &s.tries[attempt-1]
}

func (s *subtask) reports() []TryReport {
	out := make([]TryReport, len(s.tries))
	for i := range s.tries {
		t := &s.tries[i]
		out[i] = TryReport{Attempt: t.attempt, Worker: t.worker, Outcome: t.outcome(), Started: t.start, Speculative: t.speculative}
	}
	return out
}

// JobState is where a job is in its life.
type JobState uint8

const (
	JobQueued JobState = iota + 1
	JobRunning
	JobDone
	JobFailed
	JobCancelled
)

var jobStateNames = [...]string{"", "queued", "running", "done", "failed", "cancelled"}

func (s JobState) String() string {
	if int(s) < len(jobStateNames) && s > 0 {
		return jobStateNames[s]
	}
	return "unknown"
}

// Finished reports whether the job has ended.
func (s JobState) Finished() bool { return s == JobDone || s == JobFailed || s == JobCancelled }

// ijKey names a group: (I, J), or (J, K) when the job groups by JK.
type ijKey struct{ i, j int }

// groupKey is the group of subtask t.
func (j *job) groupKey(t partition.Subtask) ijKey {
	if j.spec.GroupJK {
		return ijKey{t.J, t.K}
	}
	return ijKey{t.I, t.J}
}

// group is the fresh (never handed out) subtasks of one (I, J) (or one
// (J, K), JobSpec.GroupJK), in order.
type group struct {
	key   ijKey
	items []int
	head  int
	taken bool // some worker has taken from it
}

func (g *group) empty() bool { return g.head >= len(g.items) }

type job struct {
	spec    JobSpec
	tasks   []subtask
	state   JobState
	err     error
	total   uint64
	settled int
	// Fresh subtasks by (I, J) group in list order; requeued ones (and
	// copies for verification or recount) on the retry list.
	groups    []*group
	groupOf   map[ijKey]*group
	fresh     int // fresh subtasks left in the groups
	freshNext int // first group no worker has taken from
	anyNext   int // first group that may still have fresh subtasks
	retry     []int
	ratios    []float64 // ticks per work unit of settled subtasks
	median    float64
	medianOf  int
	perWorker map[api.WorkerID]int
	// voted lists, per worker, the subtasks it counted, so that a worker
	// found faulty has its counts discarded; dropped when the job ends.
	voted    map[api.WorkerID][]int
	recounts int
	// kernelWait is the tick since which no connected worker can run the
	// job's kernel; -1 while one can.
	kernelWait int64
	// started is the tick its first attempt of this run was handed out;
	// -1 before.
	started int64
	tally   tally
}

func (j *job) work(idx int) partition.Subtask { return j.spec.Subtasks[idx] }

// worker is the scheduler's record of one connected worker.
type worker struct {
	id     api.WorkerID
	hello  api.Hello
	demand int
	// suspect is set when one of its leases lapsed: it gets no work until
	// it pulls, heartbeats or answers (a stalled process keeps its demand
	// for when it wakes).
	suspect bool
	running map[api.SubtaskRef]int // attempt number
	// last is the job and (I, J) of its latest assignment, for affinity.
	lastJob api.JobID
	lastIJ  ijKey
	hasLast bool
	counted int
	failed  int
	joined  int64 // tick it joined
	// draining is set once it hands an attempt back because it is
	// draining (api.HandBackDraining).
	draining bool
}

// slots is how many subtasks w counts at once, as its Hello said (at
// least one).
func (w *worker) slots() int { return max(1, w.hello.Slots) }

func uitoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}
