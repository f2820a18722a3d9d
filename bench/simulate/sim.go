package simulate

import (
	"container/heap"
	"container/list"
	"fmt"
	"math"
	"slices"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
	"github.com/trigrid/trigrid/partition"
)

// MaxWorkers bounds a simulation's workers.
const MaxWorkers = 1 << 20

// Config is one simulation. Start from DefaultConfig.
type Config struct {
	Workers int
	Model   Model
	// Scheduler configures the real scheduler core the simulation runs;
	// TickNs is its tick and HeartbeatNs the workers' heartbeat, as the
	// coordinator's --tick and --heartbeat.
	Scheduler   scheduler.Config
	TickNs      int64
	HeartbeatNs int64
	// Speeds, when set, are the workers' speeds relative to the model,
	// repeated over the workers in turn (worker w has Speeds[w % len]):
	// a mixed cluster, e.g. {1, 0.1, 0.1, 0.1} for one worker beside
	// three that take ten times as long over each of their loads,
	// uploads and kernels.
	Speeds []float64
}

// DefaultConfig has the coordinator's defaults: 100 ms ticks, the
// scheduler's default configuration, 1 s heartbeats.
func DefaultConfig(workers int, m Model) Config {
	return Config{Workers: workers, Model: m, Scheduler: scheduler.DefaultConfig(), TickNs: 100e6, HeartbeatNs: 1e9}
}

// Result is one simulated job.
type Result struct {
	Workers  int `json:"workers"`
	P        int `json:"p"`
	Subtasks int `json:"subtasks"`
	// MakespanSeconds is from submission to the job's end, StartNs and
	// EndNs included.
	MakespanSeconds float64 `json:"makespan_s"`
	// Busy time over the workers: the time a worker's device (or cores)
	// spent on its attempts, upload and kernel, and the loads too where
	// the slot's own cores do them (Model.OverlapLoads false). IR is max
	// over min (TRUST's), nil when a worker counted nothing.
	MinBusySeconds  float64  `json:"min_busy_s"`
	MeanBusySeconds float64  `json:"mean_busy_s"`
	MaxBusySeconds  float64  `json:"max_busy_s"`
	IR              *float64 `json:"ir"`
	// Utilization is the workers' busy share of the makespan; Efficiency
	// T(1) / (N T(N)) when the caller simulated one worker too.
	Utilization float64 `json:"utilization"`
	Efficiency  float64 `json:"efficiency,omitempty"`
	// KernelSeconds and LoadSeconds sum over workers, speculative copies
	// included; LoadElements is the rows plus edges of the blocks loaded.
	KernelSeconds float64 `json:"kernel_s"`
	LoadSeconds   float64 `json:"load_s"`
	LoadElements  int64   `json:"load_elements"`
	Attempts      int     `json:"attempts"`
	Speculated    int     `json:"speculated"`
}

// The simulation's events.
type eventKind uint8

const (
	evDeliver   eventKind = iota + 1 // assignments reach a worker
	evFinish                         // a worker's slot ends an attempt
	evResult                         // a result reaches the coordinator
	evTick                           // the scheduler's tick
	evHeartbeat                      // every worker's heartbeat
	evPull                           // a worker's pull reaches the coordinator
)

type event struct {
	t       int64
	seq     uint64
	kind    eventKind
	worker  int
	as      []api.Assignment
	result  api.Result
	attempt attemptKey
	gen     uint64
}

type attemptKey struct {
	ref     api.SubtaskRef
	attempt int
}

type events []*event

func (q events) Len() int { return len(q) }
func (q events) Less(a, b int) bool {
	if q[a].t != q[b].t {
		return q[a].t < q[b].t
	}
	return q[a].seq < q[b].seq
}
func (q events) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *events) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// sim is one run: the real scheduler, simulated workers and a clock that
// jumps from event to event. Everything is ordered by (time, sequence),
// so a simulation is deterministic.
type sim struct {
	cfg     Config
	grid    *Grid
	tasks   []partition.Subtask
	sched   *scheduler.Scheduler
	workers []*simWorker
	byID    map[api.WorkerID]int
	q       events
	seq     uint64
	now     int64
	done    bool
	doneAt  int64
	res     Result
}

