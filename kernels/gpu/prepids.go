package gpu

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// PrepareIDs builds on the device, into the slot CountResident counts, the
// forward graph of p, whose ids are the input's own (tg_prep_ids): the
// device compacts them (ascending input id, as graph.Compact), drops
// self-loops and duplicates, ranks, orients and builds the CSR. Nothing
// comes back but the stats. An error wrapping ErrOutOfMemory means the
// pairs do not fit the device.
func (c *Counter) PrepareIDs(p kernels.IDPairs) (*Prepared, error) {
	if _, _, _, err := idPairsArg(p); err != nil {
		return nil, fmt.Errorf("gpu: prepare ids: %w", err)
	}
	p, uploaded := c.uploadPairs(p)
	defer uploaded()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil, fmt.Errorf("gpu: prepare ids: counter is closed")
	}
	var st abi.PrepStats
	t := time.Now()
	ms, err := c.prepIDs(p, abi.IDsOut{}, &st)
	if err != nil {
		return nil, fmt.Errorf("gpu: prepare ids: %w", err)
	}
	// The device's own time runs from its first kernel to the forward
	// graph's end; the rest of the wall time is the slot's indexes, the
	// temporaries' release and the calls' host side.
	c.lib.logger.Debug("prepared from the input's ids", "pairs", (len(p.P32)+len(p.P64))/2, "staged", p.Staged != nil,
		"device_seconds", ms/1e3, "seconds", time.Since(t).Seconds())
	return c.madeResident(&st, ms), nil
}

// prepIDs empties the resident slot and builds the forward graph of p
// there from the input's own ids: from p's staged pieces in the context's
// input buffer, else from the pairs. The error names the entry, and after
// one the slot is freed. It returns the milliseconds. c.mu is held.
func (c *Counter) prepIDs(p kernels.IDPairs, out abi.IDsOut, st *abi.PrepStats) (float64, error) {
	base, width, np, err := idPairsArg(p)
	if err != nil {
		return 0, err
	}
	c.emptyResident()
	var ms float64
	if p.Staged != nil {
		if err := c.takeStage(p); err != nil {
			return 0, err
		}
		ms, err = c.ctx.PrepIDsInput(devmem.ResidentSlot, np, width, out, st)
	} else {
		ms, err = c.ctx.PrepIDs(devmem.ResidentSlot, base, np, width, out, st)
	}
	runtime.KeepAlive(p)
	if err != nil {
		c.freeResident()
	}
	return ms, err
}

// freeResident frees the resident slot's buffers (what a failed
// preprocessing left there, or a graph no longer wanted), so that the
// counting that follows has the memory. c.mu is held.
func (c *Counter) freeResident() {
	_ = c.slots.Free(devmem.ResidentSlot)
	c.slots.SetResident(false)
}

// emptyResident completes a load pending in the resident slot and forgets
// what the slot holds, for a preprocessing to build into. c.mu is held.
func (c *Counter) emptyResident() {
	c.slots.Wait(devmem.ResidentSlot)
	c.slots.Drop(devmem.ResidentSlot)
	c.slots.SetResident(false)
}

// PrepareResidentIDs implements kernels.Device.
func (c *Counter) PrepareResidentIDs(ctx context.Context, p kernels.IDPairs) (kernels.PrepStats, error) {
	if err := ctx.Err(); err != nil {
		return kernels.PrepStats{}, err
	}
	pr, err := c.PrepareIDs(p)
	if err != nil {
		return kernels.PrepStats{}, err
	}
	return pr.Stats, nil
}
