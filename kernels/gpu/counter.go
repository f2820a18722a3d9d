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
	copied  uint64 // bytes copied to the device by block uploads
	splits  int    // subtasks or row ranges counted in two halves
	peak    uint64 // the context's peak, kept past Close
	busy    time.Duration
	last    string
	buf     []byte

	// resident: slot residentSlot holds a graph built by Preprocess.
	resident      bool
	residentStats kernels.SubtaskStats
}

var (
	_ kernels.Counter        = (*Counter)(nil)
	_ kernels.DeviceReporter = (*Counter)(nil)
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

// Close releases the device context. It is safe to call more than once.
func (c *Counter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx != 0 {
		c.notePeak()
		c.lib.ctxDestroy(c.ctx)
		c.ctx = 0
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
	res, err := c.countWhole(t)
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

// tryWhole is one attempt of countWhole. c.mu is held.
func (c *Counter) tryWhole(t kernels.Subtask) (kernels.Result, error) {
	var s [3]int32
	var pinned [maxSlots]bool
	for i, b := range []*graph.CSR{t.IJ, t.IK, t.JK} {
		var err error
		if s[i], err = c.slotFor(b, &pinned); err != nil {
			return kernels.Result{}, fmt.Errorf("gpu: count: %w", err)
		}
	}
	for {
		res, err := c.countSlots(kernels.Stats(t), s)
		if !errors.Is(err, ErrOutOfMemory) || !c.releaseIdle(&pinned) {
			return res, err
		}
	}
}

// countSlots runs the counter's kernel (or auto's choice) on three loaded
// slots. c.mu is held.
func (c *Counter) countSlots(st kernels.SubtaskStats, s [3]int32) (kernels.Result, error) {
	kernel := c.kernel
	if kernel == "auto" {
		kernel = pickKernel(st)
	}
	id, err := kernelID(kernel)
	if err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count: auto chose %w", err)
	}
	var tri uint64
	var ms float64
	rc := c.lib.count(c.ctx, id, s[0], s[1], s[2], &tri, &ms, &c.buf[0], errBufLen)
	if err := status("tg_count", rc, c.buf); err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count with %s: %w", kernel, err)
	}
	c.last = kernel
	kt := time.Duration(ms * float64(time.Millisecond))
	c.busy += kt
	return kernels.Result{Triangles: tri, KernelTime: kt}, nil
}

// slotFor returns the slot holding b, uploading it into the least recently
// used slot not pinned by this subtask when it is not resident.
func (c *Counter) slotFor(b *graph.CSR, pinned *[maxSlots]bool) (int32, error) {
	c.tick++
	victim := -1
	for i := range c.slots {
		s := &c.slots[i]
		if s.block.Value() == b && s.nOff == len(b.Offsets) && s.nCols == len(b.Cols) && s.ncols == b.NCols {
			s.used = c.tick
			pinned[i] = true
			return int32(i), nil
		}
		if pinned[i] || c.resident && i == residentSlot {
			continue
		}
		if victim < 0 || age(s) < age(&c.slots[victim]) {
			victim = i
		}
	}
	if victim < 0 {
		return 0, fmt.Errorf("no free slot")
	}
	nrows := b.NumRows()
	for {
		rc := c.lib.loadBlock(c.ctx, int32(victim), ptr(b.Offsets), nrows, ptr(b.Cols), b.NumEdges(), b.NCols, &c.buf[0], errBufLen)
		err := status("tg_load_block", rc, c.buf)
		if err == nil {
			break
		}
		// A failed load may leave buffers in the slot: it stays loaded
		// (holding memory, no block) so that releaseIdle can free it.
		c.slots[victim] = slot{loaded: true}
		pinned[victim] = true // the slot being loaded is not released for room
		again := errors.Is(err, ErrOutOfMemory) && c.releaseIdle(pinned)
		pinned[victim] = false
		if !again {
			return 0, err
		}
	}
	c.copied += uint64(CopyBytes(nrows, b.NumEdges()))
	c.uploads++
	c.slots[victim] = slot{block: weak.Make(b), nOff: len(b.Offsets), nCols: len(b.Cols), ncols: b.NCols, used: c.tick, loaded: true}
	pinned[victim] = true
	return int32(victim), nil
}

// releaseIdle frees the least recently used loaded slot that the current
// subtask does not use (nor the preprocessed graph), and reports whether
// there was one. c.mu is held.
func (c *Counter) releaseIdle(pinned *[maxSlots]bool) bool {
	victim := -1
	for i := range c.slots {
		s := &c.slots[i]
		if pinned[i] || c.resident && i == residentSlot || !s.loaded {
			continue
		}
		if victim < 0 || age(s) < age(&c.slots[victim]) {
			victim = i
		}
	}
	if victim < 0 {
		return false
	}
	c.lib.freeBlock(c.ctx, int32(victim), &c.buf[0], errBufLen)
	c.slots[victim] = slot{}
	return true
}

// releaseAll frees every loaded slot but the preprocessed graph's, and
// reports whether there was one. c.mu is held.
func (c *Counter) releaseAll() bool {
	var none [maxSlots]bool
	any := false
	for c.releaseIdle(&none) {
		any = true
	}
	return any
}

// age orders eviction candidates: empty slots and slots whose block was
// collected first, then the least recently used.
func age(s *slot) uint64 {
	if s.block.Value() == nil {
		return 0
	}
	return s.used
}

// DeviceStats reports the counter's figures so far; the peak stays known
// after Close.
func (c *Counter) DeviceStats() kernels.DeviceStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notePeak()
	return kernels.DeviceStats{PeakBytes: c.peak, CopiedBytes: c.copied, Uploads: c.uploads, Splits: c.splits, Busy: c.busy}
}

// notePeak reads the context's peak while it exists. c.mu is held.
func (c *Counter) notePeak() {
	if c.ctx != 0 {
		c.lib.memUsage(c.ctx, nil, nil, &c.peak)
	}
}