// Simulate runs one job of grid's subtasks on cfg.Workers simulated
// workers under the real scheduler core and returns what it measured.
func Simulate(grid *Grid, cfg Config) (Result, error) {
	if cfg.Workers < 1 || cfg.Workers > MaxWorkers {
		return Result{}, fmt.Errorf("simulate: %d workers: want 1 to %d", cfg.Workers, MaxWorkers)
	}
	if err := cfg.Model.Check("the cost model"); err != nil {
		return Result{}, err
	}
	for _, v := range cfg.Speeds {
		if !(v > 0) || math.IsInf(v, 0) {
			return Result{}, fmt.Errorf("simulate: a worker speed of %v: want a positive number", v)
		}
	}
	if cfg.TickNs <= 0 || cfg.HeartbeatNs <= 0 {
		return Result{}, fmt.Errorf("simulate: tick %d ns, heartbeat %d ns: want positive", cfg.TickNs, cfg.HeartbeatNs)
	}
	sched, err := scheduler.New(cfg.Scheduler)
	if err != nil {
		return Result{}, err
	}
	s := &sim{cfg: cfg, grid: grid, tasks: grid.Subtasks(), sched: sched, byID: map[api.WorkerID]int{}}
	s.res = Result{Workers: cfg.Workers, P: grid.P, Subtasks: len(s.tasks)}
	if err := s.start(); err != nil {
		return Result{}, err
	}
	for !s.done {
		if len(s.q) == 0 {
			return Result{}, fmt.Errorf("simulate: the job stalled at %.3f s with no event left", float64(s.now)/1e9)
		}
		e := heap.Pop(&s.q).(*event)
		s.now = e.t
		if err := s.handle(e); err != nil {
			return Result{}, err
		}
	}
	s.finish()
	return s.res, nil
}

func (s *sim) push(e *event) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.q, e)
}

// start joins the workers, has each pull its capacity, and submits the
// job at StartNs.
func (s *sim) start() error {
	m := &s.cfg.Model
	capacity := 1 + m.Prefetch
	s.now = int64(m.StartNs)
	for w := range s.cfg.Workers {
		id := api.WorkerID(fmt.Sprintf("sim-%d", w+1))
		s.byID[id] = w
		sw := newSimWorker(id, m.CacheBytes)
		if len(s.cfg.Speeds) > 0 {
			sw.speed = s.cfg.Speeds[w%len(s.cfg.Speeds)]
		}
		s.workers = append(s.workers, sw)
		if err := s.apply(s.sched.WorkerJoined(api.Hello{Worker: id, Version: "simulated", Cores: 1, Slots: 1,
			Devices: []api.Device{{Kind: m.Device, Name: m.Device}}})); err != nil {
			return err
		}
		if err := s.apply(s.sched.Pull(id, capacity)); err != nil {
			return err
		}
	}
	ds, err := s.sched.AddJob(scheduler.JobSpec{ID: "simulated", Subtasks: s.tasks, Store: "simulated://"})
	if err != nil {
		return err
	}
	s.push(&event{t: s.now + s.cfg.TickNs, kind: evTick})
	s.push(&event{t: s.now + s.cfg.HeartbeatNs, kind: evHeartbeat})
	return s.apply(ds)
}

// apply carries out the scheduler's decisions: assignments travel to
// their workers, cancellations reach them at once (a cancelled attempt
// only frees its slot early), the job's end stops the simulation.
func (s *sim) apply(ds []scheduler.Decision) error {
	out := map[int][]api.Assignment{}
	var order []int
	for _, d := range ds {
		switch d.Kind {
		case scheduler.DecideAssign:
			w := s.byID[d.Worker]
			if _, ok := out[w]; !ok {
				order = append(order, w)
			}
			out[w] = append(out[w], d.Assignment)
			s.res.Attempts++
			if d.Speculative {
				s.res.Speculated++
			}
		case scheduler.DecideCancel:
			s.cancel(s.byID[d.Worker], attemptKey{d.Ref, d.Attempt})
		case scheduler.DecideJobDone:
			s.done, s.doneAt = true, s.now
		case scheduler.DecideJobFailed, scheduler.DecideJobCancelled:
			return fmt.Errorf("simulate: the job ended at %.3f s: %v", float64(s.now)/1e9, d.Err)
		}
	}
	for _, w := range order {
		s.push(&event{t: s.now + int64(s.cfg.Model.MessageNs), kind: evDeliver, worker: w, as: out[w]})
	}
	return nil
}

