package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trigrid/trigrid/api"
)

// AddJob queues a job behind the others (FIFO; a later job's subtasks go
// to workers the earlier jobs have nothing for).
func (s *Scheduler) AddJob(spec JobSpec) ([]Decision, error) {
	if spec.ID == "" {
		return nil, fmt.Errorf("coordinator: job with an empty id")
	}
	if _, ok := s.jobs[spec.ID]; ok {
		return nil, fmt.Errorf("%w: %s", ErrJobExists, spec.ID)
	}
	for idx := range spec.Settled {
		if idx < 0 || idx >= len(spec.Subtasks) {
			return nil, fmt.Errorf("coordinator: job %s: settled subtask %d out of range [0, %d)", spec.ID, idx, len(spec.Subtasks))
		}
	}
	j := &job{
		kernelWait: -1,
		started:    -1,
		spec:       spec,
		tasks:      make([]subtask, len(spec.Subtasks)),
		state:      JobQueued,
		groupOf:    make(map[ijKey]*group),
		perWorker:  make(map[api.WorkerID]int),
	}
	for idx, t := range spec.Subtasks {
		st := &j.tasks[idx]
		st.index, st.waitFrom = idx, -1
		if v, ok := spec.Settled[idx]; ok {
			j.settleValue(st, v)
			st.restored = true
			j.tally.restored++
			continue
		}
		k := j.groupKey(t)
		g := j.groupOf[k]
		if g == nil {
			g = &group{key: k}
			j.groupOf[k] = g
			j.groups = append(j.groups, g)
		}
		g.items = append(g.items, idx)
		j.fresh++
	}
	s.jobs[spec.ID] = j
	s.order = append(s.order, j)
	if j.settled == len(j.tasks) {
		s.finishJob(j)
	}
	s.dispatch()
	return s.flush(), nil
}

// CancelJob stops a job: its running attempts are cancelled and it ends
// as cancelled. Cancelling a finished job changes nothing.
func (s *Scheduler) CancelJob(id api.JobID) ([]Decision, error) {
	j, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownJob, id)
	}
	if j.state.Finished() {
		return nil, nil
	}
	j.state, j.err = JobCancelled, ErrJobCanceled
	j.voted = nil
	s.cancelRunning(j)
	s.emit(Decision{Kind: DecideJobCancelled, Job: id, Err: ErrJobCanceled})
	s.dispatch()
	return s.flush(), nil
}

// Forget drops a finished job and everything the scheduler kept of it;
// its views are gone afterwards. A job still running is an error.
func (s *Scheduler) Forget(id api.JobID) error {
	j, ok := s.jobs[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownJob, id)
	}
	if !j.state.Finished() {
		return fmt.Errorf("coordinator: job %s is %s: only a finished job can be forgotten", id, j.state)
	}
	delete(s.jobs, id)
	s.order = slices.DeleteFunc(s.order, func(x *job) bool { return x == j })
	for _, w := range s.workers {
		if w.lastJob == id {
			w.hasLast = false
		}
	}
	return nil
}

// WorkerJoined adds a worker (or refreshes one that reconnected without
// leaving). It gets work once it pulls.
func (s *Scheduler) WorkerJoined(h api.Hello) []Decision {
	if h.Worker == "" {
		s.ignore("", api.SubtaskRef{}, 0, "hello without a worker id")
		return s.flush()
	}
	if w, ok := s.workers[h.Worker]; ok {
		// A hello comes from a process that starts or reconnects, which
		// is not draining.
		w.hello, w.draining = h, false
		s.countSlots()
		return s.flush()
	}
	s.departed = slices.DeleteFunc(s.departed, func(d DepartedWorker) bool { return d.Hello.Worker == h.Worker })
	w := &worker{id: h.Worker, hello: h, running: make(map[api.SubtaskRef]int), joined: s.now}
	s.workers[h.Worker] = w
	s.workerOrder = append(s.workerOrder, h.Worker)
	s.workerList = append(s.workerList, w)
	s.countSlots()
	return s.flush()
}

