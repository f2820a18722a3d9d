package gpu

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// MaxSplitP is the largest P tg_split_blocks takes (MaxSplit): its P*P
// blocks go into distinct slots.
const MaxSplitP = 4

// Caps implements kernels.Device: every step, splits up to MaxSplitP.
func (c *Counter) Caps() kernels.DeviceCaps {
	return kernels.DeviceCaps{Prepare: true, PrepareIDs: true, Stage: true, Orient: true, OrientIDs: true,
		OrientMarked: true, MaxSplit: MaxSplitP}
}

// idPairsArg is p as tg_prep_ids takes it: the first id, the id width and
// the number of pairs.
func idPairsArg(p kernels.IDPairs) (unsafe.Pointer, int32, uint64, error) {
	words, width := len(p.P32), int32(4)
	var base unsafe.Pointer
	if p.P64 != nil {
		words, width = len(p.P64), 8
		if len(p.P64) > 0 {
			base = unsafe.Pointer(&p.P64[0])
		}
	} else if len(p.P32) > 0 {
		base = unsafe.Pointer(&p.P32[0])
	}
	if words%2 != 0 {
		return nil, 0, 0, fmt.Errorf("odd number of ids (%d)", words)
	}
	return base, width, uint64(words / 2), nil
}

// prepIDsLeastBytes is the device memory tg_prep_ids takes at the least
// for p: the pairs' buffer (8 bytes a pair of 32-bit ids, 16 of 64-bit
// ones); nothing for staged ids, which are on the device already.
func prepIDsLeastBytes(p kernels.IDPairs) int64 {
	if p.Staged != nil {
		return 0
	}
	if p.P64 != nil {
		return devmem.AllocBytes(int64(len(p.P64)) * 8)
	}
	return devmem.AllocBytes(int64(len(p.P32)) * 4)
}

// roomForIDs is nil unless the context's free memory is below
// prepIDsLeastBytes(p): then an error wrapping ErrOutOfMemory, given
// before the host makes the arrays the results come back into and locks
// the pairs, work the device would not use.
func (c *Counter) roomForIDs(p kernels.IDPairs) error {
	need := prepIDsLeastBytes(p)
	if free, limit, ok := c.hasFree(need); !ok {
		return fmt.Errorf("%d pairs need at least %d bytes, %d of %d are free: %w",
			max(len(p.P32), len(p.P64))/2, need, free, limit, ErrOutOfMemory)
	}
	return nil
}

// hasFree reports whether the context's free memory holds need bytes
// (always, with no limit), with the free bytes and the limit.
func (c *Counter) hasFree(need int64) (free, limit uint64, ok bool) {
	used, limit := c.MemUsage()
	free = limit - min(used, limit)
	return free, limit, limit == 0 || uint64(max(need, 0)) <= free
}

// KeepIDsOnDevice implements kernels.Device (tg_prep_ids, from the pairs
// or from staged ids, copying back only the input ids, when wanted; the
// pairs are page-locked for their upload as OrientIDsOnDevice does): the
// forward graph stays in the resident slot for SplitOnDevice, ForwardOut
// or CountResident. An error wrapping ErrOutOfMemory means the pairs do
// not fit the device.
//
// host, when not nil, is the memory SplitOnDevice copies the blocks back
// into: it is page-locked on another goroutine while the device works.
// KeepIDsOnDevice returns only once host no longer reads the pairs.
func (c *Counter) KeepIDsOnDevice(ctx context.Context, p kernels.IDPairs, wantIDs bool, host *kernels.HostBlocks) ([]uint64, kernels.PrepStats, error) {
	defer host.Scanned()
	if err := ctx.Err(); err != nil {
		return nil, kernels.PrepStats{}, err
	}
	if _, _, _, err := idPairsArg(p); err != nil {
		return nil, kernels.PrepStats{}, fmt.Errorf("gpu: keep ids on device: %w", err)
	}
	if err := c.roomForIDs(p); err != nil {
		return nil, kernels.PrepStats{}, fmt.Errorf("gpu: keep ids on device: %w", err)
	}
	var out abi.IDsOut
	if wantIDs {
		if host != nil {
			host.Scanned() // it has bounded the vertices already
			out.MaxVertices = host.Vertices
		} else {
			out.MaxVertices = p.VertexBound()
		}
		out.Orig = make([]uint64, out.MaxVertices+1)
		devmem.Prefault(out.Orig)
	}
	p, uploaded := c.uploadPairs(p)
	defer uploaded()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil, kernels.PrepStats{}, fmt.Errorf("gpu: keep ids on device: counter is closed")
	}
	if host != nil {
		c.dropSplitHost()
		c.splitHost = registerSplitHost(c.lib, host)
	}
	var st abi.PrepStats
	ms, err := c.prepIDs(p, out, &st)
	if err != nil {
		// The slot may hold buffers: loaded, so that ReleaseIdle frees them.
		c.slots.Broken(devmem.ResidentSlot)
		return nil, kernels.PrepStats{}, fmt.Errorf("gpu: keep ids on device: %w", err)
	}
	pr := c.madeResident(&st, ms)
	c.slots.Broken(devmem.ResidentSlot)
	if !wantIDs {
		return nil, pr.Stats, nil
	}
	if pr.Stats.Vertices > out.MaxVertices {
		return nil, kernels.PrepStats{}, fmt.Errorf("gpu: keep ids on device: the library reports %d vertices, above the room for %d", pr.Stats.Vertices, out.MaxVertices)
	}
	return out.Orig[:pr.Stats.Vertices], pr.Stats, nil
}

