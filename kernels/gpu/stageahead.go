package gpu

import "github.com/trigrid/trigrid/graph"

// Blocks staged ahead. A worker's loaders decode the blocks of the
// subtasks a counter will count next on other cores; Stage page-locks
// each where it lies as soon as it is decoded (the Library's pins,
// portable to every context), so that its upload is asynchronous, from
// the block itself, beside an earlier subtask's kernel, and the counter
// pins nothing on the way to its kernel.

// Stage page-locks b when the pins have room for it without giving up a
// block pinned for another (worker.Stager). It takes none of the
// counter's locks: it may run on any goroutine while the counter counts,
// and changes no count. It does nothing once the library's last counter
// has closed.
func (c *Counter) Stage(b *graph.CSR) {
	if b != nil {
		c.lib.pins.PinAhead(b)
	}
}
