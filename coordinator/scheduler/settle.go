package scheduler

import (
	"github.com/trigrid/trigrid/api"
)

// evaluate decides st from its counts. One value counted by enough
// workers (1, or 2 with Verify) settles it. Different values need a
// strict majority of at least two workers among at least three counts:
// the majority settles it and the others are faulty; three or more counts
// without a majority fail the job. Anything short of that unsettles st
// and asks for another count.
func (s *Scheduler) evaluate(j *job, st *subtask) {
	workers, values := s.votes(st)
	if len(values) == 0 {
		s.unsettle(j, st)
		s.requeueIfWanted(j, st)
		return
	}
	if allEqual(values) {
		need := 1
		if s.cfg.Verify {
			need = 2
		}
		if len(values) >= need {
			s.settleAt(j, st, values[0])
		} else {
			s.unsettle(j, st)
			s.requeueIfWanted(j, st)
		}
		return
	}
	tally := map[uint64]int{}
	top, topN := values[0], 0
	for _, v := range values {
		tally[v]++
		if tally[v] > topN || (tally[v] == topN && v == values[0]) {
			top, topN = v, tally[v]
		}
	}
	switch {
	case topN >= 2 && 2*topN > len(values):
		var agreeing []api.WorkerID
		for i, v := range values {
			if v == top {
				agreeing = append(agreeing, workers[i])
			}
		}
		s.settleAt(j, st, top)
		for i, v := range values {
			if v != top {
				s.markFaulty(workers[i], &FaultyWorkerError{Worker: workers[i], Job: j.spec.ID, Index: st.index,
					Subtask: j.work(st.index), Got: v, Agreed: top, Agreeing: agreeing})
			}
		}
	case len(values) >= 3:
		counts := make(map[api.WorkerID]uint64, len(values))
		for i, v := range values {
			counts[workers[i]] = v
		}
		s.failJob(j, &DisagreementError{Job: j.spec.ID, Index: st.index, Subtask: j.work(st.index),
			Counts: counts, Tries: st.reports()})
	default:
		if !st.disputed {
			st.disputed = true
			j.recounts++
		}
		s.unsettle(j, st)
		s.requeueIfWanted(j, st)
	}
}

// settleAt settles st at v: the value is reported for persistence, other
// running attempts are cancelled, and the job finishes when it was the
// last.
func (s *Scheduler) settleAt(j *job, st *subtask, v uint64) {
	valid := func(t *try) bool {
		return t != nil && t.state == tryCounted && t.triangles == v && s.faulty[t.worker] == nil
	}
	if st.settled && st.value == v && (st.won == 0 || valid(st.try(int(st.won)))) {
		return // the accepted attempt stands
	}
	var win *try
	for i := range st.tries {
		if t := &st.tries[i]; valid(t) {
			win = t
			break
		}
	}
	first := !st.settled
	j.settleValue(st, v)
	if first {
		s.recordRatio(j, st)
	}
	ref := api.SubtaskRef{Job: j.spec.ID, Index: st.index}
	d := Decision{Kind: DecideSubtaskDone, Job: j.spec.ID, Ref: ref, Triangles: v, Prev: s.accepted(st)}
	st.won = 0
	if win != nil {
		d.Worker, d.Attempt, d.Partial, d.Times = win.worker, win.attempt, win.partial, win.times
		st.won = int32(win.attempt)
	}
	s.emit(d)
	for i := range st.tries {
		if t := &st.tries[i]; t.state == tryRunning {
			s.cancelTry(ref, t)
		}
	}
	if j.settled == len(j.tasks) {
		s.finishJob(j)
	}
}

// recordRatio notes how long st's first count took per unit of work.
func (s *Scheduler) recordRatio(j *job, st *subtask) {
	for i := range st.tries {
		if t := &st.tries[i]; t.state == tryCounted {
			j.ratios = append(j.ratios, float64(s.now-t.start)/float64(j.work(st.index).Work+1))
			return
		}
	}
}

func (s *Scheduler) unsettle(j *job, st *subtask) {
	if !st.settled {
		return
	}
	j.unsettleValue(st)
	if st.restored {
		j.tally.restored--
	}
	st.restored = false
	s.emit(Decision{Kind: DecideSubtaskReopened, Job: j.spec.ID, Ref: api.SubtaskRef{Job: j.spec.ID, Index: st.index}, Prev: s.accepted(st)})
	st.won = 0
}

