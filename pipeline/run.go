package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/worker"
)

// localJob is the id of the one job of an in-process run.
const localJob api.JobID = "local"

// SubtaskResult is the outcome of one subtask of an in-process run.
type SubtaskResult struct {
	I, J, K   int
	Triangles uint64
	// Kernel is the kernel that counted it; Worker the local worker.
	Kernel string
	Worker api.WorkerID
	// Fetch, Decode and KernelTime are the worker's times for it.
	Fetch, Decode, KernelTime time.Duration
	// Edges is the number of base edges, Work the estimate it was
	// scheduled by (partition.Subtask).
	Edges int64
	Work  int64
}

// RunResult is the outcome of an in-process run.
type RunResult struct {
	// Triangles is the job's total as the scheduler settled it: each
	// subtask's count entered once.
	Triangles uint64
	// Subtasks is in the order of the tasks given.
	Subtasks []SubtaskResult
	// Wall is the run's time until the job's last result (the devices'
	// release after it is not counted).
	Wall time.Duration
	// Device is what the counters did on their devices (nil on the CPU).
	Device *DeviceReport
	// Engine is where the local workers' time went (worker.Stats).
	Engine *EngineReport
}

// RunLocal counts tasks in this process: the coordinator's scheduler
// (package coordinator/scheduler) hands them out to one local worker per
// slot of cfg.Slots, through the same api messages a network would carry.
// Blocks come from src (store is "" then) or from the store URL each
// worker opens (src nil). The scheduler keeps (I, J) fixed across K per
// worker, so neighbouring subtasks share cached blocks. An attempt that
// fails fails the run with an error naming the subtask and the reason
// (there is no other machine to retry on).
func RunLocal(ctx context.Context, src worker.Source, store string, tasks []partition.Subtask, cfg Config) (*RunResult, error) {
	return runLocal(ctx, src, store, tasks, cfg, nil)
}

// runLocal is RunLocal that, with sums, asks the workers for per-vertex
// (and, with sums' per-edge, per-edge) partial counts and adds the
// winning attempt's of each subtask to sums.
func runLocal(ctx context.Context, src worker.Source, store string, tasks []partition.Subtask, cfg Config, sums *counts.Blocks) (*RunResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if src == nil && store == "" {
		return nil, errors.New("pipeline: local run: no block source and no store")
	}
	start := time.Now()
	sc := scheduler.DefaultConfig()
	sc.MaxAttempts = 1
	sc.NoSpeculation = true
	sched, err := scheduler.New(sc)
	if err != nil {
		return nil, err
	}
	l := &localRun{
		sched:    sched,
		events:   make(chan localEvent),
		loopDone: make(chan struct{}),
		conns:    map[api.WorkerID]*localConn{},
		results:  make([]SubtaskResult, len(tasks)),
		have:     make([]bool, len(tasks)),
		tasks:    tasks,
		cfg:      &cfg,
		sums:     sums,
	}
	if sums != nil {
		l.added = make([]*api.Partial, len(tasks))
	}
	workers := make([]*worker.Worker, len(cfg.Slots))
	var tally deviceTally
	for n, slot := range cfg.Slots {
		slot = tally.wrap(slot)
		id := api.WorkerID(fmt.Sprintf("local-%d", n))
		conn := &localConn{id: id, run: l, notify: make(chan struct{}, 1)}
		l.conns[id] = conn
		wc := worker.DefaultConfig()
		wc.ID, wc.Conn, wc.Slots, wc.Source = id, conn, []worker.Slot{slot}, src
		wc.CacheBytes, wc.Prefetch = cfg.CacheBytes, cfg.Prefetch
		wc.HeartbeatInterval, wc.DrainTimeout = 0, 0
		wc.Cores, wc.Logger = cfg.Workers, cfg.Logger
		wc.Loaders, wc.Blocks = cfg.Loaders, cfg.blocks
		if workers[n], err = worker.New(wc); err != nil {
			return nil, err
		}
	}
	spec := scheduler.JobSpec{ID: localJob, Subtasks: tasks, Store: store, GroupJK: cfg.groupJK}
	if sums != nil {
		spec.PerVertex, spec.PerEdge = true, sums.PerEdge()
	}
	ds, err := sched.AddJob(spec)
	if err != nil {
		return nil, err
	}
	cfg.Progress.Start("count", "subtasks", int64(len(tasks)))
	defer cfg.Progress.Done()
	l.apply(ds)

	wctx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	var wg sync.WaitGroup
	for n, w := range workers {
		id := api.WorkerID(fmt.Sprintf("local-%d", n))
		wg.Go(func() {
			err := w.Run(wctx)
			select {
			case l.events <- localEvent{kind: evLeft, worker: id, err: err}:
			case <-l.loopDone:
			}
		})
	}
	runErr := l.loop(ctx, len(workers))
	// The count ends with the job's last result; the workers' release of
	// their devices after it is teardown, not counting.
	wall := time.Since(start)
	stopWorkers()
	wg.Wait()
	if runErr != nil {
		return nil, runErr
	}
	res := &RunResult{Triangles: l.total, Subtasks: l.results, Wall: wall}
	res.Device = tally.report(res.Wall.Seconds())
	ids, stats := make([]string, len(workers)), make([]worker.Stats, len(workers))
	for n, w := range workers {
		ids[n], stats[n] = fmt.Sprintf("local-%d", n), w.Stats()
	}
	res.Engine = engineReport(ids, stats, cfg.blocks, res.Wall.Seconds())
	var sum uint64
	for x, ok := range l.have {
		if !ok {
			return nil, fmt.Errorf("pipeline: local run: subtask %d settled without a result", x)
		}
		sum += l.results[x].Triangles
	}
	if sum != res.Triangles {
		return nil, fmt.Errorf("pipeline: local run: the scheduler's total %d is not the sum %d of the subtasks' counts", res.Triangles, sum)
	}
	return res, nil
}

