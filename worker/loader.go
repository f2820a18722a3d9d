package worker

import (
	"context"
	"sync"
	"time"
	"weak"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
)

// The loader fetches and decodes the blocks of the assignments the worker
// holds, ahead of the slots that count them, on Config.Loaders goroutines
// at once, in the order the assignments were pulled; a goroutine of its
// own then readies each block for the GPU slots' devices (Stager: the
// block is page-locked where it lies, which the host does one block at a
// time), so that its upload runs at the bus's rate beside the kernel of
// an earlier subtask instead of before its own. A slot that reaches a
// block first loads it itself, or waits for the load in flight: the cache
// shares one load between its callers. A load that fails is not kept: the
// slot that needs the block loads it again and reports the error (which
// names the shard) as its subtask's.
//
// A worker with GPU slots also loads, when its loaders have nothing else
// to do and the cache has room without giving up a block, the other
// blocks of each held assignment's (I, J) group and then those of the
// next groups in its row, (I, J') for J' > J, up to groupRowsAhead rows of
// blocks further: the scheduler hands a
// worker a group's subtasks (I, J, K) in turn, which read B[I][K] and
// B[J][K] for every K, and the groups in that order, so those blocks are
// decoded on every loader before their subtasks arrive rather than a row
// at a time as each group begins. A CPU worker's cores count; they decode
// only what it holds.

// Stager is a counter that can ready a decoded block for its device before
// the count that reads it (gpu.Counter page-locks its arrays). Stage is
// called from the loader's goroutine while the counter counts, and must
// change no count: a block it cannot ready is uploaded as it is.
type Stager interface {
	Stage(b *graph.CSR)
}

// loadReq is one block of a held assignment to load; spec: a block of its
// group that no held assignment reads yet.
type loadReq struct {
	t    *task
	ij   [2]int
	spec bool
}

// loadQueue is the queue of loads and the goroutines that make them.
type loadQueue struct {
	w      *Worker
	stager Stager
	staged chan *graph.CSR // to the staging goroutine; nil without a stager
	// lastGroup is the group whose blocks add queued last (add's
	// goroutine only): the scheduler hands a group's subtasks in turn.
	lastGroup groupKey

	mu      sync.Mutex
	cond    sync.Cond
	queue   []loadReq // blocks of held assignments, in order
	spec    []loadReq // blocks of their groups, in order
	closed  bool      // no more requests; the queue is still served
	stopped bool      // the run ended: the queues are dropped
	// sent holds the blocks handed to staging, weakly (the cache decides
	// what stays in memory), up to maxSent.
	sent map[weak.Pointer[graph.CSR]]struct{}
}

// maxStaging bounds the blocks waiting to be staged; one that finds the
// queue full is readied by its counter on its way instead.
const maxStaging = 1024

// maxSent bounds the blocks remembered as staged.
const maxSent = 1 << 14

// maxSpec bounds the blocks of groups waiting to be loaded ahead.
const maxSpec = 4096

// groupKey names an (I, J) group of one job's store.
type groupKey struct {
	store string
	job   api.JobID
	i, j  int
}

// prefetch loads the blocks of the assignments ahead delivers, on
// Config.Loaders goroutines, until ahead is closed and every load queued
// has been made, or ctx ends (what is queued is then dropped, and the
// loads in flight end with ctx). It returns once its goroutines have.
func (w *Worker) prefetch(ctx context.Context, ahead chan *task) {
	l := &loadQueue{w: w, stager: w.eng.stager, sent: map[weak.Pointer[graph.CSR]]struct{}{}}
	l.cond.L = &l.mu
	var stagers sync.WaitGroup
	if l.stager != nil {
		l.staged = make(chan *graph.CSR, maxStaging)
		stagers.Go(func() { l.stageAll(ctx) })
	}
	var loaders sync.WaitGroup
	for range w.cfg.Loaders {
		loaders.Go(func() { l.run(ctx) })
	}
	stop := context.AfterFunc(ctx, l.stop)
	defer stop()
	for t := range ahead {
		if ctx.Err() == nil {
			l.add(ctx, t)
		}
	}
	l.close()
	loaders.Wait()
	if l.staged != nil {
		close(l.staged)
	}
	stagers.Wait()
}

