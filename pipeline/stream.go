package pipeline

import (
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/worker"
)

// streamRows reports whether a count on one GPU of blocks no larger than
// (rows, edges) streams IJ and IK in row ranges (Config.RowStream): in
// auto, when the budget holds JK with its index, the kernel's scratch
// reserve (a sixteenth) and two sets of ranges of an eighth of a block
// each, but not three blocks and the index.
func streamRows(cfg *Config, rows, edges int64) bool {
	switch {
	case !oneDevice(cfg) || cfg.RowStream == StreamOff:
		return false
	case cfg.RowStream == StreamOn:
		return true
	case cfg.Budget <= 0:
		return false
	}
	room := float64(cfg.Budget - gpu.ContextBytes)
	b := float64(gpu.BlockBytes(rows, edges))
	index := DefaultSpeedModel().IndexShare // the searched block's index, as a share of its bytes
	whole := (3 + index) * b
	streamed := (1+index)*b + room/16 + 2*b/4
	return whole > room && streamed <= room
}

// streaming makes slot's GPU counters stream rows.
func streaming(slot worker.Slot) worker.Slot {
	next := slot.NewCounter
	slot.NewCounter = func(kernel string) (kernels.Counter, error) {
		c, err := next(kernel)
		if s, ok := c.(interface{ SetRowStreaming(bool) }); ok && err == nil {
			s.SetRowStreaming(true)
		}
		return c, err
	}
	return slot
}

// largestBlock is the most rows and the most edges of part's blocks.
func largestBlock(part *partition.Partition) (rows, edges int64) {
	for _, b := range part.Blocks {
		rows, edges = max(rows, b.NumRows()), max(edges, b.NumEdges())
	}
	return rows, edges
}
