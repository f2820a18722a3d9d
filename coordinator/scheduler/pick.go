package scheduler

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/trigrid/trigrid/api"
)

// votes counts st's answers: the first count of each worker not found
// faulty, in attempt order.
func (s *Scheduler) votes(st *subtask) (workers []api.WorkerID, values []uint64) {
	for i := range st.tries {
		t := &st.tries[i]
		if t.state != tryCounted || s.faulty[t.worker] != nil || slices.Contains(workers, t.worker) {
			continue
		}
		workers = append(workers, t.worker)
		values = append(values, t.triangles)
	}
	return workers, values
}

// wants reports whether st needs another attempt handed out: it is
// unsettled and its running attempts plus counts fall short of what
// settles it.
func (s *Scheduler) wants(j *job, st *subtask) bool {
	if j.state.Finished() || st.settled {
		return false
	}
	voters, values := s.votes(st)
	need := 1
	if s.cfg.Verify {
		need = 2
	}
	if !allEqual(values) {
		need = 3
	}
	return st.running()+len(voters) < need
}

func allEqual(v []uint64) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}

// eligible reports whether w may take st: never a second copy on the same
// worker, and not on a worker where it failed while another worker could
// take it.
func (s *Scheduler) eligible(st *subtask, w api.WorkerID) bool {
	if st.busyWith(w) {
		return false
	}
	if !st.failedOn(w) {
		return true
	}
	for _, x := range s.workerOrder {
		if x != w && s.faulty[x] == nil && !st.busyWith(x) && !st.failedOn(x) {
			return false
		}
	}
	return true
}

// qualified reports whether some connected, sound worker may take st.
func (s *Scheduler) qualified(st *subtask) bool {
	for _, x := range s.workerOrder {
		if s.faulty[x] == nil && !st.busyWith(x) {
			return true
		}
	}
	return false
}

func (s *Scheduler) soundWorkers() int {
	n := 0
	for _, x := range s.workerOrder {
		if s.faulty[x] == nil {
			n++
		}
	}
	return n
}

func (s *Scheduler) requeueIfWanted(j *job, st *subtask) {
	if !s.wants(j, st) {
		return
	}
	if len(st.tries) > 0 {
		st.requeued++
		j.tally.requeued++
	}
	s.addRetry(j, st)
}

func (s *Scheduler) addRetry(j *job, st *subtask) {
	if st.inRetry {
		return
	}
	st.inRetry = true
	j.retry = append(j.retry, st.index)
}

// dispatch gives work to every worker with demand, in join order, each
// up to its fair share (fairShare).
func (s *Scheduler) dispatch() {
	var spec *stragglers
	// The share is at least the attempts still to hand out over every
	// connected worker's slots; the exact one (a pass over the workers)
	// is taken only for a worker whose demand could go beyond that.
	var exact *share
	least := s.leastShare()
	for _, w := range s.workerList {
		if w.demand <= 0 || w.suspect {
			continue
		}
		if s.faulty[w.id] != nil {
			w.demand = 0
			continue
		}
		limit := least.limit(w)
		if len(w.running)+w.demand > limit {
			if exact == nil {
				sh := s.fairShare()
				exact = &sh
			}
			limit = exact.limit(w)
		}
		for w.demand > 0 && len(w.running) < limit {
			j, idx, ok := s.pick(w.id, w)
			if !ok {
				break
			}
			s.assign(w.id, w, j, idx, false)
		}
		// A worker held back at its share leaves the fresh work to the
		// others; only one that found none gets a speculative copy.
		if w.demand > 0 && len(w.running) < limit && !s.cfg.NoSpeculation {
			if spec == nil {
				spec = s.findStragglers()
			}
			s.speculate(w, spec)
		}
	}
}

// share is the fair share of the outstanding attempts per slot: out of
// outstanding attempts (those running and those still to hand out),
// slots of the workers that may take work.
type share struct{ outstanding, slots int }

// fairShare sizes the share for one dispatch. A worker holds at most its
// slots' part of the outstanding attempts, rounded up: a pull larger than
// that (a worker that asks far ahead, or the first to ask for a job) gets
// the rest only as the others hold theirs, so a job of few subtasks
// spreads over the workers from the start, and the last subtasks of a
// long one are not all held by one. A worker running nothing has a limit
// of at least one while anything is outstanding. The limit does not
// change within a dispatch: attempts handed out move from waiting to
// running.
func (s *Scheduler) fairShare() share {
	var sh share
	if s.cfg.NoFairShare {
		return share{outstanding: -1, slots: 1}
	}
	for _, j := range s.order {
		if !j.state.Finished() {
			sh.outstanding += j.fresh + len(j.retry)
		}
	}
	for _, w := range s.workerList {
		sh.outstanding += len(w.running)
		if !w.suspect && s.faulty[w.id] == nil {
			sh.slots += w.slots()
		}
	}
	return sh
}

