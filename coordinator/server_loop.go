package coordinator

import (
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// flush carries out the pending decisions: settled subtasks and job ends
// are persisted first, then assignments and cancels go to the workers and
// watchers hear of changes.
func (s *Server) flush() {
	ds := s.pending
	s.pending = nil
	if len(ds) == 0 {
		s.met.gauges(s)
		return
	}
	var changes []SettledChange
	for _, d := range ds {
		switch d.Kind {
		case scheduler.DecideSubtaskDone:
			changes = append(changes, SettledChange{Ref: d.Ref, Triangles: d.Triangles})
		case scheduler.DecideSubtaskReopened:
			changes = append(changes, SettledChange{Ref: d.Ref, Forget: true})
		}
	}
	if s.db != nil && len(changes) > 0 {
		if err := s.db.RecordSettled(changes); err != nil {
			s.log.Error("persisting settled subtasks; a restart would recount them", "err", err)
		}
	}
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
		case scheduler.DecideSubtaskDone, scheduler.DecideSubtaskReopened:
			s.settleCounts(d)
			touched[d.Job] = true
		case scheduler.DecideJobDone:
			if j := s.jobs[d.Job]; j != nil {
				if j.rec.PerVertex && !j.state.Final() {
					s.finishCounts(j, d.Total) // ends the job once its files are written
					continue
				}
				s.endJob(j, api.JobDone, d.Total, nil)
			}
		case scheduler.DecideJobFailed:
			if j := s.jobs[d.Job]; j != nil {
				s.endJob(j, api.JobFailed, 0, d.Err)
			}
		case scheduler.DecideJobCancelled:
			if j := s.jobs[d.Job]; j != nil {
				s.endJob(j, api.JobCancelled, 0, d.Err)
			}
		case scheduler.DecideWorkerFaulty:
			s.log.Warn("worker found faulty; it gets no more work", "worker", d.Worker, "err", d.Err)
			if j := s.jobs[d.Job]; j != nil {
				j.faulty = append(j.faulty, api.FaultyWorker{Worker: d.Worker, Reason: api.TruncateText(d.Err.Error(), api.MaxErrorLen)})
				s.recordFaulty(j)
			}
			if sess := s.sessions[d.Worker]; sess != nil {
				s.endSession(sess, "found faulty")
			}
		case scheduler.DecideIgnore:
			s.log.Debug("event ignored", "worker", d.Worker, "job", d.Job, "subtask", d.Ref.Index, "attempt", d.Attempt, "reason", d.Reason)
		}
	}
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
	for id := range touched {
		if j := s.jobs[id]; j != nil {
			if j.state == api.JobQueued {
				j.state = api.JobRunning
			}
			j.notify()
		}
	}
	s.met.gauges(s)
	if len(s.pending) > 0 { // ending a session while sending decided more
		s.flush()
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
	if j.state == api.JobDone {
		st.Triangles = r.Total
	}
	if j.state.Final() {
		st.Queued, st.Running = 0, 0
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
