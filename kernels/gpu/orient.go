package gpu

import (
	"context"
	"errors"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// OrientOnDevice implements kernels.Device: Preprocess with the
// forward graph and the ranks copied back, after which the device copy is
// freed. Pairs that do not fit the device for that (its free memory below
// PreprocessMinBytes, or the library out of memory) are oriented in pieces
// (orientInPieces), which consumes them; when even the pieces' work area
// does not fit, the error wraps ErrOutOfMemory and the pairs are as given.
func (c *Counter) OrientOnDevice(ctx context.Context, pairs []uint32, n uint64) (*graph.CSR, []uint32, kernels.PrepStats, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, kernels.PrepStats{}, err
	}
	np := uint64(len(pairs) / 2)
	if _, _, ok := c.hasFree(devmem.PreprocessMinBytes(np, n)); !ok {
		return c.orientInPieces(ctx, pairs, n, nil, false)
	}
	c.mu.Lock()
	c.dropPiecesHost() // readied for pieces, which tg_preprocess needs not
	c.dropSpare()
	c.mu.Unlock()
	p, err := c.Preprocess(pairs, n, true)
	if errors.Is(err, ErrOutOfMemory) {
		return c.orientInPieces(ctx, pairs, n, nil, false)
	}
	if err != nil {
		return nil, nil, kernels.PrepStats{}, err
	}
	c.mu.Lock()
	if c.ctx != nil && c.slots.Resident() {
		c.freeResident()
	}
	c.mu.Unlock()
	return p.Forward, p.Rank, p.Stats, nil
}

// OrientMarkedOnDevice implements kernels.Device: orientInPieces
// of m's pairs, the device mapping their ids through m.Bits as it makes
// their keys.
func (c *Counter) OrientMarkedOnDevice(ctx context.Context, m *graph.MarkedPairs) (*graph.CSR, []uint32, kernels.PrepStats, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, kernels.PrepStats{}, err
	}
	if m.Bits == nil {
		return nil, nil, kernels.PrepStats{}, errors.New("gpu: orient marked pairs: their ids have no rank bits")
	}
	return c.orientInPieces(ctx, m.Pairs, uint64(len(m.OrigID)), m.Bits, false)
}

// OrientSpanOnDevice implements kernels.Device: orientInPieces of pairs
// of the input's own ids, each below span, as vertex words, those
// without an edge dropped.
func (c *Counter) OrientSpanOnDevice(ctx context.Context, pairs []uint32, span uint64) (*graph.CSR, []uint32, kernels.PrepStats, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, kernels.PrepStats{}, err
	}
	return c.orientInPieces(ctx, pairs, span, nil, true)
}