// leastShare is a share no larger than fairShare's: the attempts still to
// hand out, over the slots of every connected worker.
func (s *Scheduler) leastShare() share {
	if s.cfg.NoFairShare {
		return share{outstanding: -1, slots: 1}
	}
	sh := share{slots: s.slots}
	for _, j := range s.order {
		if !j.state.Finished() {
			sh.outstanding += j.fresh + len(j.retry)
		}
	}
	return sh
}

// countSlots sums the connected workers' slots, as they join, leave or
// say hello again.
func (s *Scheduler) countSlots() {
	s.slots = 0
	for _, w := range s.workerList {
		s.slots += w.slots()
	}
}

// limit is how many attempts w may hold.
func (sh share) limit(w *worker) int {
	if sh.slots == 0 {
		return 0
	}
	if sh.outstanding < 0 {
		return math.MaxInt
	}
	return (sh.outstanding*w.slots() + sh.slots - 1) / sh.slots
}

// pick chooses w's next subtask: from the oldest job with work for w, a
// requeued subtask first, then the next of the (I, J) group w last took
// from, then a group no worker has taken from yet, then any.
func (s *Scheduler) pick(id api.WorkerID, w *worker) (*job, int, bool) {
	for _, j := range s.order {
		if j.state.Finished() || !canRun(w, j) {
			continue
		}
		for i := 0; i < len(j.retry); i++ {
			st := &j.tasks[j.retry[i]]
			if !s.wants(j, st) {
				st.inRetry = false
				j.retry = slices.Delete(j.retry, i, i+1)
				i--
				continue
			}
			if s.eligible(st, id) {
				st.inRetry = false
				st.waitFrom = -1
				j.retry = slices.Delete(j.retry, i, i+1)
				return j, st.index, true
			}
		}
		if w.hasLast && w.lastJob == j.spec.ID {
			if g := j.groupOf[w.lastIJ]; g != nil && !g.empty() {
				return j, j.pop(g), true
			}
		}
		for ; j.freshNext < len(j.groups); j.freshNext++ {
			g := j.groups[j.freshNext]
			if !g.taken && !g.empty() {
				g.taken = true
				return j, j.pop(g), true
			}
		}
		for ; j.anyNext < len(j.groups); j.anyNext++ {
			if g := j.groups[j.anyNext]; !g.empty() {
				return j, j.pop(g), true
			}
		}
	}
	return nil, 0, false
}

// pop takes the next fresh subtask of j's group g.
func (j *job) pop(g *group) int {
	idx := g.items[g.head]
	g.head++
	j.fresh--
	return idx
}

// assign hands an attempt of subtask idx of j to worker w.
func (s *Scheduler) assign(id api.WorkerID, w *worker, j *job, idx int, speculative bool) {
	st := &j.tasks[idx]
	t := j.work(idx)
	attempt := len(st.tries) + 1
	j.addTry(st, try{worker: id, attempt: attempt, start: s.now,
		deadline: s.now + s.cfg.LeaseTicks, speculative: speculative})
	ref := api.SubtaskRef{Job: j.spec.ID, Index: idx}
	w.running[ref] = attempt
	w.demand--
	// Affinity follows the group w takes fresh subtasks from; a retry or a
	// copy from a drained group does not pull w away from its group.
	if g := j.groupOf[j.groupKey(t)]; g != nil && !g.empty() {
		g.taken = true
		w.lastJob, w.lastIJ, w.hasLast = j.spec.ID, j.groupKey(t), true
	}
	if j.state == JobQueued {
		j.state = JobRunning
	}
	if j.started < 0 {
		j.started = s.now
	}
	s.emit(Decision{Kind: DecideAssign, Worker: id, Job: j.spec.ID, Ref: ref, Attempt: attempt, Speculative: speculative,
		Assignment: api.Assignment{Ref: ref, Attempt: attempt, I: t.I, J: t.J, K: t.K,
			Clip: t.Clip, TailOffset: t.TailOffset, Edges: t.Edges, Work: t.Work,
			Store: j.spec.Store, Kernel: j.spec.Kernel, PerVertex: j.spec.PerVertex, PerEdge: j.spec.PerEdge}})
	if s.wants(j, st) {
		s.addRetry(j, st)
	}
}

// straggler is an attempt running alone for longer than SpeculateFactor
// times its estimate, in a job at least SpeculateAfter done.
type straggler struct {
	j     *job
	order int // the job's position
	idx   int
	score float64 // elapsed / estimate
}

type stragglers struct{ list []straggler }