func (s *sim) handle(e *event) error {
	switch e.kind {
	case evDeliver:
		w := s.workers[e.worker]
		for _, a := range e.as {
			w.receive(s, a)
		}
		w.tryStart(s)
	case evFinish:
		w := s.workers[e.worker]
		if w.running == nil || w.gen != e.gen {
			return nil // cancelled while it ran
		}
		a := *w.running
		w.running = nil
		w.held = slices.DeleteFunc(w.held, func(k attemptKey) bool { return k == e.attempt })
		s.push(&event{t: s.now + int64(s.cfg.Model.MessageNs), kind: evResult, worker: e.worker,
			result: api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: w.id, Kernel: "simulated"}})
		w.tryStart(s)
	case evResult:
		if err := s.apply(s.sched.Result(e.result)); err != nil {
			return err
		}
		if !s.done {
			return s.apply(s.sched.Pull(e.result.Worker, 1))
		}
	case evPull:
		if !s.done {
			return s.apply(s.sched.Pull(s.workers[e.worker].id, 1))
		}
	case evTick:
		if err := s.apply(s.sched.Tick()); err != nil {
			return err
		}
		s.push(&event{t: s.now + s.cfg.TickNs, kind: evTick})
	case evHeartbeat:
		for _, w := range s.workers {
			refs := make([]api.SubtaskRef, len(w.held))
			for i, k := range w.held {
				refs[i] = k.ref
			}
			if err := s.apply(s.sched.Heartbeat(api.Heartbeat{Worker: w.id, Running: refs})); err != nil {
				return err
			}
		}
		s.push(&event{t: s.now + s.cfg.HeartbeatNs, kind: evHeartbeat})
	}
	return nil
}

// cancel drops an attempt at worker w: a queued one is removed, a
// running one stops now; either way the worker pulls another in its
// place.
func (s *sim) cancel(w int, k attemptKey) {
	sw := s.workers[w]
	n := len(sw.held)
	sw.held = slices.DeleteFunc(sw.held, func(x attemptKey) bool { return x == k })
	if len(sw.held) < n {
		s.push(&event{t: s.now + int64(s.cfg.Model.MessageNs), kind: evPull, worker: w})
	}
	sw.queue = slices.DeleteFunc(sw.queue, func(q queued) bool { return attemptKey{q.a.Ref, q.a.Attempt} == k })
	if sw.running != nil && (attemptKey{sw.running.Ref, sw.running.Attempt}) == k {
		left := max(sw.finishAt-s.now, 0)
		sw.busy -= min(left, sw.runBusy)
		sw.kernel -= min(left, sw.runKernel)
		sw.running = nil
		sw.gen++
		sw.tryStart(s)
	}
}

// finish fills the result's figures from the workers.
func (s *sim) finish() {
	r := &s.res
	r.MakespanSeconds = (float64(s.doneAt) + s.cfg.Model.EndNs) / 1e9
	busy := make([]float64, len(s.workers))
	var sum float64
	for i, w := range s.workers {
		busy[i] = float64(w.busy) / 1e9
		sum += busy[i]
		r.KernelSeconds += float64(w.kernel) / 1e9
		r.LoadSeconds += float64(w.load) / 1e9
		r.LoadElements += w.loadElements
	}
	r.MinBusySeconds, r.MaxBusySeconds = slices.Min(busy), slices.Max(busy)
	r.MeanBusySeconds = sum / float64(len(busy))
	if r.MinBusySeconds > 0 {
		ir := r.MaxBusySeconds / r.MinBusySeconds
		r.IR = &ir
	} else if r.MaxBusySeconds == 0 {
		one := 1.0
		r.IR = &one
	}
	if r.MakespanSeconds > 0 {
		r.Utilization = sum / (float64(len(busy)) * r.MakespanSeconds)
	}
	if math.IsNaN(r.Utilization) {
		r.Utilization = 0
	}
}

// queued is an assignment a worker holds, with the time its blocks are
// loaded when loads overlap the kernel.
type queued struct {
	a     api.Assignment
	ready int64
}

// simWorker is one worker with one slot: it holds what it pulled, loads
// the blocks it lacks (an LRU cache of decoded blocks), and counts its
// assignments in arrival order.
type simWorker struct {
	id      api.WorkerID
	cache   *lru
	queue   []queued
	held    []attemptKey // queued and running, for heartbeats
	running *api.Assignment
	gen     uint64 // bumped when the running attempt is cancelled
	// loaderFree is when the loader is free (OverlapLoads).
	loaderFree int64
	// finishAt is when the running attempt ends; runKernel and runBusy
	// what it added to the totals, refunded in part when it is cancelled.
	finishAt, runKernel, runBusy int64
	// onDevice are the blocks of the subtask counted last.
	onDevice  [3][2]int
	hasDevice bool
	// Totals.
	busy, kernel, load, loadElements int64
	// speed divides the model's times (Config.Speeds).
	speed float64
}