type evKind uint8

const (
	evHello evKind = iota + 1
	evPull
	evResult
	evHeartbeat
	evLeft
)

// localEvent is what a local worker's Conn tells the run's loop.
type localEvent struct {
	kind   evKind
	worker api.WorkerID
	hello  api.Hello
	n      int
	result api.Result
	beat   api.Heartbeat
	err    error // evLeft: why Run returned
}

// localRun owns the scheduler: only loop touches it after the start.
type localRun struct {
	sched    *scheduler.Scheduler
	events   chan localEvent
	loopDone chan struct{} // closed when loop returns
	conns    map[api.WorkerID]*localConn
	cfg      *Config

	tasks   []partition.Subtask
	results []SubtaskResult
	have    []bool
	settled int
	total   uint64
	done    bool
	err     error
	// sums receives the partial counts of each settled subtask; added
	// holds, per subtask, the partial now in sums, so that a result the
	// scheduler overturns or reopens is taken back out: each subtask's
	// partial is in the sums exactly once.
	sums  *counts.Blocks
	added []*api.Partial
}

// loop feeds the workers' events to the scheduler and carries out its
// decisions until the job ends, ctx ends or every worker has left.
func (l *localRun) loop(ctx context.Context, alive int) error {
	defer close(l.loopDone)
	defer func() {
		for _, c := range l.conns {
			c.finish()
		}
	}()
	var workerErrs []string
	for !l.done {
		var ev localEvent
		select {
		case ev = <-l.events:
		case <-ctx.Done():
			return fmt.Errorf("pipeline: local run: %w", ctx.Err())
		}
		switch ev.kind {
		case evHello:
			l.apply(l.sched.WorkerJoined(ev.hello))
		case evPull:
			l.apply(l.sched.Pull(ev.worker, ev.n))
		case evHeartbeat:
			l.apply(l.sched.Heartbeat(ev.beat))
		case evResult:
			l.record(ev.result)
			l.apply(l.sched.Result(ev.result))
		case evLeft:
			alive--
			reason := "no more work"
			if ev.err != nil {
				reason = ev.err.Error()
				workerErrs = append(workerErrs, fmt.Sprintf("%s: %v", ev.worker, ev.err))
			}
			l.apply(l.sched.WorkerLeft(ev.worker, reason))
			if alive == 0 && !l.done {
				// Workers stop on their own when the run is cancelled:
				// the cancellation is the cause, not their errors.
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("pipeline: local run: %w", err)
				}
				if len(workerErrs) > 0 {
					return fmt.Errorf("pipeline: local run: every worker stopped: %s", strings.Join(workerErrs, "; "))
				}
				return errors.New("pipeline: local run: every worker stopped before the job was done")
			}
		}
	}
	return l.err
}

// record keeps the first counted result of each subtask for the report;
// the scheduler decides what counts.
func (l *localRun) record(r api.Result) {
	x := r.Ref.Index
	if r.Ref.Job != localJob || x < 0 || x >= len(l.tasks) || r.Err != "" || r.HandedBack || l.have[x] {
		return
	}
	t := l.tasks[x]
	l.results[x] = SubtaskResult{I: t.I, J: t.J, K: t.K, Triangles: r.Triangles, Kernel: r.Kernel, Worker: r.Worker,
		Fetch: r.Fetch, Decode: r.Decode, KernelTime: r.KernelTime, Edges: t.Edges, Work: t.Work}
}