// findStragglers lists the stragglers, the oldest job's first, then the
// worst first.
func (s *Scheduler) findStragglers() *stragglers {
	out := &stragglers{}
	for pos, j := range s.order {
		if j.state != JobRunning || len(j.ratios) == 0 ||
			float64(j.settled) < s.cfg.SpeculateAfter*float64(len(j.tasks)) {
			continue
		}
		med := j.medianRatio()
		for _, x := range s.workerList {
			for ref, a := range x.running {
				if ref.Job != j.spec.ID {
					continue
				}
				st := &j.tasks[ref.Index]
				if st.speculated > 0 || st.running() != 1 {
					continue
				}
				elapsed := s.now - st.try(a).start
				if elapsed < s.cfg.SpeculateMinTicks {
					continue
				}
				est := med * float64(j.work(ref.Index).Work+1)
				if float64(elapsed) <= s.cfg.SpeculateFactor*est {
					continue
				}
				out.list = append(out.list, straggler{j: j, order: pos, idx: ref.Index, score: float64(elapsed) / (est + 1)})
			}
		}
	}
	slices.SortFunc(out.list, func(a, b straggler) int {
		switch {
		case a.order != b.order:
			return a.order - b.order
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.idx - b.idx
	})
	return out
}

// speculate gives idle worker w a copy of the first straggler it is not
// already running.
func (s *Scheduler) speculate(w *worker, sp *stragglers) {
	for i, c := range sp.list {
		st := &c.j.tasks[c.idx]
		if c.j.state != JobRunning || st.settled || st.speculated > 0 || st.running() != 1 || st.busyWith(w.id) || !canRun(w, c.j) {
			continue
		}
		sp.list = slices.Delete(sp.list, i, i+1)
		st.speculated++
		c.j.tally.speculated++
		s.assign(w.id, w, c.j, c.idx, true)
		return
	}
}

// medianRatio is the median of the settled subtasks' ticks per work unit,
// recomputed when their number has grown by a tenth.
func (j *job) medianRatio() float64 {
	if n := len(j.ratios); n != j.medianOf && (j.medianOf == 0 || n >= j.medianOf+j.medianOf/10+1) {
		c := slices.Clone(j.ratios)
		slices.Sort(c)
		j.median, j.medianOf = c[len(c)/2], n
	}
	return j.median
}

// checkStarved fails jobs whose requeued subtasks no connected worker may
// take (all of them counted it already) for longer than
// RecountWaitTicks. With no sound worker connected, jobs wait.
func (s *Scheduler) checkStarved() {
	if s.soundWorkers() == 0 {
		return
	}
	for _, j := range s.order {
		if j.state.Finished() {
			continue
		}
		if s.kernelStarved(j) {
			continue
		}
		for _, idx := range j.retry {
			st := &j.tasks[idx]
			if !s.wants(j, st) || s.qualified(st) {
				st.waitFrom = -1
				continue
			}
			if st.waitFrom < 0 {
				st.waitFrom = s.now
				continue
			}
			if s.now-st.waitFrom > s.cfg.RecountWaitTicks {
				s.failJob(j, &SubtaskFailedError{Job: j.spec.ID, Index: idx, Subtask: j.work(idx),
					Reason: fmt.Sprintf("needs a count from a worker that has not counted it, and none joined in %d ticks", s.cfg.RecountWaitTicks),
					Tries:  st.reports()})
				break
			}
		}
	}
}

// canRun says whether w may count j's subtasks: j names no kernel, w's
// hello listed no kernels (it did not say), or the list has j's.
func canRun(w *worker, j *job) bool {
	return j.spec.Kernel == "" || len(w.hello.Kernels) == 0 || slices.Contains(w.hello.Kernels, j.spec.Kernel)
}

// kernelStarved fails j, and says so, when no connected sound worker has
// had j's kernel for longer than RecountWaitTicks; a worker with the
// kernel joining in time lets it go on.
func (s *Scheduler) kernelStarved(j *job) bool {
	if j.spec.Kernel == "" {
		return false
	}
	var have []string
	for _, w := range s.workerList {
		if s.faulty[w.id] != nil {
			continue
		}
		if canRun(w, j) {
			j.kernelWait = -1
			return false
		}
		for _, k := range w.hello.Kernels {
			if !slices.Contains(have, k) {
				have = append(have, k)
			}
		}
	}
	if j.kernelWait < 0 {
		j.kernelWait = s.now
		return false
	}
	if s.now-j.kernelWait <= s.cfg.RecountWaitTicks {
		return false
	}
	slices.Sort(have)
	s.failJob(j, fmt.Errorf("coordinator: job %s names kernel %q, and no connected worker has it (theirs: %s) after %d ticks",
		j.spec.ID, j.spec.Kernel, strings.Join(have, ", "), s.cfg.RecountWaitTicks))
	return true
}
