package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/storage"
)

// Worker counts the assignments a Conn hands it. Create it with New, then
// call Run once.
type Worker struct {
	cfg   Config
	conn  Conn
	log   *slog.Logger
	cache *blockCache
	eng   engine // loaders, streams and figures (loader.go, streams.go, stats.go)

	srcMu sync.Mutex
	srcs  map[jobStore]storeSource

	heldMu sync.Mutex
	held   map[api.SubtaskRef]*task // pulled and not yet reported
	// early holds cancels that arrived before their assignment was held
	// (a transport may deliver them out of order with the batch).
	early map[api.Cancel]struct{}

	started atomic.Bool
}

// task is one pulled assignment on its way through the worker.
type task struct {
	a api.Assignment

	mu        sync.Mutex
	lt        LoadTimes          // loads made for this task, by its slot or the loaders
	cancelled bool               // the coordinator no longer wants it: no result
	stop      context.CancelFunc // stops its count, once a slot runs it
}

// cancel marks the task dropped and stops its count if one runs.
func (t *task) cancel() {
	t.mu.Lock()
	t.cancelled = true
	stop := t.stop
	t.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (t *task) isCancelled() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cancelled
}

func (t *task) addLoad(lt LoadTimes) {
	t.mu.Lock()
	t.lt.Fetch += lt.Fetch
	t.lt.Decode += lt.Decode
	t.mu.Unlock()
}

// New checks cfg and returns a worker that talks to the coordinator
// through cfg.Conn. It starts nothing; Run does.
func New(cfg Config) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Slots = cfg.Metrics.attach(cfg.Slots)
	return &Worker{
		cfg:   cfg,
		conn:  cfg.Conn,
		log:   cfg.Logger.With("component", "worker", "worker", string(cfg.ID)),
		cache: cfg.cache(),
		srcs:  map[jobStore]storeSource{},
		held:  map[api.SubtaskRef]*task{},
		early: map[api.Cancel]struct{}{},
	}, nil
}

// Hello is what the worker says of itself when it joins.
func (w *Worker) Hello() api.Hello {
	h := api.Hello{Worker: w.cfg.ID, Version: w.cfg.Version, Kernels: append([]string(nil), w.cfg.Kernels...),
		Cores: w.cfg.Cores, Slots: len(w.cfg.Slots), Instance: w.cfg.Instance}
	for _, s := range w.cfg.Slots {
		h.Devices = append(h.Devices, s.Device)
	}
	return h
}

// Run says hello, then pulls, counts and reports assignments until the
// Conn has no more work (ErrNoMoreWork) or ctx ends, and returns nil. When
// ctx ends the worker drains: it pulls nothing more, hands back the
// assignments it has not started, and lets running ones count for up to
// Config.DrainTimeout before handing them back too. It returns an error
// when a counter cannot be made at the start, or the Conn fails while ctx
// is live. Run may be called once.
func (w *Worker) Run(ctx context.Context) error {
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("worker: Run called twice")
	}
	slots := make([]*slotState, len(w.cfg.Slots))
	made := time.Now()
	for n, s := range w.cfg.Slots {
		c, err := s.NewCounter("")
		if err != nil {
			for _, st := range slots[:n] {
				st.close(w.log)
			}
			return fmt.Errorf("worker: slot %d (%s): new counter: %w", n, s.Device.Name, err)
		}
		slots[n] = &slotState{index: n, cfg: s, def: c, byKernel: map[string]kernels.Counter{}}
	}
	w.log.Debug("counters made", "slots", len(slots), "seconds", time.Since(made).Seconds())
	w.eng.start(w.cfg, slots)
	defer func() {
		for _, st := range slots {
			st.close(w.log)
		}
	}()
	if err := w.conn.Hello(ctx, w.Hello()); err != nil {
		return fmt.Errorf("worker: hello: %w", err)
	}

	// runCtx ends with ctx or a fatal error: no more pulling or loading.
	// countCtx outlives it by DrainTimeout so running counts can finish.
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	countCtx, cancelCount := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCount()
	var drainTimer atomic.Pointer[time.Timer]
	stopAfter := context.AfterFunc(runCtx, func() {
		drainTimer.Store(time.AfterFunc(w.cfg.DrainTimeout, cancelCount))
	})
	defer func() {
		stopAfter()
		if t := drainTimer.Load(); t != nil {
			t.Stop()
		}
	}()

	var (
		fatalMu sync.Mutex
		fatal   error
	)
	fail := func(err error) {
		fatalMu.Lock()
		if fatal == nil {
			fatal = err
		}
		fatalMu.Unlock()
		cancelRun()
		cancelCount()
	}

	pace := newPacer(w.cfg.Prefetch, w.cfg.MaxPrefetch, len(slots))
	most := min(len(slots)*(1+w.cfg.MaxPrefetch), api.MaxBatch)
	win := newWindow(min(pace.capacity(), most))
	queue := w.eng.streams
	prefetch := w.cfg.CacheBytes >= 0 && w.cfg.Loaders > 0
	var ahead chan *task
	if prefetch {
		ahead = make(chan *task, most)
	}

	var wg sync.WaitGroup
	wg.Go(func() {
		defer func() {
			queue.close()
			if ahead != nil {
				close(ahead)
			}
		}()
		w.pull(runCtx, win, pace, most, queue, ahead, fail)
	})
	if prefetch {
		wg.Go(func() { w.prefetch(runCtx, ahead) })
	}
	if cc, ok := w.conn.(Canceller); ok {
		cancelsDone := make(chan struct{})
		defer close(cancelsDone)
		go w.cancels(cc.Cancels(), cancelsDone)
	}
	if w.cfg.HeartbeatInterval > 0 {
		hbDone := make(chan struct{})
		defer close(hbDone)
		go w.heartbeats(countCtx, hbDone)
	}
	for _, st := range slots {
		wg.Go(func() {
			for t := range queue.tasks(st.index) {
				w.serve(slotRun{ctx, runCtx, countCtx, st, win, pace, fail}, t)
			}
		})
	}
	wg.Wait()
	w.flush(ctx)
	fatalMu.Lock()
	defer fatalMu.Unlock()
	return fatal
}

