package coordinator

import (
	"slices"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// flush carries out the pending decisions. Assignments and cancels go to
// the workers at once; settled and reopened subtasks go to the state
// database (settleQueue), and every effect that shows a settled subtask
// (the per-vertex partials, a job's end, a faulty worker's quarantine,
// the watchers' news) waits, in order, until they are on disk
// (applyDurable).
func (s *Server) flush() {
	ds := s.pending
	if len(ds) == 0 {
		s.met.gauges(s)
		return
	}
	s.pending = nil
	now := time.Now()
	var changes []SettledChange
	var later []scheduler.Decision
	batches := map[api.WorkerID][]api.Assignment{}
	var order []api.WorkerID
	touched := map[api.JobID]bool{}
	for _, d := range ds {
		s.met.decision(d)
		switch d.Kind {
		case scheduler.DecideAssign:
			if _, ok := batches[d.Worker]; !ok {
				order = append(order, d.Worker)
			}
			batches[d.Worker] = append(batches[d.Worker], d.Assignment)
			touched[d.Job] = true
		case scheduler.DecideCancel:
			if sess := s.sessions[d.Worker]; sess != nil {
				sess.send(s, &pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Cancel{
					Cancel: pb.EncodeCancel(api.Cancel{Ref: d.Ref, Attempt: d.Attempt, Reason: "no longer needed"})}})
			}
		case scheduler.DecideIgnore:
			s.log.Debug("event ignored", "worker", d.Worker, "job", d.Job, "subtask", d.Ref.Index, "attempt", d.Attempt, "reason", d.Reason)
		case scheduler.DecideSubtaskDone:
			changes = append(changes, SettledChange{Ref: d.Ref, Triangles: d.Triangles, By: &SettledBy{Worker: d.Worker, Times: d.Times, End: now}})
			if j := s.jobs[d.Job]; j != nil {
				j.unsaved++
			}
			later = append(later, d)
		case scheduler.DecideSubtaskReopened:
			changes = append(changes, SettledChange{Ref: d.Ref, Forget: true})
			later = append(later, d)
		default:
			later = append(later, d)
		}
	}
	s.holdUntilDurable(changes, later, now)
	s.sendAssignments(order, batches)
	s.notify(touched)
	s.applyDurable()
	s.met.gauges(s)
	if len(s.pending) > 0 { // ending a session while sending decided more
		s.flush()
		return
	}
	// Every decision of ds has been copied where it goes: its buffer
	// takes the next ones (a pass of the loop decides a few; a fresh
	// slice each pass was most of the coordinator's garbage).
	clear(ds)
	s.pending = ds[:0]
}

// heldDecisions are decisions whose effects wait until the settled
// changes pushed as seq are on disk; at is when they were made.
type heldDecisions struct {
	seq uint64
	at  time.Time
	ds  []scheduler.Decision
}

// holdUntilDurable queues changes for the disk and holds later until they
// (and every change queued before them) are there. Without a state
// database nothing waits.
func (s *Server) holdUntilDurable(changes []SettledChange, later []scheduler.Decision, now time.Time) {
	if s.queue == nil {
		if s.db != nil && len(changes) > 0 { // Run has not started: write at once
			if err := s.db.RecordSettled(changes); err != nil {
				s.log.Error("persisting settled subtasks; a restart would recount them", "err", err)
			}
		}
		if len(later) > 0 {
			s.held = append(s.held, heldDecisions{at: now, ds: later})
		}
		return
	}
	seq := s.queue.last()
	if len(changes) > 0 {
		seq = s.queue.push(changes)
	}
	if len(later) > 0 {
		s.held = append(s.held, heldDecisions{seq: seq, at: now, ds: later})
	}
}

// durable is the sequence number up to which the settled changes are on
// disk; without a writer, everything is.
func (s *Server) durable() uint64 {
	if s.queue == nil {
		return ^uint64(0)
	}
	return s.queue.durable.Load()
}

// applyDurable carries out the held decisions whose settled changes are
// on disk, in the order they were made.
func (s *Server) applyDurable() {
	upto := s.durable()
	n := 0
	touched := map[api.JobID]bool{}
	for _, h := range s.held {
		if h.seq > upto {
			break
		}
		n++
		for _, d := range h.ds {
			s.applySettled(d, h.at, touched)
		}
	}
	if n == 0 {
		return
	}
	s.held = slices.Delete(s.held, 0, n)
	s.notify(touched)
}

