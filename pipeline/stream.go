package pipeline

import (
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/plan"
	"github.com/trigrid/trigrid/worker"
)

// streamRows is plan.ChooseRowStream for a count on cfg's slots of blocks
// no larger than (rows, edges) (Config.RowStream), its reason noted in rep.
func streamRows(cfg *Config, rows, edges int64, rep *Report) bool {
	b := plan.BlockFigures{OneGPU: oneDevice(cfg), LargestBytes: uint64(gpu.BlockBytes(rows, edges)),
		ContextBytes: gpu.ContextBytes, IndexShare: DefaultSpeedModel().IndexShare}
	if cfg.Budget > 0 {
		b.Budget = uint64(cfg.Budget)
	}
	on, why := plan.ChooseRowStream(b, cfg.RowStream.plan())
	rep.noteReason(why)
	return on
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
