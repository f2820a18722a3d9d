package gpu

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"weak"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// kernelNames are the GPU kernels by TG_KERNEL_* id of trigrid.h; id 0 is
// not a kernel of the library but trigrid's per-subtask choice (pickKernel).
var kernelNames = []string{"auto", "polak", "trix", "grouptc", "trust", "wetric"}

// Kernels lists the GPU kernel names NewCounter accepts.
func Kernels() []string { return append([]string(nil), kernelNames...) }

func kernelID(name string) (int32, error) {
	for i, n := range kernelNames {
		if n == name {
			return int32(i), nil
		}
	}
	return 0, fmt.Errorf("%w %q (valid: %v)", ErrUnknownKernel, name, kernelNames)
}

// maxSlots is TG_MAX_SLOTS: blocks a context keeps resident.
const maxSlots = 16

// slot remembers which block a device slot holds. The block is held
// weakly: a block the caller dropped can be collected, and its slot is
// then simply reused. Blocks must not be modified while a Counter may
// still hold them (shards and CSR views are immutable in trigrid).
type slot struct {
	block weak.Pointer[graph.CSR]
	nOff  int
	nCols int
	ncols int64
	used  uint64 // last use, for LRU eviction
	// loaded: the library's slot holds device memory (a block that was
	// collected on the host still occupies it until released).
	loaded bool
	// pending: loaded by tg_load_block_async from the pinned block from,
	// and not yet completed by the library (settle).
	pending bool
	from    *graph.CSR
}

// Counter counts subtasks with one GPU kernel on one device context. It
// implements kernels.Counter. Blocks are uploaded into slots and reused
// when a later subtask passes the same *graph.CSR (subtasks that share a
// block upload it once).
type Counter struct {
	lib    *Library
	kernel string

	mu      sync.Mutex
	ctx     uintptr
	slots   [maxSlots]slot
	tick    uint64
	uploads int
	ahead   int    // uploads made for a later subtask, beside a kernel
	async   int    // uploads from pinned blocks (tg_load_block_async)
	copied  uint64 // bytes copied to the device by block uploads
	// stalled is the time spent uploading and pinning blocks on the way to
	// a kernel, with no kernel of this counter running.
	stalled time.Duration
	inParts bool // counting row ranges (countRows): blocks cut for one count
	splits  int  // subtasks or row ranges counted in two halves
	// rowStream: Count streams IJ and IK in row ranges (stream.go);
	// streamed counts the subtasks it streamed, ranges their ranges.
	rowStream bool
	// chunkShare: the share of the room a chunk of JK takes when JK is
	// counted in chunks (chunks.go); 0 is ChunkShare.
	chunkShare float64
	streamed   int
	ranges     int
	calls      time.Duration // in the library's count calls
	// aheadResults: subtasks counted with an earlier one that shares their
	// JK (countStreamed), until they are asked for.
	aheadResults map[streamKey]kernels.Result
	peak         uint64 // the context's peak, kept past Close
	busy         time.Duration
	last         string
	buf          []byte

	// splitHost: host memory made for SplitOnDevice's copies while
	// KeepIDsOnDevice ran; nil when none is waiting.
	splitHost *splitHost
	// piecesHost: host memory readied by PrepareOrient for the next
	// orientation in pieces; nil when none is waiting.
	piecesHost *piecesHost
	// spare: the pinned host array an orientation in pieces merged into,
	// spent once it built the forward graph, kept for the count in ranges
	// that follows to list its ranges into (no pins of its own on its
	// way); nil when none. Close, Count and another orientation release
	// it.
	spare *Registration
	// background: host memory released without c.mu; Close waits.
	background sync.WaitGroup

	// resident: slot residentSlot holds a graph built by Preprocess.
	resident      bool
	residentStats kernels.SubtaskStats
	// input is the stage whose ids the context's input buffer holds.
	input *stage
}

var (
	_ kernels.Counter = (*Counter)(nil)
	_ kernels.Device  = (*Counter)(nil)
)

// NewCounter creates a context for kernel (one of Kernels()) on the
// device of the library's Options. Close releases it.
func (l *Library) NewCounter(kernel string) (*Counter, error) {
	return l.NewCounterOn(l.opts.Device, kernel)
}