// WorkerLeft removes a worker (its stream broke, membership declared it
// dead, or it left): its running attempts are lost and their subtasks
// requeued.
func (s *Scheduler) WorkerLeft(id api.WorkerID, reason string) []Decision {
	w, ok := s.workers[id]
	if !ok {
		s.ignore(id, api.SubtaskRef{}, 0, "unknown worker left: %s", reason)
		return s.flush()
	}
	for _, ref := range sortedRefs(w.running) {
		j := s.jobs[ref.Job]
		st := &j.tasks[ref.Index]
		t := st.try(w.running[ref])
		j.setTry(st, t, tryLost)
		t.reason = reason
		delete(w.running, ref)
		s.afterLoss(j, st)
	}
	delete(s.workers, id)
	s.departed = append(s.departed, DepartedWorker{Hello: w.hello, Counted: w.counted, Failed: w.failed,
		Joined: w.joined, Left: s.now, Reason: reason})
	if len(s.departed) > maxDeparted {
		s.departed = slices.Delete(s.departed, 0, len(s.departed)-maxDeparted)
	}
	s.workerOrder = slices.DeleteFunc(s.workerOrder, func(x api.WorkerID) bool { return x == id })
	s.workerList = slices.DeleteFunc(s.workerList, func(x *worker) bool { return x == w })
	s.countSlots()
	s.dispatch()
	return s.flush()
}

// Pull says the worker can take n more subtasks. Assignments go out as
// work is available, now or after later events.
func (s *Scheduler) Pull(id api.WorkerID, n int) []Decision {
	w, ok := s.workers[id]
	switch {
	case !ok:
		s.ignore(id, api.SubtaskRef{}, 0, "pull from unknown worker")
	case s.faulty[id] != nil:
		s.ignore(id, api.SubtaskRef{}, 0, "pull from faulty worker")
	case n <= 0:
		s.ignore(id, api.SubtaskRef{}, 0, "pull of %d subtasks", n)
	default:
		w.demand += n
		w.suspect = false
		s.dispatch()
	}
	return s.flush()
}

// Heartbeat renews the leases of the attempts the worker says it is
// running.
func (s *Scheduler) Heartbeat(hb api.Heartbeat) []Decision {
	w, ok := s.workers[hb.Worker]
	if !ok {
		s.ignore(hb.Worker, api.SubtaskRef{}, 0, "heartbeat from unknown worker")
		return s.flush()
	}
	w.suspect = false
	for _, ref := range hb.Running {
		a, ok := w.running[ref]
		if !ok {
			continue
		}
		s.jobs[ref.Job].tasks[ref.Index].try(a).deadline = s.now + s.cfg.LeaseTicks
	}
	return s.flush()
}

// Tick advances time by one tick: lapsed leases are requeued, subtasks
// that no worker may recount are failed after RecountWaitTicks, and idle
// workers may get speculative copies of stragglers.
func (s *Scheduler) Tick() []Decision {
	s.now++
	for _, id := range slices.Clone(s.workerOrder) {
		w := s.workers[id]
		for _, ref := range sortedRefs(w.running) {
			a, ok := w.running[ref]
			if !ok {
				continue // cancelled by a job that failed over an earlier lapse
			}
			j := s.jobs[ref.Job]
			st := &j.tasks[ref.Index]
			t := st.try(a)
			if t.deadline > s.now {
				continue
			}
			j.setTry(st, t, tryExpired)
			delete(w.running, ref)
			w.suspect = true // no more work until it shows life
			s.afterLoss(j, st)
		}
	}
	s.checkStarved()
	s.dispatch()
	return s.flush()
}

