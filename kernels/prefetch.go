package kernels

import (
	"unsafe"

	"github.com/trigrid/trigrid/graph"
)

// Counting waits on memory, not arithmetic: each edge opens a row at a
// random place of a Cols array far larger than the caches, and the loop
// over that row is too long for the CPU to run ahead to the next one. The
// kernels therefore prefetch the rows they will open a few edges later.

// prefetchAhead is how many rows ahead the kernels prefetch. On rmat a row
// costs tens of probes, so a few rows cover a miss; 4 to 16 measured alike.
const prefetchAhead = 4

// prefetchRows prefetches in two stages for the loop over rows ids[i] of c:
// the offsets of the row 2*prefetchAhead ahead, then the columns of the row
// prefetchAhead ahead, whose offsets were prefetched earlier.
func prefetchRows(c *graph.CSR, ids []uint32, i int) {
	if i+2*prefetchAhead < len(ids) {
		prefetch(uintptr(unsafe.Pointer(&c.Offsets[ids[i+2*prefetchAhead]])))
	}
	if i+prefetchAhead < len(ids) {
		prefetch(uintptr(unsafe.Pointer(unsafe.SliceData(c.Cols))) + 4*uintptr(c.Offsets[ids[i+prefetchAhead]]))
	}
}
