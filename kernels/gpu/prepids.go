package gpu

import (
	"context"
	"fmt"
	"runtime"

	"github.com/trigrid/trigrid/kernels"
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
	if p.Staged == nil {
		defer c.lib.releaseLogged(c.lib.registerPairs(p))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == 0 {
		return nil, fmt.Errorf("gpu: prepare ids: counter is closed")
	}
	var st [prepNStats]uint64
	var ms float64
	if err := c.prepIDs(p, idsOut{}, &st, &ms); err != nil {
		return nil, fmt.Errorf("gpu: prepare ids: %w", err)
	}
	return c.madeResident(&st, ms), nil
}

// idsOut is what the library's preprocessing from the input's own ids
// copies back (nil: not wanted) and the vertices those arrays have room
// for.
type idsOut struct {
	maxV   uint64
	rowptr []uint64
	cols   []uint32
	orig   []uint64
}

// prepIDs empties the resident slot and builds the forward graph of p
// there from the input's own ids: tg_prep_ids_input from p's staged
// pieces, else from the pairs, tg_prep_ids_out when anything is to come
// back and tg_prep_ids when not. The error names the entry. c.mu is held.
func (c *Counter) prepIDs(p kernels.IDPairs, out idsOut, st *[prepNStats]uint64, ms *float64) error {
	base, width, np, err := idPairsArg(p)
	if err != nil {
		return err
	}
	c.emptyResident()
	op := "tg_prep_ids"
	var rc int32
	switch {
	case p.Staged != nil:
		if err := c.takeStage(p); err != nil {
			return err
		}
		op = "tg_prep_ids_input"
		rc = c.lib.prepIDsInput(c.ctx, residentSlot, np, width, out.maxV, ptr(out.rowptr), ptr(out.cols), ptr(out.orig), &st[0], ms, &c.buf[0], errBufLen)
	case out.rowptr != nil || out.cols != nil || out.orig != nil:
		op = "tg_prep_ids_out"
		rc = c.lib.prepIDsOut(c.ctx, residentSlot, base, np, width, out.maxV, ptr(out.rowptr), ptr(out.cols), ptr(out.orig), &st[0], ms, &c.buf[0], errBufLen)
	default:
		rc = c.lib.prepIDs(c.ctx, residentSlot, base, np, width, &st[0], ms, &c.buf[0], errBufLen)
	}
	runtime.KeepAlive(p)
	err = status(op, rc, c.buf)
	if err != nil {
		c.freeResident()
	}
	return err
}

// freeResident frees what a failed preprocessing left in the resident
// slot's buffers, so that the counting that follows has the memory. c.mu
// is held.
func (c *Counter) freeResident() {
	c.lib.freeBlock(c.ctx, residentSlot, &c.buf[0], errBufLen)
	c.slots[residentSlot] = slot{}
	c.resident = false
}

// emptyResident completes a load pending in the resident slot and forgets
// what the slot holds, for a preprocessing to build into. c.mu is held.
func (c *Counter) emptyResident() {
	if c.slots[residentSlot].pending {
		c.lib.loadWait(c.ctx, residentSlot, &c.buf[0], errBufLen)
		c.settle(residentSlot)
	}
	c.slots[residentSlot] = slot{}
	c.resident = false
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