// slotRun is what a slot's loop needs: Run's contexts (see Run), the
// slot, the worker's window and pacer, and how to fail the run.
type slotRun struct {
	ctx, runCtx, countCtx context.Context
	st                    *slotState
	win                   *window
	pace                  *pacer
	fail                  func(error)
}

// serve counts t on a slot, or hands it back while draining, and reports
// it; a cancelled attempt gets no result (the coordinator has settled or
// dropped it). The pacer learns the slot's time over a count, report
// included.
func (w *Worker) serve(s slotRun, t *task) {
	var r api.Result
	var began time.Time // of a count
	switch {
	case t.isCancelled():
	case s.runCtx.Err() != nil:
		r = w.handBack(t.a, api.HandBackDraining)
	default:
		began = time.Now()
		r = w.count(s.runCtx, s.countCtx, s.st, t)
	}
	if !t.isCancelled() {
		w.observe(s.st, r)
		if err := w.report(s.ctx, r); err != nil {
			s.fail(err)
		}
	}
	if !began.IsZero() {
		s.pace.subtask(time.Since(began))
	}
	w.release(t)
	s.win.release(1)
}

// pull fills the worker's window with assignments until the Conn has no
// more or runCtx ends, resizing the window after each pull from the
// measured times (pacer), up to most.
func (w *Worker) pull(runCtx context.Context, win *window, pace *pacer, most int, queue *streams, ahead chan *task, fail func(error)) {
	asked := 0 // of the Conn and not yet received
	for {
		n := win.room(runCtx, asked)
		if n == 0 {
			return
		}
		// The pull of a worker that holds nothing waits for work as much
		// as for the coordinator (a fresh worker's first pull waits for
		// the first job): it is no round trip, and taken as one it would
		// size the prefetch as if the coordinator were that slow.
		busy := win.holding() > 0
		began := time.Now()
		as, err := w.conn.Pull(runCtx, n)
		switch {
		case errors.Is(err, ErrNoMoreWork):
			w.log.Debug("no more work")
			return
		case err != nil && runCtx.Err() != nil:
			return
		case err != nil:
			fail(fmt.Errorf("worker: pull: %w", err))
			return
		case len(as) > n:
			fail(fmt.Errorf("worker: pull: asked for at most %d assignments, got %d", n, len(as)))
			return
		}
		if busy {
			pace.roundTrip(time.Since(began))
		}
		asked = n - len(as)
		win.hold(len(as))
		win.setLimit(min(pace.capacity(), most))
		// Assignments that arrive as the worker starts draining are still
		// queued: the slots hand them back rather than leave them to lapse.
		for _, a := range as {
			t := &task{a: a}
			w.hold(t)
			queue.push(t)
			if ahead != nil {
				select {
				case ahead <- t:
				default:
					// The prefetcher is behind; the slot loads this
					// task's blocks itself.
				}
			}
		}
	}
}

