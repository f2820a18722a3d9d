package gpu

import (
	"errors"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
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

// maxStreamBatch is how many subtasks sharing a JK one tg_count_rows call
// counts (at most abi.RowsMaxSubtasks).
const maxStreamBatch = 16

// streamKey names a subtask among the results counted ahead.
type streamKey struct {
	ij, ik, jk *graph.CSR
	clip       bool
	tail       int64
}

func keyOf(t kernels.Subtask) streamKey {
	return streamKey{t.IJ, t.IK, t.JK, t.Clip, t.TailOffset}
}

// maxCountedAhead bounds the results kept for subtasks counted ahead and
// not yet asked for (a worker may never ask: its job ended).
const maxCountedAhead = 4 * maxStreamBatch

// countStreamed counts t with JK resident and IJ, IK streamed in row
// ranges, together with the next subtasks that share its JK (t.Ahead, in
// order): one call keeps the copies and kernels going from one subtask to
// the next, and their results wait until they are asked for. The other
// slots give way first, so that JK's index and the ranges have the memory.
// c.mu is held.
func (c *Counter) countStreamed(t kernels.Subtask) (kernels.Result, error) {
	if r, ok := c.aheadResults[keyOf(t)]; ok {
		delete(c.aheadResults, keyOf(t))
		return r, nil
	}
	start := time.Now()
	// JK alone, into a loaded slot (an earlier JK) reusing its buffers: a
	// new allocation would take the ranges' memory.
	s, err := c.slots.Alone(t.JK, t)
	c.stalled += time.Since(start)
	if err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count: %w", err)
	}
	kernel, id, err := c.kernelFor(t)
	if err != nil {
		return kernels.Result{}, err
	}
	batch := []kernels.Subtask{t}
	if len(c.aheadResults) < maxCountedAhead {
		for _, a := range t.Ahead {
			if a.JK != t.JK || len(batch) == maxStreamBatch {
				break
			}
			if _, done := c.aheadResults[keyOf(a)]; !done && a.IJ != nil && a.IK != nil {
				batch = append(batch, a)
			}
		}
	}
	keep := c.slots.Keeper(t)
	subs := make([]abi.RowsSubtask, len(batch))
	var reading []*graph.CSR
	for i, b := range batch {
		subs[i] = abi.RowsSubtask{IJOff: b.IJ.Offsets, IJCols: b.IJ.Cols}
		if b.IK != b.IJ {
			subs[i].IKOff, subs[i].IKCols = b.IK.Offsets, b.IK.Cols
		}
		blocks := []*graph.CSR{b.IJ}
		if b.IK != b.IJ {
			blocks = append(blocks, b.IK)
		}
		for _, x := range blocks {
			if c.lib.pins.StartLoad(x, keep) {
				reading = append(reading, x)
			}
		}
	}
	tri := make([]uint64, len(batch))
	ms := make([]float64, len(batch))
	var parts int64
	t0 := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		parts, err = c.ctx.CountRows(id, s, subs, tri, ms)
	}()
	if next := t.Ahead[len(batch)-1:]; len(next) > 0 && c.lib.pins.Limit() > 0 {
		// The blocks of the subtasks after the batch are pinned while it
		// counts.
		c.slots.StageList(keep, next[:min(len(next), maxStreamBatch)])
	}
	<-done
	c.calls += time.Since(t0)
	for _, b := range reading {
		c.lib.pins.EndLoad(b)
	}
	if err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count with %s: %w", kernel, err)
	}
	c.last = kernel
	c.ranges += int(parts)
	for i, b := range batch {
		if b.IJ.NumEdges() > 0 && b.IK.NumEdges() > 0 && t.JK.NumEdges() > 0 {
			c.copied += uint64(devmem.CopyBytes(b.IJ.NumRows(), b.IJ.NumEdges()))
			if b.IK != b.IJ {
				c.copied += uint64(devmem.CopyBytes(b.IK.NumRows(), b.IK.NumEdges()))
			}
			c.streamed++
		}
		kt := time.Duration(ms[i] * float64(time.Millisecond))
		c.busy += kt
		r := kernels.Result{Triangles: tri[i], KernelTime: kt}
		if i > 0 {
			if c.aheadResults == nil {
				c.aheadResults = make(map[streamKey]kernels.Result)
			}
			c.aheadResults[keyOf(b)] = r
		}
	}
	return kernels.Result{Triangles: tri[0], KernelTime: time.Duration(ms[0] * float64(time.Millisecond))}, nil
}

// countMaybeStreamed is countStreamed when the counter streams rows, then
// countChunked when JK leaves no room for the ranges, and the three blocks
// resident (countWhole) otherwise or when neither fits. c.mu is held.
func (c *Counter) countMaybeStreamed(t kernels.Subtask) (kernels.Result, error) {
	if c.rowStream {
		res, err := c.countStreamed(t)
		if !errors.Is(err, ErrOutOfMemory) {
			return res, err
		}
		if res, err = c.countChunked(t, c.room()); !errors.Is(err, ErrOutOfMemory) {
			return res, err
		}
	}
	return c.countWhole(t)
}
