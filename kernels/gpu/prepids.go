package gpu

import (
	"context"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/trigrid/trigrid/kernels"
)

var _ kernels.IDPreprocessor = (*Counter)(nil)

// PrepareIDs builds on the device, into the slot CountResident counts, the
// forward graph of p, whose ids are the input's own (tg_prep_ids): the
// device compacts them (ascending input id, as graph.Compact), drops
// self-loops and duplicates, ranks, orients and builds the CSR. Nothing
// comes back but the stats. An error wrapping ErrOutOfMemory means the
// pairs do not fit the device.
func (c *Counter) PrepareIDs(p kernels.IDPairs) (*Prepared, error) {
	words, width := len(p.P32), int32(4)
	var base *uint32
	if p.P64 != nil {
		words, width = len(p.P64), 8
		if len(p.P64) > 0 {
			base = (*uint32)(unsafe.Pointer(&p.P64[0]))
		}
	} else if len(p.P32) > 0 {
		base = &p.P32[0]
	}
	if words%2 != 0 {
		return nil, fmt.Errorf("gpu: prepare ids: odd number of ids (%d)", words)
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
	c.slots[residentSlot] = slot{}
	c.resident = false
	op := "tg_prep_ids"
	var rc int32
	if p.Staged != nil {
		if err := c.takeStage(p); err != nil {
			return nil, fmt.Errorf("gpu: prepare ids: %w", err)
		}
		op = "tg_prep_ids_input"
		rc = c.lib.prepIDsInput(c.ctx, residentSlot, uint64(words/2), width, 0, nil, nil, nil, &st[0], &ms, &c.buf[0], errBufLen)
	} else {
		rc = c.lib.prepIDs(c.ctx, residentSlot, base, uint64(words/2), width, &st[0], &ms, &c.buf[0], errBufLen)
	}
	runtime.KeepAlive(p)
	if err := status(op, rc, c.buf); err != nil {
		return nil, fmt.Errorf("gpu: prepare ids: %w", err)
	}
	return c.madeResident(&st, ms), nil
}

// PrepareResidentIDs implements kernels.IDPreprocessor.
func (c *Counter) PrepareResidentIDs(ctx context.Context, p kernels.IDPairs) (kernels.PrepStats, error) {
	if err := ctx.Err(); err != nil {
		return kernels.PrepStats{}, err
	}
	pr, err := c.PrepareIDs(p)
	if err != nil {
		return kernels.PrepStats{}, err
	}
	return kernels.PrepStats(pr.Stats), nil
}
