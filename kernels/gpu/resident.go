package gpu

import (
	"context"
	"errors"

	"github.com/trigrid/trigrid/kernels"
)

// PrepareResident implements kernels.Device: Preprocess
// without copying the forward graph back.
func (c *Counter) PrepareResident(ctx context.Context, pairs []uint32, n uint64) (kernels.PrepStats, error) {
	if err := ctx.Err(); err != nil {
		return kernels.PrepStats{}, err
	}
	p, err := c.Preprocess(pairs, n, false)
	if err != nil {
		return kernels.PrepStats{}, err
	}
	return p.Stats, nil
}

// DoesNotFit implements kernels.Device: err wraps
// ErrOutOfMemory.
func (c *Counter) DoesNotFit(err error) bool { return errors.Is(err, ErrOutOfMemory) }
