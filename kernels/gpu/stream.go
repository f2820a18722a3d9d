package gpu

import (
	"errors"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// Streaming rows. Under a tight memory limit the three blocks of a
// subtask leave no room for the index of the block the kernels search
// (JK) or for copies beside a kernel. A counter set to stream rows
// (SetRowStreaming) keeps only JK resident, with its index, and streams IJ
// and IK through the device in row ranges (tg_count_rows): each range is
// copied from the blocks pinned in place while the kernel counts the one
// before. Rows of IJ and IK are the same I-local space, so the ranges'
// counts sum to the subtask's. Subtasks ordered by (J, K) (pipeline
// streamOrder) upload each JK once.

// SetRowStreaming sets whether Count streams IJ and IK in row ranges
// beside a resident JK. A subtask whose ranges do not fit falls back to
// the three blocks resident (and their row ranges).
func (c *Counter) SetRowStreaming(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rowStream = on
}

// countStreamed counts t with JK resident and IJ, IK streamed in row
// ranges. The other slots give way first, so that JK's index and the
// ranges have the memory. c.mu is held.
func (c *Counter) countStreamed(t kernels.Subtask) (kernels.Result, error) {
	var pinned [maxSlots]bool
	start := time.Now()
	if c.find(t.JK) < 0 && c.loadedVictim(&pinned, t.Ahead) >= 0 {
		// Into a loaded slot (an earlier JK), reusing its buffers: a new
		// allocation would take the ranges' memory.
		for i := range c.slots {
			pinned[i] = !c.slots[i].loaded
		}
	}
	s, err := c.slotFor(t.JK, &pinned, t)
	if err == nil {
		for c.releaseIdle(&pinned, nil) {
		}
		err = c.complete([3]int32{s, s, s})
	}
	c.stalled += time.Since(start)
	if err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count: %w", err)
	}
	kernel := c.kernel
	if kernel == "auto" {
		kernel = pickKernel(kernels.Stats(t))
	}
	id, err := kernelID(kernel)
	if err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count: auto chose %w", err)
	}
	keep := c.keeper(t)
	blocks := []*graph.CSR{t.IJ}
	if t.IK != t.IJ {
		blocks = append(blocks, t.IK)
	}
	var reading []*graph.CSR
	for _, b := range blocks {
		if c.lib.pins.startLoad(b, keep) {
			reading = append(reading, b)
		}
	}
	var ikOff *uint64
	var ikCols *uint32
	if t.IK != t.IJ {
		ikOff, ikCols = ptr(t.IK.Offsets), ptr(t.IK.Cols)
	}
	var (
		tri   uint64
		ms    float64
		parts int64
		rc    int32
	)
	t0 := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		rc = c.lib.countRows(c.ctx, id, s, ptr(t.IJ.Offsets), ptr(t.IJ.Cols), ikOff, ikCols, t.IJ.NumRows(),
			&tri, &ms, &parts, &c.buf[0], errBufLen)
	}()
	if len(t.Ahead) > 0 && c.lib.pins.limit > 0 {
		c.stage(t) // the next subtasks' blocks are pinned while this one counts
	}
	<-done
	c.calls += time.Since(t0)
	for _, b := range reading {
		c.lib.pins.endLoad(b)
	}
	if err := status("tg_count_rows", rc, c.buf); err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count with %s: %w", kernel, err)
	}
	if parts > 0 { // else an empty block: nothing was copied or counted
		for _, b := range blocks {
			c.copied += uint64(CopyBytes(b.NumRows(), b.NumEdges()))
		}
		c.streamed++
		c.ranges += int(parts)
	}
	c.last = kernel
	kt := time.Duration(ms * float64(time.Millisecond))
	c.busy += kt
	return kernels.Result{Triangles: tri, KernelTime: kt}, nil
}

// countMaybeStreamed is countStreamed when the counter streams rows, and
// the three blocks resident (countWhole) otherwise or when the ranges do
// not fit. c.mu is held.
func (c *Counter) countMaybeStreamed(t kernels.Subtask) (kernels.Result, error) {
	if c.rowStream {
		res, err := c.countStreamed(t)
		if !errors.Is(err, ErrOutOfMemory) {
			return res, err
		}
	}
	return c.countWhole(t)
}