// accepted is the attempt whose count settled st, nil when none did (or
// it was settled before a restart).
func (s *Scheduler) accepted(st *subtask) *Accepted {
	t := st.try(int(st.won))
	if t == nil {
		return nil
	}
	return &Accepted{Worker: t.worker, Attempt: t.attempt, Times: t.times}
}

func (s *Scheduler) cancelTry(ref api.SubtaskRef, t *try) {
	j := s.jobs[ref.Job]
	j.setTry(&j.tasks[ref.Index], t, tryCancelled)
	if w := s.workers[t.worker]; w != nil {
		delete(w.running, ref)
	}
	s.emit(Decision{Kind: DecideCancel, Worker: t.worker, Job: ref.Job, Ref: ref, Attempt: t.attempt})
}

// markFaulty quarantines a worker whose count was outvoted: it gets no
// more work, its running attempts are cancelled, and every count it gave
// in an unfinished job is discarded and recounted elsewhere.
func (s *Scheduler) markFaulty(id api.WorkerID, err *FaultyWorkerError) {
	if s.faulty[id] != nil {
		return
	}
	s.faulty[id] = err
	s.emit(Decision{Kind: DecideWorkerFaulty, Worker: id, Job: err.Job,
		Ref: api.SubtaskRef{Job: err.Job, Index: err.Index}, Err: err})
	if w := s.workers[id]; w != nil {
		w.demand = 0
		for _, ref := range sortedRefs(w.running) {
			j := s.jobs[ref.Job]
			st := &j.tasks[ref.Index]
			s.cancelTry(ref, st.try(w.running[ref]))
			s.requeueIfWanted(j, st)
		}
	}
	for _, j := range s.order {
		if j.state.Finished() {
			continue
		}
		idxs := j.voted[id]
		delete(j.voted, id)
		for _, idx := range idxs {
			if j.state.Finished() {
				break
			}
			st := &j.tasks[idx]
			for i := range st.tries {
				if t := &st.tries[i]; t.worker == id && t.state == tryCounted {
					j.setTry(st, t, tryDiscarded)
				}
			}
			s.evaluate(j, st)
		}
	}
}

// finishJob ends j with its exact total, the sum of its settled values.
func (s *Scheduler) finishJob(j *job) {
	var total uint64
	for i := range j.tasks {
		total += j.tasks[i].value
	}
	j.total, j.state = total, JobDone
	j.voted = nil
	s.cancelRunning(j)
	for i := range j.tasks { // partials were handed on with DecideSubtaskDone
		for k := range j.tasks[i].tries {
			j.tasks[i].tries[k].partial = nil
		}
	}
	s.emit(Decision{Kind: DecideJobDone, Job: j.spec.ID, Total: total})
}

func (s *Scheduler) failJob(j *job, err error) {
	if j.state.Finished() {
		return
	}
	j.state, j.err = JobFailed, err
	j.voted = nil
	s.cancelRunning(j)
	s.emit(Decision{Kind: DecideJobFailed, Job: j.spec.ID, Err: err})
}

// cancelRunning cancels every running attempt of j.
func (s *Scheduler) cancelRunning(j *job) {
	for idx := range j.tasks {
		st := &j.tasks[idx]
		for i := range st.tries {
			if t := &st.tries[i]; t.state == tryRunning {
				s.cancelTry(api.SubtaskRef{Job: j.spec.ID, Index: idx}, t)
			}
		}
	}
	j.retry = nil
}

// Quarantine marks a worker faulty for a reason found earlier, as a
// restarted coordinator reads it from its state: the worker gets no more
// work and its results are ignored; a connected one has its running
// attempts cancelled and requeued. A worker already faulty keeps its
// first reason.
func (s *Scheduler) Quarantine(id api.WorkerID, reason error) []Decision {
	if id == "" || reason == nil || s.faulty[id] != nil {
		return s.flush()
	}
	s.faulty[id] = reason
	if w := s.workers[id]; w != nil {
		w.demand = 0
		for _, ref := range sortedRefs(w.running) {
			j := s.jobs[ref.Job]
			st := &j.tasks[ref.Index]
			s.cancelTry(ref, st.try(w.running[ref]))
			s.requeueIfWanted(j, st)
		}
		s.dispatch()
	}
	return s.flush()
}