// ForwardOut implements kernels.Device (tg_block_out of the
// resident slot).
func (c *Counter) ForwardOut(ctx context.Context, free bool) (*graph.CSR, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil || !c.slots.Resident() {
		return nil, fmt.Errorf("gpu: forward graph out: no forward graph on the device")
	}
	n, m := c.residentStats.Rows, c.residentStats.Edges
	fwd := &graph.CSR{Offsets: make([]uint64, n+1), Cols: make([]uint32, m), NCols: n}
	devmem.Prefault(fwd.Offsets)
	devmem.Prefault(fwd.Cols)
	err := c.ctx.BlockOut(devmem.ResidentSlot, fwd.Offsets, fwd.Cols)
	if free {
		c.dropSplitHost()
		c.freeResident()
	}
	if err != nil {
		return nil, fmt.Errorf("gpu: forward graph out: %w", err)
	}
	return fwd, nil
}

// groupSizes is the number of vertices of each group of g over n vertices.
func groupSizes(g kernels.BlockGroups, n int64) ([]int64, error) {
	if g.P < 1 || g.P > MaxSplitP {
		return nil, fmt.Errorf("group count P = %d: the device splits into 1 to %d groups", g.P, MaxSplitP)
	}
	sizes := make([]int64, g.P)
	if g.Bounds == nil {
		for x := range g.P {
			if int64(x) < n {
				sizes[x] = (n-int64(x)-1)/int64(g.P) + 1
			}
		}
		return sizes, nil
	}
	if len(g.Bounds) != len(g.Groups)+1 || len(g.Groups) == 0 {
		return nil, fmt.Errorf("%d range bounds for %d ranges", len(g.Bounds), len(g.Groups))
	}
	for r, x := range g.Groups {
		if x < 0 || int(x) >= g.P || g.Bounds[r+1] < g.Bounds[r] {
			return nil, fmt.Errorf("range %d: group %d of %d, or bounds decrease", r, x, g.P)
		}
		sizes[x] += int64(g.Bounds[r+1] - g.Bounds[r])
	}
	if g.Bounds[0] != 0 || g.Bounds[len(g.Groups)] != uint64(n) {
		return nil, fmt.Errorf("range bounds run from %d to %d, want 0 to %d", g.Bounds[0], g.Bounds[len(g.Groups)], n)
	}
	return sizes, nil
}

