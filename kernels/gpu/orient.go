package gpu

import (
	"context"
	"errors"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// PreprocessMinBytes is the least device memory tg_preprocess takes for
// npairs pairs over n vertices (kernels/cuda/preprocess.cu): two 8-byte
// buffers per pair, its counters, four vertex arrays (degrees and ranks of
// 4 bytes, two key arrays of 8) and the slot of the forward graph with its
// offsets, each allocation rounded as the library rounds it. The radix
// sort's scratch and the forward columns come on top, so a context with
// this much free may still run out; one with less always does.
func PreprocessMinBytes(npairs, n uint64) int64 {
	np, nv := int64(max(npairs, 1)), int64(max(n, 1))
	b := 2*allocBytes(np*8) + allocBytes(4*4) + allocBytes(0)
	b += 2*allocBytes(nv*4) + 2*allocBytes(nv*8)
	return b + BlockBytes(int64(n), 0)
}

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
	if _, _, ok := c.hasFree(PreprocessMinBytes(np, n)); !ok {
		return c.orientInPieces(ctx, pairs, n, nil)
	}
	c.mu.Lock()
	c.dropPiecesHost() // readied for pieces, which tg_preprocess needs not
	c.dropSpare()
	c.mu.Unlock()
	p, err := c.Preprocess(pairs, n, true)
	if errors.Is(err, ErrOutOfMemory) {
		return c.orientInPieces(ctx, pairs, n, nil)
	}
	if err != nil {
		return nil, nil, kernels.PrepStats{}, err
	}
	c.mu.Lock()
	if c.ctx != 0 && c.resident {
		c.lib.freeBlock(c.ctx, residentSlot, &c.buf[0], errBufLen)
		c.slots[residentSlot] = slot{}
		c.resident = false
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
	return c.orientInPieces(ctx, m.Pairs, uint64(len(m.OrigID)), m.Bits)
}