// NewCounterOn creates a context for kernel on GPU device (an index of
// Devices()). Close releases it.
func (l *Library) NewCounterOn(device int, kernel string) (*Counter, error) {
	if _, err := kernelID(kernel); err != nil {
		return nil, fmt.Errorf("gpu: new counter: %w", err)
	}
	if err := l.checkDevice(device); err != nil {
		return nil, fmt.Errorf("gpu: new counter: %w", err)
	}
	ctx, err := l.newContext(device)
	if err != nil {
		return nil, fmt.Errorf("gpu: new counter on device %d: %w", device, err)
	}
	l.pins.open()
	return &Counter{lib: l, kernel: kernel, ctx: ctx, buf: make([]byte, errBufLen)}, nil
}

// Name is the kernel name ("auto" for the choosing counter).
func (c *Counter) Name() string { return c.kernel }

// LastKernel is the kernel the last Count ran (the choice of "auto").
func (c *Counter) LastKernel() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Uploads is the number of blocks copied to the device so far.
func (c *Counter) Uploads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.uploads
}

// Close releases the device context; the last counter of the Library to
// close releases the pinned blocks. It is safe to call more than once.
func (c *Counter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == 0 {
		return nil
	}
	c.notePeak()
	t := time.Now()
	defer func() { c.lib.logger.Debug("counter closed", "seconds", time.Since(t).Seconds()) }()
	// Destroying the context completes every pending load, so the blocks
	// they read may be unpinned after it.
	c.lib.ctxDestroy(c.ctx)
	c.ctx = 0
	if c.input != nil {
		c.input.held = false // freed with the context
		c.input = nil
	}
	for i := range c.slots {
		c.settle(i)
	}
	c.dropSplitHost()
	c.dropPiecesHost()
	c.dropSpare()
	c.background.Wait()
	if err := c.lib.pins.close(); err != nil {
		return fmt.Errorf("gpu: close counter: %w", err)
	}
	return nil
}

// MemUsage reports the device bytes the context holds and its limit.
func (c *Counter) MemUsage() (used, limit uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx != 0 {
		c.lib.memUsage(c.ctx, &used, &limit, nil)
	}
	return used, limit
}

// Count counts one subtask. When the subtask does not fit the context's
// memory with the blocks of earlier subtasks resident, those are released
// (least recently used first); when it does not fit even alone, it is
// counted in row ranges of IJ and IK against the whole JK (countRows).
// Only a subtask whose JK and a single row do not fit fails, with an error
// that satisfies errors.Is(err, ErrOutOfMemory) and gives the bytes needed.
// A counter streaming rows counts a subtask whose JK takes most of the
// memory in chunks of JK's rows (countChunked), and one whose chunks do
// not fit as a counter that does not stream.
func (c *Counter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	if err := ctx.Err(); err != nil {
		return kernels.Result{}, err
	}
	if t.IJ == nil || t.IK == nil || t.JK == nil {
		return kernels.Result{}, fmt.Errorf("gpu: count: nil block in subtask")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == 0 {
		return kernels.Result{}, fmt.Errorf("gpu: count: counter is closed")
	}
	c.dropSpare()
	res, err := c.countMaybeStreamed(t)
	if !errors.Is(err, ErrOutOfMemory) {
		return res, err
	}
	return c.countRows(ctx, t, 0, t.IJ.NumRows())
}

// countWhole loads the subtask's three blocks and counts them. When memory
// runs out it releases idle slots, least recently used first, and as a last
// resort every slot (slots keep buffers sized for larger blocks they held),
// then loads the three afresh. c.mu is held.
func (c *Counter) countWhole(t kernels.Subtask) (kernels.Result, error) {
	res, err := c.tryWhole(t)
	if errors.Is(err, ErrOutOfMemory) && c.releaseAll() {
		res, err = c.tryWhole(t)
	}
	return res, err
}

// tryWhole is one attempt of countWhole: the subtask's blocks are made
// resident (ready), uploads of the next subtasks' blocks are started where
// memory allows (they run on the copy engine beside this subtask's
// kernel), and the kernel runs. c.mu is held.
func (c *Counter) tryWhole(t kernels.Subtask) (kernels.Result, error) {
	s, pinned, err := c.ready(t)
	if err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count: %w", err)
	}
	var during func()
	if len(t.Ahead) > 0 && c.lib.pins.limit > 0 {
		during = func() { c.stage(t) }
	}
	for {
		res, err := c.countSlots(kernels.Stats(t), s, during, nil)
		if !errors.Is(err, ErrOutOfMemory) || !c.releaseIdle(&pinned, t.Ahead) {
			return res, err
		}
	}
}

