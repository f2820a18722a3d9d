package gpu

import (
	"context"
	"fmt"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// OrientIDsOnDevice implements kernels.Device (tg_prep_ids): the
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
	out := abi.IDsOut{MaxVertices: maxV, Rowptr: make([]uint64, maxV+1), Cols: make([]uint32, np+1), Orig: make([]uint64, maxV+1)}
	devmem.Prefault(out.Rowptr)
	devmem.Prefault(out.Cols)
	devmem.Prefault(out.Orig)
	p, uploaded := c.uploadPairs(p)
	defer uploaded()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient ids on device: counter is closed")
	}
	var st abi.PrepStats
	ms, err := c.prepIDs(p, out, &st)
	if err != nil {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient ids on device: %w", err)
	}
	pr := c.madeResident(&st, ms)
	c.freeResident()
	n, m := pr.Stats.Vertices, pr.Stats.Edges
	if n > maxV || m > np {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient ids on device: the library reports %d vertices and %d edges, above the room for %d and %d", n, m, maxV, np)
	}
	fwd := &graph.CSR{Offsets: out.Rowptr[:n+1], Cols: out.Cols[:m], NCols: int64(n)}
	return fwd, out.Orig[:n], pr.Stats, nil
}
