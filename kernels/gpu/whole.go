package gpu

import (
	"errors"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// The count of a subtask whose three blocks are resident: the blocks are
// made resident in slots (devmem.Slots: those of earlier subtasks reused,
// the next subtasks' uploaded ahead), and one library call counts them.

// countWhole loads the subtask's three blocks and counts them. When memory
// runs out it releases idle slots, least recently used first, and as a last
// resort every slot (slots keep buffers sized for larger blocks they held),
// then loads the three afresh. c.mu is held.
func (c *Counter) countWhole(t kernels.Subtask) (kernels.Result, error) {
	res, err := c.tryWhole(t, nil)
	if errors.Is(err, ErrOutOfMemory) && c.slots.ReleaseAll() {
		res, err = c.tryWhole(t, nil)
	}
	return res, err
}

// tryWhole is one attempt of countWhole, or with acc of the per-vertex
// count (localWhole): the subtask's blocks are made resident (ready), the
// next subtasks' blocks are pinned while the kernel runs, and the kernel
// counts; memory that runs out at the kernel gives up an idle slot and
// tries again. c.mu is held.
func (c *Counter) tryWhole(t kernels.Subtask, acc *kernels.Local) (kernels.Result, error) {
	s, keep, err := c.ready(t)
	if err != nil {
		if acc != nil {
			return kernels.Result{}, fmt.Errorf("gpu: count per vertex: %w", err)
		}
		return kernels.Result{}, fmt.Errorf("gpu: count: %w", err)
	}
	var during func()
	if acc != nil || len(t.Ahead) > 0 && c.lib.pins.Limit() > 0 {
		during = func() { c.slots.Stage(t) }
	}
	for {
		res, err := c.countSlots(kernels.Stats(t), s, during, acc)
		if !errors.Is(err, ErrOutOfMemory) || !c.slots.ReleaseIdle(&keep, t.Ahead) {
			return res, err
		}
	}
}

// ready makes t's three blocks resident (devmem.Slots.Ready). The time it
// takes is the counter's stall: no kernel of the counter runs meanwhile.
// c.mu is held.
func (c *Counter) ready(t kernels.Subtask) ([3]int32, devmem.Keep, error) {
	start := time.Now()
	defer func() { c.stalled += time.Since(start) }()
	return c.slots.Ready(t)
}

// countSlots runs the counter's kernel (or auto's choice) on three loaded
// slots: tg_count, or with acc tg_count_local adding the per-vertex counts
// to acc. c.mu is held.
//
// during, when not nil, runs while the kernel does, on this goroutine; it
// must not call the library on the context.
func (c *Counter) countSlots(st kernels.SubtaskStats, s [3]int32, during func(), acc *kernels.Local) (kernels.Result, error) {
	kernel, id, err := c.kernelOf(st, acc != nil)
	if err != nil {
		return kernels.Result{}, err
	}
	var (
		tri uint64
		ms  float64
	)
	call := func() { tri, ms, err = c.ctx.Count(id, s[0], s[1], s[2]) }
	if acc != nil {
		call = func() { tri, ms, err = c.ctx.CountLocal(id, s[0], s[1], s[2], localOut(acc)) }
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
	// The call completed the pending loads of the three slots, up to the
	// first that failed.
	c.slots.Counted(s, err)
	if err != nil {
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