func blocksOf(a api.Assignment) [3][2]int {
	return [3][2]int{{a.I, a.J}, {a.I, a.K}, {a.J, a.K}}
}

func loader(src Source, ij [2]int) func(context.Context) (*graph.CSR, LoadTimes, error) {
	return func(ctx context.Context) (*graph.CSR, LoadTimes, error) { return src.Block(ctx, ij[0], ij[1]) }
}

// count loads a task's blocks and counts them on slot st. Loading stops
// with runCtx, counting with countCtx; an attempt stopped by either is
// handed back rather than failed.
func (w *Worker) count(runCtx, countCtx context.Context, st *slotState, t *task) api.Result {
	a := t.a
	r := api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: w.cfg.ID}
	failed := func(ctx context.Context, err error) api.Result {
		if ctx.Err() != nil {
			return w.handBack(a, api.HandBackDraining+": "+err.Error())
		}
		r.Err = err.Error()
		t.mu.Lock()
		r.Fetch, r.Decode = t.lt.Fetch, t.lt.Decode
		t.mu.Unlock()
		w.log.Warn("subtask failed", "job", a.Ref.Job, "index", a.Ref.Index, "i", a.I, "j", a.J, "k", a.K, "attempt", a.Attempt, "err", err)
		return r
	}
	src, key, err := w.source(runCtx, a)
	if err != nil {
		return failed(runCtx, err)
	}
	var blocks [3]*graph.CSR
	waitFrom := time.Now()
	for n, ij := range blocksOf(a) {
		b, lt, hit, err := w.cache.lookup(runCtx, blockKey{key, ij[0], ij[1]}, loader(src, ij))
		w.cfg.Metrics.hostLookup(hit)
		t.addLoad(lt)
		w.eng.stats.loaded(lt, hit)
		if err != nil {
			return failed(runCtx, fmt.Errorf("block (%d,%d): %w", ij[0], ij[1], err))
		}
		blocks[n] = b
	}
	wait := time.Since(waitFrom)
	counter, err := st.counter(a.Kernel)
	if err != nil {
		return failed(runCtx, err)
	}
	countCtx, stop := context.WithCancel(countCtx)
	defer stop()
	t.mu.Lock()
	t.stop = stop
	cancelled := t.cancelled
	t.mu.Unlock()
	if cancelled {
		return r
	}
	sub := kernels.Subtask{IJ: blocks[0], IK: blocks[1], JK: blocks[2], Clip: a.Clip, TailOffset: a.TailOffset}
	if st.cfg.Device.Kind != "cpu" {
		// A device's counter uploads the blocks of the subtasks ahead;
		// a CPU counter has no device memory to fill and ignores them.
		sub.Ahead = w.ahead(st.index, t, key)
	}
	var res kernels.Result
	if a.PerVertex || a.PerEdge {
		counter, err = st.localCounter(counter, w.cfg.Cores, w.log)
		if err != nil {
			return failed(runCtx, err)
		}
		res, r.Partial, err = countPartial(countCtx, counter.(kernels.LocalCounter), sub, a.PerEdge)
	} else {
		res, err = counter.Count(countCtx, sub)
	}
	if err != nil {
		return failed(countCtx, fmt.Errorf("kernel %s on %s: %w", counter.Name(), st.cfg.Device.Name, err))
	}
	r.Triangles = res.Triangles
	r.KernelTime = res.KernelTime
	r.Upload, r.Busy, r.Device = res.Upload, res.Upload+res.KernelTime, st.index
	r.Kernel = KernelName(counter)
	t.mu.Lock()
	r.Fetch, r.Decode = t.lt.Fetch, t.lt.Decode
	t.mu.Unlock()
	w.eng.stats.counted(st.index, r, wait)
	// Asked first: the line's arguments cost allocations even when it is
	// not written, and this runs for every subtask.
	if w.log.Enabled(runCtx, slog.LevelDebug) {
		w.log.Debug("subtask done", "job", a.Ref.Job, "index", a.Ref.Index, "i", a.I, "j", a.J, "k", a.K,
			"triangles", r.Triangles, "kernel", r.KernelTime, "slot", st.index)
	}
	return r
}

// maxAhead bounds the subtasks ahead lists: a counter uploads for the
// next one or two and looks a little further to choose what to evict.
const maxAhead = 4

func (w *Worker) handBack(a api.Assignment, why string) api.Result {
	return api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: w.cfg.ID, HandedBack: true, Err: why}
}

