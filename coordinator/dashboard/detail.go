package dashboard

import (
	"cmp"
	"slices"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// Bounds of a JobDetail, so that one answer stays small whatever P is.
const (
	// MaxGrid is the most cells a side of the grid has: above it, each
	// cell covers Group x Group blocks.
	MaxGrid = 64
	// MaxInFlight and MaxMarked bound the lists; the longest-running and
	// the lowest-numbered come first.
	MaxInFlight = 256
	MaxMarked   = 256
)

// JobDetail is /api/v1/jobs/{id}: one job with its block grid, the
// attempts in flight and the subtasks marked by retries, speculative
// copies, recounts or failures. Grid is null when the coordinator no
// longer holds the job's subtasks (an older finished job).
type JobDetail struct {
	Version  int        `json:"version"`
	Time     time.Time  `json:"time"`
	Job      Job        `json:"job"`
	Grid     *Grid      `json:"grid"`
	InFlight []InFlight `json:"in_flight"`
	// InFlightTotal and MarkedTotal count all of them, listed or not.
	InFlightTotal int      `json:"in_flight_total"`
	Marked        []Marked `json:"marked"`
	MarkedTotal   int      `json:"marked_total"`
}

// Grid is the P x P block grid, a cell per (I, J) summing the subtasks
// (I, J, K) over K. Size is the cells per side: P, or ceil(P/Group)
// when P exceeds MaxGrid. The lists hold Size*Size values row-major: the
// cell of block (I, J) is at (I/Group)*Size + J/Group.
type Grid struct {
	P     int `json:"p"`
	Group int `json:"group"`
	Size  int `json:"size"`
	// Total subtasks of the cell (0: none, as in blocks the range scheme
	// skips), Done settled, Running with an attempt out.
	Total   []int `json:"total"`
	Done    []int `json:"done"`
	Running []int `json:"running"`
	// Subtasks of the cell marked: retried, speculative copies,
	// recounted, with a failed attempt.
	Retried     []int `json:"retried"`
	Speculative []int `json:"speculative"`
	Recounted   []int `json:"recounted"`
	Failed      []int `json:"failed"`
}

// InFlight is an attempt out at a worker.
type InFlight struct {
	Subtask        int     `json:"subtask"`
	I              int     `json:"i"`
	J              int     `json:"j"`
	K              int     `json:"k"`
	Worker         string  `json:"worker"`
	Attempt        int     `json:"attempt"`
	RunningSeconds float64 `json:"running_seconds"`
	Speculative    bool    `json:"speculative"`
}

// Marked is a subtask that was retried, copied, recounted or had a
// failed attempt, with every attempt.
type Marked struct {
	Subtask int      `json:"subtask"`
	I       int      `json:"i"`
	J       int      `json:"j"`
	K       int      `json:"k"`
	State   string   `json:"state"`
	Marks   []string `json:"marks"`
	Tries   []Try    `json:"tries"`
}

// Try is one attempt of a subtask.
type Try struct {
	Attempt     int    `json:"attempt"`
	Worker      string `json:"worker"`
	Outcome     string `json:"outcome"`
	Speculative bool   `json:"speculative"`
}

// Detail returns job id's detail; false when in has no such job.
func Detail(in Input, id api.JobID) (JobDetail, bool) {
	i := slices.IndexFunc(in.Jobs, func(j JobInput) bool { return j.Status.Job == id })
	if i < 0 {
		return JobDetail{}, false
	}
	j := in.Jobs[i]
	d := JobDetail{Version: Version, Time: in.Now, Job: jobOf(in, j), InFlight: []InFlight{}, Marked: []Marked{}}
	if j.Subtasks == nil {
		return d, true
	}
	d.Grid = newGrid(j.Status.Partitions, j.Subtasks)
	for _, s := range j.Subtasks {
		m := markOf(s)
		d.Grid.add(s, m)
		for _, t := range s.Tries {
			if outcomeKind(t.Outcome) == "running" {
				d.InFlight = append(d.InFlight, InFlight{Subtask: s.Index, I: s.I, J: s.J, K: s.K, Worker: string(t.Worker),
					Attempt: t.Attempt, RunningSeconds: ticks(in, t.Started), Speculative: t.Speculative})
			}
		}
		if m.any() {
			d.Marked = append(d.Marked, markedOf(s, m))
		}
	}
	slices.SortStableFunc(d.InFlight, func(a, b InFlight) int { return cmp.Compare(b.RunningSeconds, a.RunningSeconds) })
	d.InFlightTotal, d.MarkedTotal = len(d.InFlight), len(d.Marked)
	d.InFlight = d.InFlight[:min(len(d.InFlight), MaxInFlight)]
	d.Marked = d.Marked[:min(len(d.Marked), MaxMarked)]
	return d, true
}

// ticks is the time since tick t.
func ticks(in Input, t int64) float64 {
	return max(0, time.Duration(in.NowTick-t)*in.Tick).Seconds()
}

func markedOf(s scheduler.SubtaskStatus, m marks) Marked {
	out := Marked{Subtask: s.Index, I: s.I, J: s.J, K: s.K, State: s.State, Marks: m.list(), Tries: []Try{}}
	for _, t := range s.Tries {
		out.Tries = append(out.Tries, Try{Attempt: t.Attempt, Worker: string(t.Worker), Outcome: t.Outcome, Speculative: t.Speculative})
	}
	return out
}

// newGrid sizes the grid for P blocks a side; P comes from the job, and
// a subtask naming a block beyond it widens the grid rather than being
// dropped.
func newGrid(p int, subtasks []scheduler.SubtaskStatus) *Grid {
	for _, s := range subtasks {
		p = max(p, s.I+1, s.J+1)
	}
	p = max(p, 1)
	group := (p + MaxGrid - 1) / MaxGrid
	size := (p + group - 1) / group
	n := size * size
	return &Grid{P: p, Group: group, Size: size, Total: make([]int, n), Done: make([]int, n), Running: make([]int, n),
		Retried: make([]int, n), Speculative: make([]int, n), Recounted: make([]int, n), Failed: make([]int, n)}
}

func (g *Grid) add(s scheduler.SubtaskStatus, m marks) {
	if s.I < 0 || s.J < 0 {
		return
	}
	c := (s.I/g.Group)*g.Size + s.J/g.Group
	g.Total[c]++
	switch s.State {
	case "done":
		g.Done[c]++
	case "running":
		g.Running[c]++
	}
	for _, f := range []struct {
		on   bool
		list []int
	}{{m.retried, g.Retried}, {m.speculative, g.Speculative}, {m.recounted, g.Recounted}, {m.failed, g.Failed}} {
		if f.on {
			f.list[c]++
		}
	}
}
