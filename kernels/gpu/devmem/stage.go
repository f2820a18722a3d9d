package devmem

import (
	"time"

	"github.com/trigrid/trigrid/graph"
)

// PinAhead pins b, giving up no pin the registry holds, while a user is
// open (the last to close releases every pin, so one made after it would
// never be): a block readied before the count that reads it never
// displaces one pinned for another. It reports whether b is pinned.
func (r *Pins) PinAhead(b *graph.CSR) bool {
	if !r.Pinnable(b) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users == 0 {
		return false
	}
	_, ok := r.get(b, func(*graph.CSR) bool { return true })
	return ok
}

// timedPin runs pin, a call into the registry on the way to a kernel,
// adding its time to the stats' Pinning.
func (s *Slots) timedPin(pin func() bool) bool {
	t := time.Now()
	ok := pin()
	s.stats.Pinning += time.Since(t)
	return ok
}