// apply carries out the scheduler's decisions.
func (l *localRun) apply(ds []scheduler.Decision) {
	for _, d := range ds {
		switch d.Kind {
		case scheduler.DecideAssign:
			if c := l.conns[d.Worker]; c != nil {
				c.deliver(d.Assignment)
			}
		case scheduler.DecideSubtaskDone:
			x := d.Ref.Index
			if !l.have[x] {
				l.settled++
				l.cfg.Progress.Update(int64(l.settled), int64(len(l.tasks)))
			}
			l.have[x] = true
			l.results[x].Triangles = d.Triangles
			l.settlePartial(x, d.Partial)
		case scheduler.DecideSubtaskReopened:
			if l.have[d.Ref.Index] {
				l.settled--
			}
			l.have[d.Ref.Index] = false
			l.settlePartial(d.Ref.Index, nil)
		case scheduler.DecideJobDone:
			l.done, l.total = true, d.Total
		case scheduler.DecideJobFailed, scheduler.DecideJobCancelled:
			l.done, l.err = true, d.Err
		case scheduler.DecideWorkerFaulty:
			l.cfg.Logger.Error("local worker outvoted", "worker", d.Worker, "err", d.Err)
		case scheduler.DecideIgnore:
			l.cfg.Logger.Debug("scheduler ignored an event", "worker", d.Worker, "reason", d.Reason)
		}
	}
}

// settlePartial makes p the partial of subtask x in the sums (nil: none),
// taking out the one added before. An error fails the run.
func (l *localRun) settlePartial(x int, p *api.Partial) {
	if l.sums == nil || x < 0 || x >= len(l.tasks) {
		return
	}
	t := l.tasks[x]
	var err error
	if old := l.added[x]; old != nil {
		err = l.sums.Remove(t.I, t.J, t.K, old)
		l.added[x] = nil
	}
	if err == nil && l.have[x] {
		if err = l.sums.Add(t.I, t.J, t.K, p); err == nil {
			l.added[x] = p
		}
	}
	if err != nil && l.err == nil {
		l.done, l.err = true, fmt.Errorf("pipeline: local run: %w", err)
	}
}

// localConn is a local worker's worker.Conn: its calls become events of
// the run's loop, and the loop's assignments queue here until pulled.
type localConn struct {
	id     api.WorkerID
	run    *localRun
	notify chan struct{} // one pending wake-up for Pull

	mu       sync.Mutex
	queue    []api.Assignment
	asked    int  // asked of the scheduler and not yet delivered
	finished bool // no more work will come
}

func (c *localConn) deliver(a api.Assignment) {
	c.mu.Lock()
	c.queue = append(c.queue, a)
	if c.asked > 0 {
		c.asked--
	}
	c.mu.Unlock()
	c.wake()
}

func (c *localConn) finish() {
	c.mu.Lock()
	c.finished = true
	c.mu.Unlock()
	c.wake()
}

func (c *localConn) wake() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

func (c *localConn) send(ctx context.Context, ev localEvent) error {
	ev.worker = c.id
	select {
	case c.run.events <- ev:
		return nil
	case <-c.run.loopDone:
		return worker.ErrNoMoreWork
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hello implements worker.Conn.
func (c *localConn) Hello(ctx context.Context, h api.Hello) error {
	if err := c.send(ctx, localEvent{kind: evHello, hello: h}); err != nil && !errors.Is(err, worker.ErrNoMoreWork) {
		return err
	}
	return nil
}

// Pull implements worker.Conn: it asks the scheduler for what the queue
// and earlier requests do not cover, then waits for an assignment.
func (c *localConn) Pull(ctx context.Context, max int) ([]api.Assignment, error) {
	c.mu.Lock()
	need := max - len(c.queue) - c.asked
	if need > 0 && !c.finished {
		c.asked += need
	}
	c.mu.Unlock()
	if need > 0 {
		if err := c.send(ctx, localEvent{kind: evPull, n: need}); err != nil {
			return nil, err
		}
	}
	for {
		c.mu.Lock()
		if n := min(max, len(c.queue)); n > 0 {
			out := append([]api.Assignment(nil), c.queue[:n]...)
			c.queue = c.queue[n:]
			c.mu.Unlock()
			return out, nil
		}
		finished := c.finished
		c.mu.Unlock()
		if finished {
			return nil, worker.ErrNoMoreWork
		}
		select {
		case <-c.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Report implements worker.Conn. Results after the run ended are dropped.
func (c *localConn) Report(ctx context.Context, r api.Result) error {
	err := c.send(ctx, localEvent{kind: evResult, result: r})
	if errors.Is(err, worker.ErrNoMoreWork) {
		return nil
	}
	return err
}

// Heartbeat implements worker.Conn.
func (c *localConn) Heartbeat(ctx context.Context, hb api.Heartbeat) error {
	err := c.send(ctx, localEvent{kind: evHeartbeat, beat: hb})
	if errors.Is(err, worker.ErrNoMoreWork) {
		return nil
	}
	return err
}