func newSimWorker(id api.WorkerID, cacheBytes int64) *simWorker {
	return &simWorker{id: id, cache: newLRU(cacheBytes), speed: 1}
}

// receive queues a; with overlapping loads its blocks load at once,
// behind the loads before them.
func (w *simWorker) receive(s *sim, a api.Assignment) {
	q := queued{a: a}
	if s.cfg.Model.OverlapLoads {
		ns := w.loadBlocks(s, a)
		w.loaderFree = max(w.loaderFree, s.now) + ns
		q.ready = w.loaderFree
	}
	w.queue = append(w.queue, q)
	w.held = append(w.held, attemptKey{a.Ref, a.Attempt})
}

// tryStart starts the next queued assignment on a free slot.
func (w *simWorker) tryStart(s *sim) {
	if w.running != nil || len(w.queue) == 0 {
		return
	}
	q := w.queue[0]
	w.queue = w.queue[1:]
	a := q.a
	w.running = &a
	m := &s.cfg.Model
	t := s.tasks[a.Ref.Index]
	kernel := w.slower(m.kernelNs(t))
	start := max(s.now, q.ready)
	busyBefore := w.busy
	if !m.OverlapLoads {
		// The slot's own cores decode: they are busy meanwhile.
		load := w.loadBlocks(s, a)
		start += load
		w.busy += load
	}
	upload := w.slower(w.upload(s, a))
	w.kernel += kernel
	w.busy += kernel + upload
	w.finishAt, w.runKernel, w.runBusy = start+upload+kernel, kernel, w.busy-busyBefore
	s.push(&event{t: start + upload + kernel, kind: evFinish, worker: s.byID[w.id], attempt: attemptKey{a.Ref, a.Attempt}, gen: w.gen})
}

// slower is the time ns of the model takes w.
func (w *simWorker) slower(ns int64) int64 {
	if w.speed == 1 {
		return ns
	}
	return int64(math.Round(float64(ns) / w.speed))
}

// blocksOf are a subtask's blocks IJ, IK, JK.
func blocksOf(a api.Assignment) [3][2]int {
	return [3][2]int{{a.I, a.J}, {a.I, a.K}, {a.J, a.K}}
}

// loadBlocks loads a's blocks that the cache lacks and returns the time;
// a block a names twice loads once (an assignment holds its blocks).
func (w *simWorker) loadBlocks(s *sim, a api.Assignment) int64 {
	var total int64
	bs := blocksOf(a)
	for x, ij := range bs {
		st := s.grid.Stat(ij[0], ij[1])
		if slices.Contains(bs[:x], ij) || w.cache.get(ij) {
			continue
		}
		w.cache.put(ij, blockBytes(st))
		ns := w.slower(s.cfg.Model.loadNs(st))
		total += ns
		w.load += ns
		w.loadElements += st.Rows + st.Edges
	}
	return total
}

// upload is the device transfer of a's blocks: those not among the
// blocks of the subtask the slot counted before (which stay on the
// device).
func (w *simWorker) upload(s *sim, a api.Assignment) int64 {
	next := blocksOf(a)
	defer func() { w.onDevice = next }()
	if s.cfg.Model.UploadNsPerElement == 0 {
		return 0
	}
	var ns int64
	for _, ij := range next {
		if !slices.Contains(w.onDevice[:], ij) || !w.hasDevice {
			ns += s.cfg.Model.uploadNs(s.grid.Stat(ij[0], ij[1]))
		}
	}
	w.hasDevice = true
	return ns
}

// lru is a byte-bounded least-recently-used set of blocks.
type lru struct {
	capacity, used int64
	order          *list.List // front: most recent
	at             map[[2]int]*list.Element
	size           map[[2]int]int64
}

func newLRU(capacity int64) *lru {
	return &lru{capacity: capacity, order: list.New(), at: map[[2]int]*list.Element{}, size: map[[2]int]int64{}}
}

func (c *lru) get(k [2]int) bool {
	e, ok := c.at[k]
	if ok {
		c.order.MoveToFront(e)
	}
	return ok
}

// put adds k of n bytes, evicting the least recent; a block larger than
// the whole cache is not kept.
func (c *lru) put(k [2]int, n int64) {
	if n > c.capacity {
		return
	}
	for c.used+n > c.capacity {
		e := c.order.Back()
		old := e.Value.([2]int)
		c.order.Remove(e)
		delete(c.at, old)
		c.used -= c.size[old]
		delete(c.size, old)
	}
	c.at[k] = c.order.PushFront(k)
	c.size[k] = n
	c.used += n
}