// Result takes a worker's answer to an attempt.
func (s *Scheduler) Result(r api.Result) []Decision {
	j, ok := s.jobs[r.Ref.Job]
	if !ok {
		s.ignore(r.Worker, r.Ref, r.Attempt, "result for unknown job")
		return s.flush()
	}
	if r.Ref.Index < 0 || r.Ref.Index >= len(j.tasks) {
		s.ignore(r.Worker, r.Ref, r.Attempt, "result for subtask %d of %d", r.Ref.Index, len(j.tasks))
		return s.flush()
	}
	st := &j.tasks[r.Ref.Index]
	t := st.try(r.Attempt)
	if t == nil || t.worker != r.Worker {
		s.ignore(r.Worker, r.Ref, r.Attempt, "attempt %d was not given to this worker", r.Attempt)
		return s.flush()
	}
	if w := s.workers[r.Worker]; w != nil {
		w.suspect = false
	}
	if w := s.workers[r.Worker]; w != nil && t.state == tryRunning {
		delete(w.running, r.Ref)
		if r.Err == "" && !r.HandedBack {
			w.counted++
		} else if !r.HandedBack {
			w.failed++
		}
	}
	if w := s.workers[r.Worker]; w != nil && r.HandedBack && strings.HasPrefix(r.Err, api.HandBackDraining) {
		w.draining = true
	}
	if j.state.Finished() {
		if t.state == tryRunning {
			j.setTry(st, t, tryCancelled)
		}
		s.ignore(r.Worker, r.Ref, r.Attempt, "job is %s", j.state)
		return s.flush()
	}
	switch {
	case t.state == tryCounted || t.state == tryFailed || t.state == tryHanded || t.state == tryDiscarded:
		s.ignore(r.Worker, r.Ref, r.Attempt, "duplicate result")
	case s.faulty[r.Worker] != nil:
		if r.Err == "" && !r.HandedBack {
			j.setTry(st, t, tryDiscarded)
			t.triangles = r.Triangles
		} else if t.state == tryRunning {
			j.setTry(st, t, tryCancelled)
		}
		s.ignore(r.Worker, r.Ref, r.Attempt, "worker is faulty")
		s.afterLoss(j, st)
	case r.HandedBack:
		if t.state != tryRunning {
			s.ignore(r.Worker, r.Ref, r.Attempt, "handed back after it ended")
			break
		}
		j.setTry(st, t, tryHanded)
		t.reason = r.Err
		s.requeueIfWanted(j, st)
	case r.Err != "":
		if t.state != tryRunning {
			s.ignore(r.Worker, r.Ref, r.Attempt, "error after the attempt ended: %s", r.Err)
			break
		}
		j.setTry(st, t, tryFailed)
		t.reason = r.Err
		s.afterLoss(j, st)
	default:
		j.setTry(st, t, tryCounted)
		t.triangles, t.partial, t.times = r.Triangles, r.Partial, r.Times()
		if j.voted == nil {
			j.voted = map[api.WorkerID][]int{}
		}
		j.voted[r.Worker] = append(j.voted[r.Worker], r.Ref.Index)
		j.perWorker[r.Worker]++
		s.evaluate(j, st)
	}
	s.dispatch()
	return s.flush()
}

// afterLoss handles an attempt that ended without a count: the job fails
// once the subtask has failed MaxAttempts times, else the subtask is
// requeued if it needs another attempt.
func (s *Scheduler) afterLoss(j *job, st *subtask) {
	if j.state.Finished() || st.settled {
		return
	}
	if n := st.failures(); n >= s.cfg.MaxAttempts {
		s.failJob(j, &SubtaskFailedError{Job: j.spec.ID, Index: st.index, Subtask: j.work(st.index),
			Reason: fmt.Sprintf("%d attempts failed", n), Tries: st.reports()})
		return
	}
	s.requeueIfWanted(j, st)
}

func sortedRefs(m map[api.SubtaskRef]int) []api.SubtaskRef {
	refs := make([]api.SubtaskRef, 0, len(m))
	for r := range m {
		refs = append(refs, r)
	}
	slices.SortFunc(refs, func(a, b api.SubtaskRef) int {
		if a.Job != b.Job {
			if a.Job < b.Job {
				return -1
			}
			return 1
		}
		return a.Index - b.Index
	})
	return refs
}
