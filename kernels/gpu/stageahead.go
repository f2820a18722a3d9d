package gpu

import (
	"weak"

	"github.com/trigrid/trigrid/graph"
)

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
//
// A block a device split made is left alone: its device holds it, and
// registering its memory would only hold up the driver (and the kernels
// launched meanwhile) for an upload that never comes.
func (c *Counter) Stage(b *graph.CSR) {
	if b == nil {
		return
	}
	if _, made := c.lib.split.Load(weak.Make(b)); made {
		return
	}
	c.lib.pins.PinAhead(b)
}

// madeBySplit records blocks, the host copies of a device split, for
// Stage, forgetting those of earlier splits the collector has reclaimed.
func (l *Library) madeBySplit(blocks []*graph.CSR) {
	l.split.Range(func(k, _ any) bool {
		if k.(weak.Pointer[graph.CSR]).Value() == nil {
			l.split.Delete(k)
		}
		return true
	})
	for _, b := range blocks {
		l.split.Store(weak.Make(b), struct{}{})
	}
}
