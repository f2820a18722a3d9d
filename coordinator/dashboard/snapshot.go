package dashboard

import (
	"strconv"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// Version is the version of the JSON shapes below: a change that removes
// or retypes a field raises it (and the /api/vN/ path with it); added
// fields keep it.
const Version = 1

// Overview is /api/v1/overview: every job and every worker.
type Overview struct {
	Version int       `json:"version"`
	Time    time.Time `json:"time"`
	Jobs    []Job     `json:"jobs"`
	Workers []Worker  `json:"workers"`
}

// Job is one job's summary. Triangle counts are decimal strings: exact
// for every uint64, which a JSON number read as a double is not.
type Job struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Graph  string `json:"graph"`
	P      int    `json:"p"`
	Scheme string `json:"scheme"`
	Kernel string `json:"kernel"`
	// Subtask counts: Done includes Restored (settled before a restart).
	Subtasks int64 `json:"subtasks"`
	Done     int64 `json:"done"`
	Running  int64 `json:"running"`
	Queued   int64 `json:"queued"`
	Restored int64 `json:"restored"`
	// Attempts handed out; Requeued after a lost, failed or handed-back
	// attempt; Speculated copies of stragglers; Recounts disagreements
	// settled by a third count; Failures attempts failed, lapsed or lost;
	// Recounted settled subtasks counted again after a restart found
	// their stored counts damaged.
	Attempts   int64 `json:"attempts"`
	Requeued   int64 `json:"requeued"`
	Speculated int64 `json:"speculated"`
	Recounts   int64 `json:"recounts"`
	Failures   int64 `json:"failures"`
	Recounted  int64 `json:"recounted"`
	// TrianglesSoFar sums the settled subtasks; Triangles is the exact
	// total, set only once the job is done.
	TrianglesSoFar string    `json:"triangles_so_far"`
	Triangles      string    `json:"triangles,omitempty"`
	Workers        int       `json:"workers"`
	Created        time.Time `json:"created"`
	ElapsedSeconds float64   `json:"elapsed_seconds"`
	// RemainingSeconds estimates the time left from the rate subtasks
	// settled at so far; null when there is no estimate.
	RemainingSeconds *float64 `json:"remaining_seconds"`
	Error            string   `json:"error,omitempty"`
	Faulty           []Faulty `json:"faulty,omitempty"`
}

// Faulty is a worker whose count was outvoted.
type Faulty struct {
	Worker string `json:"worker"`
	Reason string `json:"reason"`
}

// Snapshot returns the overview of in.
func Snapshot(in Input) Overview {
	o := Overview{Version: Version, Time: in.Now, Jobs: make([]Job, 0, len(in.Jobs)), Workers: []Worker{}}
	for _, j := range in.Jobs {
		o.Jobs = append(o.Jobs, jobOf(in, j))
	}
	for _, w := range Workers(in) {
		o.Workers = append(o.Workers, WorkerOf(w))
	}
	return o
}

func jobOf(in Input, j JobInput) Job {
	st := j.Status
	out := Job{ID: string(st.Job), State: st.State.String(), Graph: st.Source, P: st.Partitions, Scheme: st.Scheme,
		Kernel: st.Kernel, Subtasks: st.Subtasks, Done: st.Done, Running: st.Running, Queued: st.Queued,
		Attempts: st.Attempts, Requeued: st.Requeued, Speculated: st.Speculated, Recounted: st.Recounted,
		Workers: st.Workers, Created: st.Created, ElapsedSeconds: st.Elapsed.Seconds(), Error: st.Err}
	if j.Sched != nil {
		out.Restored, out.Recounts, out.Failures = int64(j.Sched.Restored), int64(j.Sched.Recounts), int64(j.Sched.Failures)
	}
	for _, f := range st.Faulty {
		out.Faulty = append(out.Faulty, Faulty{Worker: string(f.Worker), Reason: f.Reason})
	}
	var sofar uint64
	first := int64(-1)
	if j.Sched != nil {
		sofar, first = j.Sched.Sum, j.Sched.Started
	}
	if st.State == api.JobDone {
		sofar = st.Triangles
		out.Triangles = strconv.FormatUint(st.Triangles, 10)
	}
	out.TrianglesSoFar = strconv.FormatUint(sofar, 10)
	if !st.State.Final() {
		out.RemainingSeconds = remaining(in, st, out.Restored, first)
	}
	return out
}

// remaining estimates a running job's time left: the subtasks still
// unsettled at the rate the ones counted in this run settled, timed from
// the first attempt handed out (from the job's creation when the
// attempts are not known). nil until one subtask is counted.
func remaining(in Input, st api.JobStatus, restored int64, firstTick int64) *float64 {
	counted := st.Done - restored
	if counted <= 0 || st.Subtasks <= st.Done {
		if st.Subtasks > 0 && st.Subtasks == st.Done {
			zero := 0.0
			return &zero
		}
		return nil
	}
	span := st.Elapsed
	if firstTick >= 0 && in.Tick > 0 {
		span = time.Duration(in.NowTick-firstTick) * in.Tick
	}
	left := span.Seconds() * float64(st.Subtasks-st.Done) / float64(counted)
	return &left
}

// marks of one subtask, from its attempts.
type marks struct {
	retried, speculative, recounted, failed bool
}

// markOf reads a subtask's attempts: a failure is an attempt that failed,
// lapsed or was lost with its worker; a retry is an attempt handed out
// after a failure or a hand-back.
func markOf(s scheduler.SubtaskStatus) marks {
	m := marks{recounted: s.Disputed}
	again := false
	for _, t := range s.Tries {
		if again && !t.Speculative {
			m.retried = true
		}
		if t.Speculative {
			m.speculative = true
		}
		switch outcomeKind(t.Outcome) {
		case "failed":
			m.failed, again = true, true
		case "handed back":
			again = true
		}
	}
	return m
}

// outcomeKind classifies a scheduler.TryReport outcome.
func outcomeKind(o string) string {
	for _, p := range []struct{ prefix, kind string }{
		{"failed", "failed"}, {"lease expired", "failed"}, {"worker left", "failed"},
		{"handed back", "handed back"}, {"running", "running"}, {"counted", "counted"},
	} {
		if len(o) >= len(p.prefix) && o[:len(p.prefix)] == p.prefix {
			return p.kind
		}
	}
	return "other"
}

func (m marks) list() []string {
	out := []string{}
	if m.retried {
		out = append(out, "retried")
	}
	if m.speculative {
		out = append(out, "speculative")
	}
	if m.recounted {
		out = append(out, "recounted")
	}
	if m.failed {
		out = append(out, "failed")
	}
	return out
}

func (m marks) any() bool { return m.retried || m.speculative || m.recounted || m.failed }