// report sends r: with ctx while it lives, with ReportTimeout after
// (while draining). A report that ctx's end cut short is sent again with
// ReportTimeout: a drain that starts while a result is on its way still
// delivers it (the coordinator ignores a duplicate). A report that fails
// while draining is dropped: the coordinator's lease on it runs out
// instead.
func (w *Worker) report(ctx context.Context, r api.Result) error {
	if ctx.Err() == nil {
		err := w.conn.Report(ctx, r)
		if err == nil {
			return nil
		}
		if ctx.Err() == nil {
			return fmt.Errorf("worker: report subtask %d of job %s: %w", r.Ref.Index, r.Ref.Job, err)
		}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.ReportTimeout)
	defer cancel()
	if err := w.conn.Report(rctx, r); err != nil {
		w.log.Warn("result not delivered while draining", "job", r.Ref.Job, "index", r.Ref.Index, "err", err)
	}
	return nil
}

// jobStore names the store of one job: a store URL may be partitioned
// again between jobs, so its manifest is read once per job.
type jobStore struct {
	job api.JobID
	url string
}

type storeSource struct {
	src Source
	key string // the cache key of its blocks: URL, scheme, P, partition id
}

// maxStoreSources bounds the jobs whose opened stores are kept.
const maxStoreSources = 64

// source returns the block source of an assignment's store ("" is
// Config.Source) and the key its blocks are cached under. A job's store is
// opened, and its manifest read, once. Blocks are cached by URL and
// partition id, so jobs on the same partitioning share them and a store
// partitioned again never serves the old blocks.
func (w *Worker) source(ctx context.Context, a api.Assignment) (Source, string, error) {
	if a.Store == "" {
		if w.cfg.Source == nil {
			return nil, "", errors.New("worker: assignment names no store and the worker has no block source")
		}
		return w.cfg.Source, "", nil
	}
	js := jobStore{a.Ref.Job, a.Store}
	w.srcMu.Lock()
	defer w.srcMu.Unlock()
	if s, ok := w.srcs[js]; ok {
		return s.src, s.key, nil
	}
	st, err := w.cfg.OpenStore(ctx, a.Store)
	if err != nil {
		return nil, "", fmt.Errorf("worker: open store %s: %w", a.Store, err)
	}
	m, err := storage.ReadManifest(ctx, st)
	if err != nil {
		return nil, "", fmt.Errorf("worker: %w", err)
	}
	if len(w.srcs) >= maxStoreSources {
		clear(w.srcs) // stores of old jobs; a later assignment opens again
	}
	s := storeSource{src: StoreSource{Store: st, Manifest: m}, key: fmt.Sprintf("%s#%v-%d-%016x", a.Store, m.Scheme, m.P, m.PartitionID)}
	w.srcs[js] = s
	return s.src, s.key, nil
}

func (w *Worker) hold(t *task) {
	w.heldMu.Lock()
	w.held[t.a.Ref] = t
	key := api.Cancel{Ref: t.a.Ref, Attempt: t.a.Attempt}
	_, cancelled := w.early[key]
	delete(w.early, key)
	w.heldMu.Unlock()
	if cancelled {
		t.cancel()
	}
}

// maxEarlyCancels bounds the cancels kept for assignments not yet held.
const maxEarlyCancels = 1024

func (w *Worker) release(t *task) {
	w.heldMu.Lock()
	if w.held[t.a.Ref] == t {
		delete(w.held, t.a.Ref)
	}
	w.heldMu.Unlock()
}

// cancels drops the attempts the coordinator cancels until done closes.
func (w *Worker) cancels(ch <-chan api.Cancel, done chan struct{}) {
	for {
		select {
		case c := <-ch:
			w.heldMu.Lock()
			t := w.held[c.Ref]
			if t == nil {
				if len(w.early) >= maxEarlyCancels {
					clear(w.early) // stale: their attempts never came
				}
				w.early[api.Cancel{Ref: c.Ref, Attempt: c.Attempt}] = struct{}{}
			}
			w.heldMu.Unlock()
			if t != nil && t.a.Attempt == c.Attempt {
				w.log.Debug("attempt cancelled", "job", c.Ref.Job, "index", c.Ref.Index, "attempt", c.Attempt, "reason", c.Reason)
				t.cancel()
			}
		case <-done:
			return
		}
	}
}