// add queues t's distinct blocks and, with a stager, the other blocks of
// its group, unless the group's were queued for the assignment before or
// maxSpec such blocks wait.
func (l *loadQueue) add(ctx context.Context, t *task) {
	bs := blocksOf(t.a)
	var group [][2]int
	g := groupKey{t.a.Store, t.a.Ref.Job, t.a.I, t.a.J}
	if l.stager != nil && g != l.lastGroup {
		l.lastGroup = g
		if src, _, err := l.w.source(ctx, t.a); err == nil {
			p, _ := sourceLayout(src)
			group = groupBlocks(p, t.a.I, t.a.J)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.stopped {
		return
	}
	for n, ij := range bs {
		if n == 1 && ij == bs[0] || n == 2 && (ij == bs[0] || ij == bs[1]) {
			continue
		}
		l.queue = append(l.queue, loadReq{t: t, ij: ij})
	}
	for _, ij := range group {
		if len(l.spec) >= maxSpec {
			break
		}
		l.spec = append(l.spec, loadReq{t: t, ij: ij, spec: true})
	}
	l.cond.Broadcast()
}

// groupRowsAhead is how many rows of blocks past a group's own the loaders
// load ahead: those the next groups of its row bring.
const groupRowsAhead = 2

// groupBlocks is the blocks of the subtasks (i, j, k) of a P x P layout
// (p 0: unknown, none), and then the groupRowsAhead rows after rows i and
// j, which the next groups (i, j') add to them.
func groupBlocks(p, i, j int) [][2]int {
	out := make([][2]int, 0, (2+groupRowsAhead)*p)
	for k := range p {
		out = append(out, [2]int{i, k})
		if j != i {
			out = append(out, [2]int{j, k})
		}
	}
	for r := max(i, j) + 1; r < min(p, max(i, j)+1+groupRowsAhead); r++ {
		for k := range p {
			out = append(out, [2]int{r, k})
		}
	}
	return out
}

func (l *loadQueue) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.cond.Broadcast()
}

func (l *loadQueue) stop() {
	l.mu.Lock()
	l.stopped, l.queue, l.spec = true, nil, nil
	l.mu.Unlock()
	l.cond.Broadcast()
}

// next waits for a request, the held assignments' first; false once the
// queues are closed and empty, or the run stopped.
func (l *loadQueue) next() (loadReq, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.queue) == 0 && len(l.spec) == 0 && !l.closed && !l.stopped {
		l.cond.Wait()
	}
	if l.stopped {
		return loadReq{}, false
	}
	q := &l.queue
	if len(*q) == 0 {
		q = &l.spec
	}
	if len(*q) == 0 {
		return loadReq{}, false
	}
	r := (*q)[0]
	(*q)[0] = loadReq{}
	*q = (*q)[1:]
	return r, true
}

func (l *loadQueue) run(ctx context.Context) {
	for {
		r, ok := l.next()
		if !ok {
			return
		}
		l.load(ctx, r)
	}
}

// load makes one block of r's assignment resident in the cache, unless it
// is there or loading, and hands it to the staging goroutine. A block of a
// group (spec) is loaded only while the cache has room for it. Errors are
// left to the slot.
func (l *loadQueue) load(ctx context.Context, r loadReq) {
	if r.t.isCancelled() || ctx.Err() != nil {
		return
	}
	src, key, err := l.w.source(ctx, r.t.a)
	if err != nil {
		return
	}
	k := blockKey{key, r.ij[0], r.ij[1]}
	if b := l.w.cache.peek(k); b != nil {
		l.stage(b) // loaded before the run (Blocks.Preload) or by another
		return
	}
	if l.w.cache.has(k) {
		return
	}
	if r.spec {
		_, bytes := sourceLayout(src)
		if bytes == nil || !l.w.cache.room(bytes(r.ij[0], r.ij[1])) {
			return
		}
	}
	b, lt, hit, err := l.w.cache.lookup(ctx, k, loader(src, r.ij))
	r.t.addLoad(lt)
	l.w.eng.stats.loaded(lt, hit)
	if err == nil {
		l.stage(b)
	}
}

// stage hands b to the staging goroutine, once.
func (l *loadQueue) stage(b *graph.CSR) {
	if l.staged == nil {
		return
	}
	key := weak.Make(b)
	l.mu.Lock()
	_, seen := l.sent[key]
	if !seen {
		if len(l.sent) >= maxSent {
			clear(l.sent) // a block staged again costs a look-up
		}
		l.sent[key] = struct{}{}
	}
	l.mu.Unlock()
	if seen {
		return
	}
	select {
	case l.staged <- b:
	default:
	}
}

// stageAll readies the blocks loaded for the devices, one at a time,
// until the loaders are done or ctx ends.
func (l *loadQueue) stageAll(ctx context.Context) {
	for b := range l.staged {
		if ctx.Err() != nil {
			continue
		}
		t := time.Now()
		l.stager.Stage(b)
		l.w.eng.stats.staged(time.Since(t))
	}
}

// has reports whether key's block is loaded or loading.
func (c *blockCache) has(key blockKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[key]
	return ok
}

// room reports whether a block of bytes fits beside what the cache keeps
// without giving any of it up (bytes < 0: unknown, it does not).
func (c *blockCache) room(bytes int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes >= 0 && c.bytes+bytes <= c.limit
}

// Layouter is a Source that knows its partitioning's P and the raw CSR
// bytes of each block (-1 for a block outside it): the loader loads a
// group's blocks ahead only within the cache's room.
type Layouter interface {
	Layout() (p int, bytes func(i, j int) int64)
}

// sourceLayout is src's Layout, or 0 and nil.
func sourceLayout(src Source) (int, func(i, j int) int64) {
	if l, ok := src.(Layouter); ok {
		return l.Layout()
	}
	return 0, nil
}

// Layout implements Layouter from the manifest.
func (s StoreSource) Layout() (int, func(i, j int) int64) {
	m := s.Manifest
	return m.P, func(i, j int) int64 {
		if i < 0 || j < 0 || i >= m.P || j >= m.P || len(m.GroupSizes) != m.P {
			return -1
		}
		if info, ok := m.Shard(i, j); ok {
			return 8*(int64(info.Rows)+1) + 4*int64(info.Edges)
		}
		return 8 * (m.GroupSizes[i] + 1) // an empty block
	}
}

// Layout implements Layouter.
func (s PartitionSource) Layout() (int, func(i, j int) int64) {
	p := s.Part.P()
	return p, func(i, j int) int64 {
		if i < 0 || j < 0 || i >= p || j >= p {
			return -1
		}
		return csrBytes(s.Part.Block(i, j))
	}
}
