package worker

import (
	"context"
	"slices"
	"sync"
	"time"
)

// The worker holds, per slot, the assignment it counts and up to
// Prefetch more, pulled ahead so that the slot finds its next one ready.
// With MaxPrefetch above Prefetch the number ahead follows the measured
// times (pacer): a pull takes a round trip to the coordinator, during
// which each slot counts round trip / subtask time more subtasks, so the
// worker keeps twice that many ahead, between Prefetch and MaxPrefetch. A
// GPU worker whose subtasks take far longer than a round trip keeps
// Prefetch ahead; a CPU worker counting small subtasks in microseconds
// keeps enough that the coordinator's answer always arrives in time.
// docs/decisions/2026-12-01-scheduler-batching.md gives the reasons.

// rttSamples is how many pull round trips the pacer keeps; it takes their
// median, which a pull that waited for work (none to be had) does not
// move. The pull of a worker that holds nothing is not measured at all:
// it waits for work by design (Worker.pull).
const rttSamples = 16

// pacer measures subtask and round-trip times and sizes the prefetch.
// Safe for concurrent use.
type pacer struct {
	lo, hi, slots int

	mu      sync.Mutex
	service time.Duration // moving average of a slot's time per subtask
	rtt     [rttSamples]time.Duration
	nrtt    int
}

func newPacer(lo, hi, slots int) *pacer {
	return &pacer{lo: lo, hi: max(hi, lo), slots: slots}
}

// subtask records how long a slot took over one subtask (loading and
// counting it).
func (p *pacer) subtask(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.service == 0 {
		p.service = d
		return
	}
	p.service += (d - p.service) / 8
}

// roundTrip records how long one pull took to be answered.
func (p *pacer) roundTrip(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rtt[p.nrtt%rttSamples] = d
	p.nrtt++
}

// capacity is how many assignments the worker may hold: per slot, the
// one counting and the prefetch.
func (p *pacer) capacity() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(p.nrtt, rttSamples)
	var rtt time.Duration
	if n > 0 {
		s := slices.Clone(p.rtt[:n])
		slices.Sort(s)
		rtt = s[n/2]
	}
	return p.slots * (1 + prefetchFor(p.service, rtt, p.lo, p.hi))
}

// prefetchFor is the prefetch per slot for subtasks of service each and
// pulls answered in rtt: twice the subtasks a slot counts in one round
// trip, within [lo, hi]. Without a measurement of both it is lo.
func prefetchFor(service, rtt time.Duration, lo, hi int) int {
	if service <= 0 || rtt <= 0 || hi <= lo {
		return lo
	}
	n := (2*rtt + service - 1) / service
	if n >= time.Duration(hi) {
		return hi
	}
	return max(lo, int(n))
}

// window counts the assignments a worker holds against a limit that may
// change. Safe for concurrent use.
type window struct {
	mu      sync.Mutex
	held    int
	limit   int
	changed chan struct{} // a release or a new limit
}

func newWindow(limit int) *window {
	return &window{limit: limit, changed: make(chan struct{}, 1)}
}

// room returns how many assignments to pull: at least asked, those
// already asked for and not yet received (the Conn delivers them, and
// they must be held at once, or their leases lapse unheard), and
// otherwise as many as the limit leaves, waiting until it leaves some.
// It returns 0 when ctx ends.
func (w *window) room(ctx context.Context, asked int) int {
	for {
		if ctx.Err() != nil {
			return 0 // a draining worker asks for nothing more
		}
		w.mu.Lock()
		n := max(w.limit-w.held, asked)
		w.mu.Unlock()
		if n > 0 {
			return n
		}
		select {
		case <-w.changed:
		case <-ctx.Done():
			return 0
		}
	}
}

// holding is how many assignments are held.
func (w *window) holding() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held
}

// hold counts n more held; release n fewer.
func (w *window) hold(n int) {
	w.mu.Lock()
	w.held += n
	w.mu.Unlock()
}

func (w *window) release(n int) {
	w.mu.Lock()
	w.held -= n
	w.mu.Unlock()
	w.signal()
}

func (w *window) setLimit(n int) {
	w.mu.Lock()
	grew := n > w.limit
	w.limit = n
	w.mu.Unlock()
	if grew {
		w.signal()
	}
}

func (w *window) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}