// ready makes t's three blocks resident and their loads complete (copied,
// checked, indexed while the memory is not yet taken by blocks uploaded
// ahead), then starts the uploads of the next subtasks' blocks
// (prefetch). It returns the three slots and the slots not to give up
// while t counts. The time it takes is the counter's stall: no kernel of
// the counter runs meanwhile. c.mu is held.
func (c *Counter) ready(t kernels.Subtask) ([3]int32, [maxSlots]bool, error) {
	var s [3]int32
	var pinned [maxSlots]bool
	start := time.Now()
	defer func() { c.stalled += time.Since(start) }()
	for i, b := range []*graph.CSR{t.IJ, t.IK, t.JK} {
		var err error
		if s[i], err = c.slotFor(b, &pinned, t); err != nil {
			return s, pinned, err
		}
	}
	if err := c.complete(s); err != nil {
		return s, pinned, err
	}
	c.prefetch(t, pinned)
	return s, pinned, nil
}

// complete completes the pending loads of slots s (tg_load_wait). A slot
// whose load failed (a malformed block) holds no block after it. c.mu is
// held.
func (c *Counter) complete(s [3]int32) error {
	var first error
	for _, i := range s {
		if !c.slots[i].pending {
			continue
		}
		rc := c.lib.loadWait(c.ctx, i, &c.buf[0], errBufLen)
		c.settle(int(i))
		if err := status("tg_load_wait", rc, c.buf); err != nil {
			if !errors.Is(err, ErrOutOfMemory) {
				c.slots[i] = slot{loaded: true} // memory held, no block
			}
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// countSlots runs the counter's kernel (or auto's choice) on three loaded
// slots. c.mu is held.
//
// during, when not nil, runs while the kernel does, on this goroutine; it
// must not call the library on the context.
func (c *Counter) countSlots(st kernels.SubtaskStats, s [3]int32, during func(), acc *kernels.Local) (kernels.Result, error) {
	kernel := c.kernel
	if kernel == "auto" {
		kernel = pickKernel(st)
		if acc != nil && !HasLocal(kernel) {
			kernel = "wetric"
		}
	}
	id, err := kernelID(kernel)
	if err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count: auto chose %w", err)
	}
	var tri uint64
	var ms float64
	var rc int32
	call, what := func() {
		rc = c.lib.count(c.ctx, id, s[0], s[1], s[2], &tri, &ms, &c.buf[0], errBufLen)
	}, "tg_count"
	if acc != nil {
		call, what = func() { rc = c.countLocalCall(id, s, acc, &tri, &ms) }, "tg_count_local"
	}
	t0 := time.Now()
	if during == nil {
		call()
	} else {
		done := make(chan struct{})
		go func() {
			defer close(done)
			call()
		}()
		during()
		<-done
	}
	c.calls += time.Since(t0)
	err = status(what, rc, c.buf)
	// tg_count completed the pending loads of the three slots, up to the
	// first that failed; tg_load_wait completes the rest.
	for _, i := range s {
		if c.slots[i].pending && err != nil {
			c.lib.loadWait(c.ctx, i, &c.buf[0], errBufLen)
		}
		c.settle(int(i))
	}
	if err != nil {
		if !errors.Is(err, ErrOutOfMemory) {
			// A block the library found malformed is not resident: forget
			// what the three slots hold (their memory stays for releaseIdle).
			for _, i := range s {
				c.slots[i] = slot{loaded: true}
			}
		}
		if acc != nil {
			return kernels.Result{}, fmt.Errorf("gpu: count per vertex with %s: %w", kernel, err)
		}
		return kernels.Result{}, fmt.Errorf("gpu: count with %s: %w", kernel, err)
	}
	c.last = kernel
	kt := time.Duration(ms * float64(time.Millisecond))
	c.busy += kt
	return kernels.Result{Triangles: tri, KernelTime: kt}, nil
}

// find returns the slot holding b, or -1.
func (c *Counter) find(b *graph.CSR) int {
	for i := range c.slots {
		s := &c.slots[i]
		if s.block.Value() == b && s.nOff == len(b.Offsets) && s.nCols == len(b.Cols) && s.ncols == b.NCols {
			return i
		}
	}
	return -1
}

// slotFor returns the slot holding b, uploading it when it is not
// resident into the slot victim chooses among those t does not use. When
// memory runs out it releases idle slots and tries again.
func (c *Counter) slotFor(b *graph.CSR, pinned *[maxSlots]bool, t kernels.Subtask) (int32, error) {
	c.tick++
	if i := c.find(b); i >= 0 {
		c.slots[i].used = c.tick
		pinned[i] = true
		return int32(i), nil
	}
	v := c.victim(pinned, t.Ahead)
	if v < 0 {
		return 0, fmt.Errorf("no free slot")
	}
	for {
		err := c.upload(v, b, t)
		if err == nil {
			break
		}
		// A failed load may leave buffers in the slot: it stays loaded
		// (holding memory, no block) so that releaseIdle can free it.
		c.slots[v] = slot{loaded: true}
		pinned[v] = true // the slot being loaded is not released for room
		again := errors.Is(err, ErrOutOfMemory) && c.releaseIdle(pinned, t.Ahead)
		pinned[v] = false
		if !again {
			return 0, err
		}
	}
	pinned[v] = true
	return int32(v), nil
}

// victim is the slot to load into: among those not pinned (nor holding
// the preprocessed graph), pickVictim's choice with ahead known. -1 when
// every slot is pinned.
func (c *Counter) victim(pinned *[maxSlots]bool, ahead []kernels.Subtask) int {
	var cs [maxSlots]candidate
	n := 0
	for i := range c.slots {
		if pinned[i] || c.resident && i == residentSlot {
			continue
		}
		cs[n] = c.candidate(i, ahead)
		n++
	}
	return pickVictim(cs[:n])
}

func (c *Counter) candidate(i int, ahead []kernels.Subtask) candidate {
	s := &c.slots[i]
	b := s.block.Value()
	if b == nil {
		return candidate{slot: i, next: never}
	}
	return candidate{slot: i, next: nextUse(ahead, b), age: s.used}
}

// upload copies b into slot i: from b itself, pinned in place, without
// waiting (tg_load_block_async; the load completes in the tg_count that
// reads it), or synchronously from pageable memory when b cannot be
// pinned (too small, no room, refused). c.mu is held.
func (c *Counter) upload(i int, b *graph.CSR, t kernels.Subtask) error {
	if c.slots[i].pending {
		// The library completes a replaced pending load before reusing
		// the slot's buffers; waiting here keeps the count of the pinned
		// block's readers exact.
		c.lib.loadWait(c.ctx, int32(i), &c.buf[0], errBufLen)
		c.settle(i)
	}
	nrows := b.NumRows()
	// Blocks cut for row ranges are used once: not worth pinning.
	async := !c.inParts && c.lib.pins.startLoad(b, c.keeper(t))
	var rc int32
	name := "tg_load_block"
	if async {
		name = "tg_load_block_async"
		rc = c.lib.loadBlockAsync(c.ctx, int32(i), ptr(b.Offsets), nrows, ptr(b.Cols), b.NumEdges(), b.NCols, &c.buf[0], errBufLen)
	} else {
		rc = c.lib.loadBlock(c.ctx, int32(i), ptr(b.Offsets), nrows, ptr(b.Cols), b.NumEdges(), b.NCols, &c.buf[0], errBufLen)
	}
	if err := status(name, rc, c.buf); err != nil {
		if async {
			c.lib.pins.endLoad(b)
		}
		return err
	}
	c.copied += uint64(CopyBytes(nrows, b.NumEdges()))
	c.uploads++
	c.slots[i] = slot{block: weak.Make(b), nOff: len(b.Offsets), nCols: len(b.Cols), ncols: b.NCols, used: c.tick, loaded: true}
	if async {
		c.async++
		c.slots[i].pending, c.slots[i].from = true, b
	}
	return nil
}

// keeper tells the pin registry which blocks this counter needs soon (t's
// and the known next subtasks'): they are not given up for room.
func (c *Counter) keeper(t kernels.Subtask) func(*graph.CSR) bool {
	return func(x *graph.CSR) bool {
		return x == t.IJ || x == t.IK || x == t.JK || nextUse(t.Ahead, x) != never
	}
}

// settle records that the library has completed (or dropped) slot i's
// pending load: its pinned block is no longer read by it.
func (c *Counter) settle(i int) {
	s := &c.slots[i]
	if s.pending {
		c.lib.pins.endLoad(s.from)
		s.pending, s.from = false, nil
	}
}

// maxAhead is how many of the next subtasks prefetch uploads blocks for.
const maxAhead = 2

// prefetch uploads the blocks of the next subtasks (t.Ahead), in order,
// when they can be pinned: into free memory, or into the slot of a block
// needed later than the one uploaded (never one of this subtask's) when
// that makes room. It stops at the first block it cannot upload so. The
// uploads are asynchronous: their copies run beside this subtask's
// kernel. c.mu is held.
func (c *Counter) prefetch(t kernels.Subtask, keep [maxSlots]bool) {
	if c.lib.pins.limit <= 0 {
		return
	}
	var used, limit uint64
	c.lib.memUsage(c.ctx, &used, &limit, nil)
	for n, a := range t.Ahead[:min(len(t.Ahead), maxAhead)] {
		for _, b := range []*graph.CSR{a.IJ, a.IK, a.JK} {
			if b == nil {
				return
			}
			if i := c.find(b); i >= 0 {
				keep[i] = true
				continue
			}
			if !c.lib.pins.pin(b, c.keeper(t)) {
				return // a later subtask uploads it from pageable memory
			}
			// Free memory, else the buffers of one block needed later than
			// this one, reused in place (freeing several would cost device
			// synchronizations and allocations on the way to the kernel).
			need := uint64(BlockBytes(b.NumRows(), b.NumEdges()))
			v := -1
			if used+need <= limit {
				v = c.victim(&keep, t.Ahead)
			} else if lv := c.loadedVictim(&keep, t.Ahead); lv >= 0 && c.candidate(lv, t.Ahead).next > n {
				ls := &c.slots[lv]
				if used+need <= limit+uint64(BlockBytes(int64(ls.nOff-1), int64(ls.nCols))) {
					v = lv
				}
			}
			if v < 0 {
				return
			}
			c.tick++
			if err := c.upload(v, b, t); err != nil {
				c.slots[v] = slot{loaded: true}
				return
			}
			c.ahead++
			keep[v] = true
			c.lib.memUsage(c.ctx, &used, nil, nil)
		}
	}
}

// stage pins the blocks of the next subtasks that are not resident, so
// that a later prefetch uploads them without pinning them on the way to
// the kernel. It runs while a kernel does: it touches the pin registry
// only (tg_host_register needs no context).
func (c *Counter) stage(t kernels.Subtask) {
	c.stageList(c.keeper(t), t.Ahead[:min(len(t.Ahead), maxAhead+1)])
}

// stageList is stage for the subtasks of list, with keep telling the
// registry which blocks not to give up.
func (c *Counter) stageList(keep func(*graph.CSR) bool, list []kernels.Subtask) {
	for _, a := range list {
		for _, b := range []*graph.CSR{a.IJ, a.IK, a.JK} {
			if b == nil || c.find(b) >= 0 || !c.lib.pins.pinnable(b) {
				continue
			}
			if !c.lib.pins.pin(b, keep) {
				return
			}
		}
	}
}

// loadedVictim is pickVictim's choice among the loaded slots not pinned
// (nor holding the preprocessed graph); -1 when there is none.
func (c *Counter) loadedVictim(pinned *[maxSlots]bool, ahead []kernels.Subtask) int {
	var cs [maxSlots]candidate
	n := 0
	for i := range c.slots {
		if pinned[i] || c.resident && i == residentSlot || !c.slots[i].loaded {
			continue
		}
		cs[n] = c.candidate(i, ahead)
		n++
	}
	return pickVictim(cs[:n])
}

// releaseIdle frees the loaded slot that the current subtask does not use
// (nor the preprocessed graph) whose block is needed furthest ahead, and
// reports whether there was one. c.mu is held.
func (c *Counter) releaseIdle(pinned *[maxSlots]bool, ahead []kernels.Subtask) bool {
	v := c.loadedVictim(pinned, ahead)
	if v < 0 {
		return false
	}
	c.lib.freeBlock(c.ctx, int32(v), &c.buf[0], errBufLen)
	c.settle(v)
	c.slots[v] = slot{}
	return true
}

// releaseAll frees every loaded slot but the preprocessed graph's, and
// reports whether there was one. c.mu is held.
func (c *Counter) releaseAll() bool {
	var none [maxSlots]bool
	any := false
	for c.releaseIdle(&none, nil) {
		any = true
	}
	return any
}

// DeviceStats reports the counter's figures so far; the peak stays known
// after Close.
func (c *Counter) DeviceStats() kernels.DeviceStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var used uint64
	if c.ctx != 0 {
		c.lib.memUsage(c.ctx, &used, nil, &c.peak)
	}
	return kernels.DeviceStats{PeakBytes: c.peak, UsedBytes: used, CopiedBytes: c.copied, Uploads: c.uploads, Ahead: c.ahead,
		PinnedUploads: c.async, Splits: c.splits, Busy: c.busy, Stalled: c.stalled, Streamed: c.streamed, Ranges: c.ranges, Calls: c.calls}
}

// notePeak reads the context's peak while it exists. c.mu is held.
func (c *Counter) notePeak() {
	if c.ctx != 0 {
		c.lib.memUsage(c.ctx, nil, nil, &c.peak)
	}
}