// SplitOnDevice implements kernels.Device (tg_split_blocks, then
// tg_block_out of every block). Block (i, j) goes into slot i*P+j, the
// resident slot among them when P*P slots take them all. The host copies
// go into two arrays made, faulted in and registered while the device
// splits, so that they come back at the bus's speed; registration is only
// an acceleration, and memory the host will not lock is copied into as it
// is. An error wrapping ErrOutOfMemory means the blocks do not fit beside
// the forward graph, which stays resident.
func (c *Counter) SplitOnDevice(ctx context.Context, g kernels.BlockGroups) ([]*graph.CSR, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil || !c.slots.Resident() {
		return nil, fmt.Errorf("gpu: split on device: no forward graph on the device")
	}
	n, m := c.residentStats.Rows, c.residentStats.Edges
	sizes, err := groupSizes(g, n)
	if err != nil {
		return nil, fmt.Errorf("gpu: split on device: %w", err)
	}
	p := g.P
	nb := p * p
	slots := make([]int32, nb)
	offTotal := int64(0)
	for b := range nb {
		slots[b] = int32(b)
		offTotal += sizes[b/p] + 1
		if b != devmem.ResidentSlot {
			c.slots.Wait(b)
			c.slots.Drop(b)
		}
	}
	tw := time.Now()
	h := c.splitHost
	c.splitHost = nil
	if h == nil || !h.fits(offTotal, m) {
		// Made while the device splits instead.
		h.wait()
		h.release()
		h = newSplitHost(c.lib, uint64(offTotal), uint64(m))
	}
	var nnz [MaxSplitP * MaxSplitP]int64
	t0 := time.Now()
	serr := c.ctx.SplitBlocks(devmem.ResidentSlot, int32(p), slots, g.Bounds, g.Groups, nnz[:])
	t1 := time.Now()
	h.wait()
	t2 := time.Now()
	// No copy into the memory is pending once tg_block_out has returned:
	// its registration goes in the background, off the caller's way.
	defer func() { go h.release() }()
	offs, cols := h.offs, h.cols
	if serr != nil {
		for b := range nb {
			if b != devmem.ResidentSlot {
				c.slots.Broken(b) // empty, or buffers for ReleaseIdle to free
			}
		}
		return nil, fmt.Errorf("gpu: split on device: %w", serr)
	}
	c.slots.SetResident(false)
	c.slots.Drop(devmem.ResidentSlot)
	var sum int64
	for b := range nb {
		sum += nnz[b]
	}
	if sum != m {
		c.slots.ReleaseAll()
		return nil, fmt.Errorf("gpu: split on device: the blocks hold %d edges, the forward graph %d", sum, m)
	}
	blocks := make([]*graph.CSR, nb)
	po, pc := int64(0), int64(0)
	for b := range nb {
		rows := sizes[b/p]
		blk := &graph.CSR{Offsets: offs[po : po+rows+1 : po+rows+1], Cols: cols[pc : pc+nnz[b] : pc+nnz[b]], NCols: sizes[b%p]}
		po += rows + 1
		pc += nnz[b]
		if err := c.ctx.BlockOut(slots[b], blk.Offsets, blk.Cols); err != nil {
			c.slots.ReleaseAll()
			return nil, fmt.Errorf("gpu: split on device: block (%d,%d): %w", b/p, b%p, err)
		}
		blocks[b] = blk
	}
	c.slots.Hold(slots, blocks)
	c.lib.madeBySplit(blocks)
	c.lib.logger.Debug("split on device", "p", p, "host_ready_s", t0.Sub(tw).Seconds(), "split_s", t1.Sub(t0).Seconds(), "host_wait_s", t2.Sub(t1).Seconds(),
		"copy_s", time.Since(t2).Seconds(), "registered", len(h.regs))
	return blocks, nil
}

// splitHost is host memory the blocks of a device split are copied back
// into: offsets and columns, registered (and, when made here, made and
// faulted in first) by a goroutine of its own (ready is closed when it is
// done). Registration is only an acceleration: memory the host will not
// lock is copied into as it is.
type splitHost struct {
	offs  []uint64
	cols  []uint32
	regs  []*abi.Registration
	ready chan struct{}
}

// newSplitHost starts making room for offs offsets and cols columns.
func newSplitHost(l *Library, offs, cols uint64) *splitHost {
	h := &splitHost{ready: make(chan struct{})}
	go func() {
		defer close(h.ready)
		h.offs = make([]uint64, offs)
		h.cols = make([]uint32, cols)
		devmem.Prefault(h.offs)
		devmem.Prefault(h.cols)
		h.register(l)
	}()
	return h
}

// registerSplitHost starts registering host's memory once it is made.
func registerSplitHost(l *Library, host *kernels.HostBlocks) *splitHost {
	h := &splitHost{ready: make(chan struct{})}
	go func() {
		defer close(h.ready)
		host.Wait()
		h.offs, h.cols = host.Offsets, host.Cols
		h.register(l)
	}()
	return h
}

func (h *splitHost) register(l *Library) {
	for _, reg := range []func() (*abi.Registration, error){
		func() (*abi.Registration, error) { return devmem.Register(l.abi, h.offs) },
		func() (*abi.Registration, error) { return devmem.Register(l.abi, h.cols) },
	} {
		r, err := reg()
		if err != nil {
			l.logger.Debug("block copies go to pageable memory", "err", err)
		} else if r != nil {
			h.regs = append(h.regs, r)
		}
	}
}

// fits reports whether h has room for offs offsets and cols columns; it
// waits until h is ready.
func (h *splitHost) fits(offs, cols int64) bool {
	h.wait()
	return int64(len(h.offs)) >= offs && int64(len(h.cols)) >= cols
}

// wait returns once h is made; nil is ready.
func (h *splitHost) wait() {
	if h != nil {
		<-h.ready
	}
}

// release unregisters h's memory once it is made; no copy into it may be
// pending. nil is a no-op.
func (h *splitHost) release() {
	if h == nil {
		return
	}
	<-h.ready
	for _, r := range h.regs {
		_ = r.Release()
	}
	h.regs = nil
}

// dropSplitHost gives up memory prepared for a split that did not come.
// c.mu is held.
func (c *Counter) dropSplitHost() {
	c.splitHost.release()
	c.splitHost = nil
}
