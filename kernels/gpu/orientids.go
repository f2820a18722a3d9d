package gpu

import (
	"context"
	"fmt"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// OrientIDsOnDevice implements kernels.Device (tg_prep_ids_out): the
// device compacts the input's own ids in p, cleans and orients, and the
// forward graph comes back with ids[forward id] = input id; the device
// copy is then freed. The host only bounds the vertices (the largest id
// and the endpoints) to size the arrays the library fills. An error
// wrapping ErrOutOfMemory means the pairs do not fit the device.
func (c *Counter) OrientIDsOnDevice(ctx context.Context, p kernels.IDPairs) (*graph.CSR, []uint64, kernels.PrepStats, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, kernels.PrepStats{}, err
	}
	_, _, np, err := idPairsArg(p)
	if err != nil {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient ids on device: %w", err)
	}
	if err := c.roomForIDs(p); err != nil {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient ids on device: %w", err)
	}
	maxV := p.VertexBound()
	out := idsOut{maxV: maxV, rowptr: make([]uint64, maxV+1), cols: make([]uint32, np+1), orig: make([]uint64, maxV+1)}
	prefault(out.rowptr)
	prefault(out.cols)
	prefault(out.orig)
	if p.Staged == nil {
		defer c.lib.releaseLogged(c.lib.registerPairs(p))
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == 0 {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient ids on device: counter is closed")
	}
	var st [prepNStats]uint64
	var ms float64
	err = c.prepIDs(p, out, &st, &ms)
	if err == nil {
		c.lib.freeBlock(c.ctx, residentSlot, &c.buf[0], errBufLen)
	}
	if err != nil {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient ids on device: %w", err)
	}
	pr := c.madeResident(&st, ms)
	c.slots[residentSlot] = slot{}
	c.resident = false
	n, m := pr.Stats.Vertices, pr.Stats.Edges
	if n > maxV || m > np {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient ids on device: the library reports %d vertices and %d edges, above the room for %d and %d", n, m, maxV, np)
	}
	fwd := &graph.CSR{Offsets: out.rowptr[:n+1], Cols: out.cols[:m], NCols: int64(n)}
	return fwd, out.orig[:n], pr.Stats, nil
}
