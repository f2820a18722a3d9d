package gpu

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// kernelNames are the GPU kernels by TG_KERNEL_* id of trigrid.h; id 0 is
// not a kernel of the library but trigrid's per-subtask choice (pickKernel).
var kernelNames = append([]string{"auto"}, abi.KernelNames()...)

// Kernels lists the GPU kernel names NewCounter accepts.
func Kernels() []string { return append([]string(nil), kernelNames...) }

func kernelID(name string) (int32, error) {
	if name == "auto" {
		return 0, nil
	}
	if id, ok := abi.KernelID(name); ok {
		return id, nil
	}
	return 0, fmt.Errorf("%w %q (valid: %v)", ErrUnknownKernel, name, kernelNames)
}

// Counter counts subtasks with one GPU kernel on one device context. It
// implements kernels.Counter, kernels.Device, kernels.RangeCounter and
// kernels.LocalCounter. Blocks are uploaded into the context's slots and
// reused when a later subtask passes the same *graph.CSR (devmem.Slots).
// Its methods are safe for concurrent use: they serialize on the context.
type Counter struct {
	lib    *Library
	kernel string

	mu    sync.Mutex
	ctx   *abi.Ctx // nil once closed
	slots *devmem.Slots

	// copied: bytes copied to the device beside the slots' uploads (row
	// ranges streamed, a count in ranges' rows).
	copied uint64
	// stalled is the time spent uploading and pinning blocks on the way to
	// a kernel, with no kernel of this counter running.
	stalled time.Duration
	splits  int // subtasks or row ranges counted in two halves
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

	// splitHost: host memory made for SplitOnDevice's copies while
	// KeepIDsOnDevice ran; nil when none is waiting.
	splitHost *splitHost
	// piecesHost: host memory readied by PrepareOrient for the next
	// orientation in pieces; nil when none is waiting.
	piecesHost *piecesHost
	// spare: the pinned host memory an orientation in pieces left past
	// the forward graph's columns, kept for the count in ranges of that
	// graph to list its ranges into (no pins of its own on its way).
	// Close, Count and another orientation drop it.
	spare spareRoom

	// residentStats describe the graph a preprocessing left in
	// devmem.ResidentSlot while c.slots.Resident().
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
	l.pins.Open()
	return &Counter{lib: l, kernel: kernel, ctx: ctx, slots: devmem.NewSlots(ctx, l.pins)}, nil
}

// Name is the kernel name ("auto" for the choosing counter).
func (c *Counter) Name() string { return c.kernel }

// SetCacheCounter makes cc hear the lookups of the counter's device block
// cache (its slots): one per block a count needs, a hit when the block was
// resident or already uploading (kernels.CacheCounted).
func (c *Counter) SetCacheCounter(cc kernels.CacheCounter) { c.slots.SetLookups(cc) }

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
	return c.slots.Stats().Uploads
}

// Close releases the device context; the last counter of the Library to
// close releases the pinned blocks. It is safe to call more than once.
func (c *Counter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil
	}
	c.notePeak()
	t := time.Now()
	defer func() {
		c.lib.logger.Debug("counter closed", "seconds", time.Since(t).Seconds(), "pins", c.lib.pins.Stats().String())
	}()
	// Destroying the context completes every pending load, so the blocks
	// they read may be unpinned after it.
	c.ctx.Destroy()
	c.ctx = nil
	if c.input != nil {
		c.input.held = false // freed with the context
		c.input = nil
	}
	c.slots.SettleAll()
	c.dropSplitHost()
	c.dropPiecesHost()
	c.dropSpare()
	if err := c.lib.pins.Close(); err != nil {
		return fmt.Errorf("gpu: close counter: %w", err)
	}
	return nil
}

// MemUsage reports the device bytes the context holds and its limit.
func (c *Counter) MemUsage() (used, limit uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx != nil {
		used, limit, _ = c.ctx.MemUsage()
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
	if c.ctx == nil {
		return kernels.Result{}, fmt.Errorf("gpu: count: counter is closed")
	}
	c.dropSpare()
	stalled, pinning := c.stalled, c.slots.Stats().Pinning
	res, err := c.countMaybeStreamed(t)
	if errors.Is(err, ErrOutOfMemory) {
		res, err = c.countRows(ctx, t, 0, t.IJ.NumRows())
	}
	// The wait for the blocks, less the page-locking on its way.
	res.Upload = max(0, c.stalled-stalled-(c.slots.Stats().Pinning-pinning))
	return res, err
}

// kernelFor is the kernel that counts t (the counter's, or auto's
// choice for t) and its id.
func (c *Counter) kernelFor(t kernels.Subtask) (string, int32, error) {
	return c.kernelOf(kernels.Stats(t), false)
}

// kernelOf is the kernel that counts a subtask of statistics st (the
// counter's, or auto's choice, which with local is one with a per-vertex
// mode) and its id.
func (c *Counter) kernelOf(st kernels.SubtaskStats, local bool) (string, int32, error) {
	kernel := c.kernel
	if kernel == "auto" {
		kernel = pickKernel(st)
		if local && !HasLocal(kernel) {
			kernel = "wetric"
		}
	}
	id, err := kernelID(kernel)
	if err != nil {
		return "", 0, fmt.Errorf("gpu: count: auto chose %w", err)
	}
	return kernel, id, nil
}

// DeviceStats reports the counter's figures so far; the peak stays known
// after Close.
func (c *Counter) DeviceStats() kernels.DeviceStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var used uint64
	if c.ctx != nil {
		used, _, c.peak = c.ctx.MemUsage()
	}
	s := c.slots.Stats()
	return kernels.DeviceStats{PeakBytes: c.peak, UsedBytes: used, CopiedBytes: s.Copied + c.copied, Uploads: s.Uploads, Ahead: s.Ahead,
		PinnedUploads: s.Pinned, Splits: c.splits, Busy: c.busy, Stalled: c.stalled, Streamed: c.streamed, Ranges: c.ranges, Calls: c.calls}
}

// notePeak reads the context's peak while it exists. c.mu is held.
func (c *Counter) notePeak() {
	if c.ctx != nil {
		_, _, c.peak = c.ctx.MemUsage()
	}
}