// heartbeats tells the coordinator every HeartbeatInterval (or the
// shorter interval a HeartbeatPacer Conn asks for) which
// assignments the worker holds, until ctx ends or done closes. ctx is the
// counting context, so heartbeats go on while running assignments drain.
func (w *Worker) heartbeats(ctx context.Context, done chan struct{}) {
	interval := w.cfg.HeartbeatInterval
	if p, ok := w.conn.(HeartbeatPacer); ok {
		if d := p.HeartbeatInterval(); d > 0 && d < interval {
			interval = d
		}
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		case <-done:
			return
		}
		hb := api.Heartbeat{Worker: w.cfg.ID}
		w.heldMu.Lock()
		for ref := range w.held {
			hb.Running = append(hb.Running, ref)
		}
		w.heldMu.Unlock()
		if err := w.conn.Heartbeat(ctx, hb); err != nil && ctx.Err() == nil {
			w.log.Warn("heartbeat failed", "err", err)
		}
	}
}

// slotState is one slot's counters: the default one, and one per other
// kernel an assignment asked for.
type slotState struct {
	index    int
	cfg      Slot
	def      kernels.Counter
	byKernel map[string]kernels.Counter
	local    kernels.Counter // CPU per-vertex fallback, made on first use
}

func (s *slotState) counter(kernel string) (kernels.Counter, error) {
	if kernel == "" || kernel == s.def.Name() {
		return s.def, nil
	}
	if c, ok := s.byKernel[kernel]; ok {
		return c, nil
	}
	c, err := s.cfg.NewCounter(kernel)
	if err != nil {
		return nil, fmt.Errorf("kernel %s on %s: %w", kernel, s.cfg.Device.Name, err)
	}
	s.byKernel[kernel] = c
	return c, nil
}

// localCounter returns c when it counts per vertex, else the slot's CPU
// "auto" kernel, which does (made once, with a logged reason).
func (s *slotState) localCounter(c kernels.Counter, cores int, log *slog.Logger) (kernels.Counter, error) {
	if kernels.HasLocalMode(c) {
		return c, nil
	}
	if s.local == nil {
		log.Info("the kernel has no per-vertex mode; counting per vertex with the CPU's auto kernel", "kernel", c.Name(), "slot", s.cfg.Device.Name)
		lc, err := kernels.NewCPU("auto", kernels.CPUOptions{Workers: cores})
		if err != nil {
			return nil, err
		}
		s.local = lc
	}
	return s.local, nil
}

// countPartial counts sub with its per-vertex (and per-edge) counts in
// the blocks' local index spaces (api.Partial).
func countPartial(ctx context.Context, lc kernels.LocalCounter, sub kernels.Subtask, perEdge bool) (kernels.Result, *api.Partial, error) {
	acc := &kernels.Local{
		VI: make([]uint64, sub.IJ.NumRows()),
		VJ: make([]uint64, sub.JK.NumRows()),
		VK: make([]uint64, max(sub.IK.NCols, sub.JK.NCols)),
	}
	if perEdge {
		acc.EIJ = make([]uint64, sub.IJ.NumEdges())
		acc.EIK = make([]uint64, sub.IK.NumEdges())
		acc.EJK = make([]uint64, sub.JK.NumEdges())
	}
	res, err := lc.CountLocal(ctx, sub, acc)
	if err != nil {
		return res, nil, err
	}
	return res, &api.Partial{VI: acc.VI, VJ: acc.VJ, VK: acc.VK, EIJ: acc.EIJ, EIK: acc.EIK, EJK: acc.EJK}, nil
}

func (s *slotState) close(log *slog.Logger) {
	closeCounter(s.def, log)
	if s.local != nil {
		closeCounter(s.local, log)
	}
	for _, c := range s.byKernel {
		closeCounter(c, log)
	}
}

func closeCounter(c kernels.Counter, log *slog.Logger) {
	if cl, ok := c.(io.Closer); ok {
		if err := cl.Close(); err != nil {
			log.Warn("closing kernel", "kernel", c.Name(), "err", err)
		}
	}
}

// KernelName says which kernel ran: "auto (hashcol)" rather than "auto"
// when the counter chose one.
func KernelName(c kernels.Counter) string {
	if lk, ok := c.(interface{ LastKernel() string }); ok {
		if k := lk.LastKernel(); k != "" && k != c.Name() {
			return c.Name() + " (" + k + ")"
		}
	}
	return c.Name()
}

// flush sends what a batching Conn holds back (Flusher), for up to
// ReportTimeout.
func (w *Worker) flush(ctx context.Context) {
	f, ok := w.conn.(Flusher)
	if !ok {
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.ReportTimeout)
	defer cancel()
	if err := f.Flush(fctx); err != nil {
		w.log.Warn("results not all sent before stopping", "err", err)
	}
}