// applySettled carries out one held decision.
func (s *Server) applySettled(d scheduler.Decision, at time.Time, touched map[api.JobID]bool) {
	j := s.jobs[d.Job]
	switch d.Kind {
	case scheduler.DecideSubtaskDone, scheduler.DecideSubtaskReopened:
		if j == nil {
			return
		}
		if d.Kind == scheduler.DecideSubtaskDone {
			j.unsaved--
		}
		s.settleCounts(d)
		s.countStats(j, d, at)
		touched[d.Job] = true
	case scheduler.DecideJobDone:
		if j != nil {
			if j.rec.PerVertex && !j.state.Final() {
				s.finishCounts(j, d.Total) // ends the job once its files are written
				return
			}
			s.endJob(j, api.JobDone, d.Total, nil)
		}
	case scheduler.DecideJobFailed:
		if j != nil {
			s.endJob(j, api.JobFailed, 0, d.Err)
		}
	case scheduler.DecideJobCancelled:
		if j != nil {
			s.endJob(j, api.JobCancelled, 0, d.Err)
		}
	case scheduler.DecideWorkerFaulty:
		s.log.Warn("worker found faulty; it gets no more work", "worker", d.Worker, "err", d.Err)
		if j != nil {
			j.faulty = append(j.faulty, api.FaultyWorker{Worker: d.Worker, Reason: api.TruncateText(d.Err.Error(), api.MaxErrorLen)})
			s.recordFaulty(j)
		}
		if sess := s.sessions[d.Worker]; sess != nil {
			s.endSession(sess, "found faulty")
		}
	}
}

// countStats moves a settled or reopened subtask's accepted attempt into
// or out of its job's per-worker sums.
func (s *Server) countStats(j *jobInfo, d scheduler.Decision, at time.Time) {
	if j.state.Final() || d.Ref.Index < 0 || d.Ref.Index >= len(j.rec.Subtasks) {
		return
	}
	edges := j.rec.Subtasks[d.Ref.Index].Edges
	if p := d.Prev; p != nil {
		j.stats.add(SettledBy{Worker: p.Worker, Times: p.Times}, edges, -1)
	}
	if d.Kind == scheduler.DecideSubtaskDone && d.Worker != "" {
		j.stats.add(SettledBy{Worker: d.Worker, Times: d.Times, End: at}, edges, 1)
	}
}

// sendAssignments sends each worker its assignments, in batches of at
// most api.MaxBatch.
func (s *Server) sendAssignments(order []api.WorkerID, batches map[api.WorkerID][]api.Assignment) {
	for _, w := range order {
		sess := s.sessions[w]
		if sess == nil {
			// The worker is gone: the scheduler hears it when its session
			// ends, and requeues these with its other attempts.
			continue
		}
		as := batches[w]
		for len(as) > 0 {
			n := min(len(as), api.MaxBatch)
			sess.send(s, &pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Assignments{Assignments: pb.EncodeAssignments(as[:n])}})
			as = as[n:]
		}
	}
}

// notify marks the touched jobs running (once they have work out) and
// wakes their watchers.
func (s *Server) notify(touched map[api.JobID]bool) {
	for id := range touched {
		if j := s.jobs[id]; j != nil {
			if j.state == api.JobQueued {
				j.state = api.JobRunning
			}
			j.notify()
		}
	}
}

// status builds a job's status; on the Run goroutine. Callers that answer
// clients flush first, so a status never shows a settled subtask that a
// restart would lose.
func (s *Server) status(j *jobInfo) api.JobStatus {
	if j.final != nil {
		st := *j.final
		st.Faulty = append([]api.FaultyWorker(nil), st.Faulty...)
		return st
	}
	r := &j.rec
	st := api.JobStatus{Job: r.ID, State: j.state, Source: r.Spec.Graph, Partitions: r.P, Scheme: r.Scheme,
		Kernel: r.Spec.Kernel, Created: r.Created, Err: r.Err, Faulty: append([]api.FaultyWorker(nil), j.faulty...),
		Recounted: r.Recounted}
	if st.Source == "" {
		st.Source = r.Spec.Shards
	}
	if js, ok := s.sched.Job(r.ID); ok {
		st.Subtasks, st.Queued, st.Running, st.Done = int64(js.Subtasks), int64(js.Queued), int64(js.Running), int64(js.Done)
		st.Attempts, st.Requeued, st.Speculated = int64(js.Attempts), int64(js.Requeued), int64(js.Speculated)
		st.Workers = len(js.Counted)
	} else if r.Subtasks != nil {
		st.Subtasks = int64(len(r.Subtasks))
	}
	// Subtasks settled but not yet on disk are not shown done.
	st.Done = max(0, st.Done-int64(j.unsaved))
	if j.state == api.JobDone {
		st.Triangles = r.Total
	}
	if j.state.Final() {
		st.Queued, st.Running = 0, 0
		st.PerWorker, st.CoordinatorCPU = slices.Clone(r.PerWorker), r.CoordinatorCPU
	} else {
		st.PerWorker = j.stats.snapshot()
		if j.queuedCPU > 0 {
			st.CoordinatorCPU = max(0, processCPU()-j.queuedCPU)
		}
	}
	if j.ended.IsZero() {
		st.Elapsed = time.Since(r.Created)
	} else {
		st.Elapsed = j.ended.Sub(r.Created)
	}
	if st.Elapsed < 0 {
		st.Elapsed = 0
	}
	return st
}
