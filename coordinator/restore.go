package coordinator

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/storage"
)

// restore loads the recorded jobs: finished ones for status, unfinished
// ones back into the scheduler with their settled subtasks (or back to
// preparation when they had not got that far).
func (s *Server) restore() error {
	recs, err := s.db.Jobs()
	if err != nil {
		return err
	}
	// Workers found faulty in any recorded job stay refused.
	for _, r := range recs {
		for _, f := range r.Faulty {
			if s.sched.Fault(f.Worker) == nil {
				s.log.Warn("worker found faulty before the restart; it gets no more work", "worker", f.Worker, "job", r.ID)
			}
			s.apply(s.sched.Quarantine(f.Worker, fmt.Errorf("found faulty in job %s: %s", r.ID, f.Reason)))
		}
	}
	for _, r := range recs {
		settled, damaged := r.Settled, r.Damaged
		stored := len(settled) + len(damaged)
		r.Settled, r.Damaged = nil, nil
		j := &jobInfo{rec: r, state: r.State, workers: map[api.WorkerID]bool{}, faulty: r.Faulty}
		s.jobs[r.ID] = j
		s.order = append(s.order, r.ID)
		if r.State.Final() {
			j.ended = r.Created
			s.dropShards(j) // the process may have stopped before it did
			continue
		}
		if r.Subtasks == nil {
			j.state = api.JobPreparing // Run restarts the preparation
			continue
		}
		recounted := s.damagedSettled(r.ID, damaged)
		store, err := openStore(r.Store)
		if err == nil {
			var m *storage.Manifest
			if m, err = storage.ReadManifest(context.Background(), store); err == nil {
				s.serve(r.ID, store, m)
			}
			if err == nil && r.PerVertex {
				if j.sums, err = newJobSums(context.Background(), store, m, r.Subtasks, r.PerEdge); err == nil {
					var bad int
					settled, bad = s.restoreSums(j, settled)
					recounted += bad
				}
			}
		}
		if err != nil {
			j.state = api.JobQueued
			s.endJob(j, api.JobFailed, 0, fmt.Errorf("coordinator: job %s: reopening its store after a restart: %w", r.ID, err))
			continue
		}
		s.dropUnsettled(j, settled, stored, recounted)
		for idx := range settled {
			if by, ok := j.rec.SettledBy[idx]; ok {
				j.stats.add(by, r.Subtasks[idx].Edges, 1)
			}
		}
		j.rec.SettledBy = nil
		j.state = api.JobQueued
		s.addToScheduler(j, settled)
		s.log.Info("job resumed", "job", r.ID, "settled", len(settled), "subtasks", len(r.Subtasks), "recounted", recounted)
	}
	return nil
}

// damagedSettled logs each of a resumed job's damaged settled entries
// and returns how many there are: their subtasks are counted again.
func (s *Server) damagedSettled(id api.JobID, damaged []DamagedSettled) int {
	for _, d := range damaged {
		s.log.Warn("a settled subtask's stored count is damaged; it is counted again", "job", id, "subtask", d.Index,
			"bucket", "jobs/"+string(id)+"/settled", "key", hex.EncodeToString(d.Key), "err", d.Err)
	}
	return len(damaged)
}

// dropUnsettled adds recounted to a resumed job's count of subtasks
// counted again for damage. When fewer than the stored settled entries
// are resumed (damaged ones, or per-vertex ones without their partials),
// it records settled as the job's settled subtasks, so that a later
// restart neither finds the same damage again nor resumes as settled a
// subtask that is being counted again.
func (s *Server) dropUnsettled(j *jobInfo, settled map[int]uint64, stored, recounted int) {
	j.rec.Recounted += int64(recounted)
	if len(settled) == stored && recounted == 0 {
		return
	}
	rec := j.rec
	rec.Subtasks, rec.Settled = nil, settled
	if err := s.db.ReplaceSettled(rec); err != nil {
		s.log.Error("recording which settled subtasks are counted again", "job", j.rec.ID, "err", err)
	}
}
