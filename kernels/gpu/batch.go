package gpu

import (
	"fmt"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// Counting resident subtasks in batches. When the next subtasks of t
// (Subtask.Ahead) find their three blocks resident, one tg_count_batch call
// queues their kernels after t's, back to back on the device: the GPU does
// not wait for the host between subtasks. Their results wait in the
// counter until they are asked for (aheadResults, as for streamed rows).

// maxCountBatch is how many subtasks one tg_count_batch call counts
// (TG_COUNT_BATCH_MAX).
const maxCountBatch = 24

// residentAhead is the subtasks of t.Ahead, in order, whose three blocks
// are resident with their loads complete and that were not counted yet,
// up to the first that is not resident (its upload comes first), with
// their slots; at most maxCountBatch - 1, and none when the results kept
// for later reach their bound. c.mu is held.
func (c *Counter) residentAhead(t kernels.Subtask) ([]kernels.Subtask, [][3]int32) {
	var subs []kernels.Subtask
	var slots [][3]int32
	for _, a := range t.Ahead {
		if len(subs) == maxCountBatch-1 || len(c.aheadResults)+len(subs) >= maxCountedAhead {
			break
		}
		if _, done := c.aheadResults[keyOf(a)]; done || keyOf(a) == keyOf(t) {
			continue
		}
		var s [3]int32
		ok := a.IJ != nil && a.IK != nil && a.JK != nil
		for i, b := range []*graph.CSR{a.IJ, a.IK, a.JK} {
			if !ok {
				break
			}
			x := c.find(b)
			ok = x >= 0 && c.slots[x].loaded && !c.slots[x].pending
			s[i] = int32(x)
		}
		if !ok {
			break
		}
		subs = append(subs, a)
		slots = append(slots, s)
	}
	return subs, slots
}

// countBatch counts t, whose slots s are resident and complete, with the
// resident subtasks after it (residentAhead) in one tg_count_batch call,
// during running beside it as in countSlots; the others' results are kept
// for when they are asked for. An error leaves nothing counted. c.mu is
// held.
func (c *Counter) countBatch(t kernels.Subtask, s [3]int32, ahead []kernels.Subtask, aheadSlots [][3]int32, during func()) (kernels.Result, error) {
	batch := append([]kernels.Subtask{t}, ahead...)
	slots := append([][3]int32{s}, aheadSlots...)
	ids := make([]int32, len(batch))
	flat := make([]int32, 0, 3*len(batch))
	names := make([]string, len(batch))
	for i, b := range batch {
		kernel := c.kernel
		if kernel == "auto" {
			kernel = pickKernel(kernels.Stats(b))
		}
		id, err := kernelID(kernel)
		if err != nil {
			return kernels.Result{}, fmt.Errorf("gpu: count: auto chose %w", err)
		}
		ids[i], names[i] = id, kernel
		flat = append(flat, slots[i][:]...)
	}
	tri := make([]uint64, len(batch))
	ms := make([]float64, len(batch))
	var rc int32
	t0 := time.Now()
	if during == nil {
		rc = c.lib.countBatch(c.ctx, &ids[0], &flat[0], int32(len(batch)), &tri[0], &ms[0], &c.buf[0], errBufLen)
	} else {
		done := make(chan struct{})
		go func() {
			defer close(done)
			rc = c.lib.countBatch(c.ctx, &ids[0], &flat[0], int32(len(batch)), &tri[0], &ms[0], &c.buf[0], errBufLen)
		}()
		during()
		<-done
	}
	c.calls += time.Since(t0)
	if err := status("tg_count_batch", rc, c.buf); err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count with %s: %w", names[0], err)
	}
	c.last = names[len(names)-1]
	for i, b := range batch[1:] {
		kt := time.Duration(ms[i+1] * float64(time.Millisecond))
		c.busy += kt
		if c.aheadResults == nil {
			c.aheadResults = make(map[streamKey]kernels.Result)
		}
		c.aheadResults[keyOf(b)] = kernels.Result{Triangles: tri[i+1], KernelTime: kt}
	}
	kt := time.Duration(ms[0] * float64(time.Millisecond))
	c.busy += kt
	return kernels.Result{Triangles: tri[0], KernelTime: kt}, nil
}
