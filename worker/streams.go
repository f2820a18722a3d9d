package worker

import (
	"iter"
	"sync"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// streams gives each slot a stream of its own of the assignments the
// worker holds, so that each device knows the subtasks it counts next and
// uploads their blocks beside its kernels (kernels.Subtask.Ahead), and
// keeps the blocks they share. An assignment joins the stream of the slot
// whose queued and running subtasks share most of its blocks, among the
// slots whose queues are shortest (at most one longer than the shortest),
// so that streams stay balanced; the scheduler hands a worker subtasks of
// one (I, J) group in turn, and a group's subtasks share IJ. A slot whose
// stream runs dry takes the last assignment of the longest other stream,
// the one its slot would count last: no device idles while another has
// work queued. Safe for concurrent use.
type streams struct {
	mu     sync.Mutex
	cond   sync.Cond
	queues [][]*task
	// running is the assignment each slot counts now (nil when none):
	// its blocks are on that slot's device.
	running []*task
	closed  bool
}

func newStreams(slots int) *streams {
	s := &streams{queues: make([][]*task, slots), running: make([]*task, slots)}
	s.cond.L = &s.mu
	return s
}

// push adds t to a slot's stream and returns the slot.
func (s *streams) push(t *task) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.choose(t)
	s.queues[x] = append(s.queues[x], t)
	s.cond.Broadcast()
	return x
}

// choose is the slot push gives t to. s.mu is held.
func (s *streams) choose(t *task) int {
	if len(s.queues) == 1 {
		return 0
	}
	shortest := len(s.queues[0])
	for _, q := range s.queues {
		shortest = min(shortest, len(q))
	}
	best, bestShare := -1, -1
	for x, q := range s.queues {
		if len(q) > shortest+1 {
			continue
		}
		share := 0
		if r := s.running[x]; r != nil {
			share = shared(r, t)
		}
		for _, o := range q {
			share = max(share, shared(o, t))
		}
		if share > bestShare || share == bestShare && len(q) < len(s.queues[best]) {
			best, bestShare = x, share
		}
	}
	return best
}

// shared is how many of b's blocks a reads, IJ counting double: the
// blocks two subtasks have in common on a device.
func shared(a, b *task) int {
	if a.a.Store != b.a.Store || a.a.Ref.Job != b.a.Ref.Job {
		return 0
	}
	ab, bb := blocksOf(a.a), blocksOf(b.a)
	n := 0
	for i, x := range bb {
		for _, y := range ab {
			if x == y {
				n++
				if i == 0 {
					n++
				}
				break
			}
		}
	}
	return n
}

// take returns slot's next assignment: the head of its stream, else the
// last of the longest other stream. It waits while every stream is empty
// and returns false once they are and the streams are closed.
func (s *streams) take(slot int) (*task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running[slot] = nil
	for {
		if q := s.queues[slot]; len(q) > 0 {
			t := q[0]
			q[0] = nil
			s.queues[slot] = q[1:]
			s.running[slot] = t
			return t, true
		}
		if v := s.longest(); v >= 0 {
			q := s.queues[v]
			t := q[len(q)-1]
			q[len(q)-1] = nil
			s.queues[v] = q[:len(q)-1]
			s.running[slot] = t
			return t, true
		}
		if s.closed {
			return nil, false
		}
		s.cond.Wait()
	}
}

// longest is the slot with the longest non-empty stream, or -1. s.mu is
// held.
func (s *streams) longest() int {
	v := -1
	for x, q := range s.queues {
		if len(q) > 0 && (v < 0 || len(q) > len(s.queues[v])) {
			v = x
		}
	}
	return v
}

// pending is the first most of slot's stream after what it counts now,
// in order (a copy: a slot asks each subtask, so it is bounded, not the
// whole stream a worker far ahead holds).
func (s *streams) pending(slot, most int) []*task {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[slot]
	return append([]*task(nil), q[:min(len(q), most)]...)
}

// close says no more assignments come: take returns false once the
// streams are empty.
func (s *streams) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cond.Broadcast()
}

// tasks is slot's stream: take until the streams are closed and empty.
func (s *streams) tasks(slot int) iter.Seq[*task] {
	return func(yield func(*task) bool) {
		for {
			t, ok := s.take(slot)
			if !ok || !yield(t) {
				return
			}
		}
	}
}

// ahead is the subtasks of t's job queued after t in slot's stream, in
// order, up to the first whose blocks are not loaded and at most maxAhead:
// the counter may upload their blocks while it counts t and keep those
// they need (kernels.Subtask.Ahead). A slot may still lose one to another
// that ran dry; that costs an upload, never a count.
func (w *Worker) ahead(slot int, t *task, key string) []kernels.Subtask {
	var out []kernels.Subtask
	// Twice maxAhead: room for a few cancelled or other jobs' tasks.
	for _, n := range w.eng.streams.pending(slot, 2*maxAhead) {
		if len(out) == maxAhead {
			break
		}
		if n.isCancelled() || n.a.Store != t.a.Store || n.a.Ref.Job != t.a.Ref.Job {
			continue
		}
		var b [3]*graph.CSR
		for x, ij := range blocksOf(n.a) {
			if b[x] = w.cache.peek(blockKey{key, ij[0], ij[1]}); b[x] == nil {
				return out
			}
		}
		out = append(out, kernels.Subtask{IJ: b[0], IK: b[1], JK: b[2], Clip: n.a.Clip, TailOffset: n.a.TailOffset})
	}
	return out
}
