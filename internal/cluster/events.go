package cluster

import "sync"

// eventQueue forwards events to a channel in order without ever blocking
// the sender: memberlist calls its delegates with its own locks held.
// After close, events the receiver has not taken are dropped.
type eventQueue struct {
	out  chan<- Event
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	pending []Event
	closed  bool
}

func newEventQueue(out chan<- Event) *eventQueue {
	q := &eventQueue{out: out, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if out == nil {
		close(q.done)
		return q
	}
	go q.run()
	return q
}

func (q *eventQueue) push(e Event) {
	q.mu.Lock()
	if q.closed || q.out == nil {
		q.mu.Unlock()
		return
	}
	q.pending = append(q.pending, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *eventQueue) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		q.mu.Unlock()
		for _, e := range batch {
			select {
			case q.out <- e:
			case <-q.stop:
				return
			}
		}
		select {
		case <-q.wake:
		case <-q.stop:
			return
		}
	}
}

// close stops delivery and waits for the forwarding goroutine; it is safe
// to call more than once.
func (q *eventQueue) close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.stop)
	}
	q.mu.Unlock()
	<-q.done
}
