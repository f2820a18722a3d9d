package coordinator

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// settleQueue writes settled subtasks to the state database on a
// goroutine of its own, so that the Run goroutine goes on handing out work
// while the disk syncs. Whatever is queued while one transaction commits
// goes into the next (group commit): one sync for many results. Each push
// returns a sequence number; durable says up to which one every change is
// on disk, and the Run goroutine holds back every effect of a settled
// subtask (a status counting it, its job's end, the per-vertex partials)
// until then. A failed write is logged and counts as done, as a write
// the Run goroutine made itself would: a restart then counts those
// subtasks again.
type settleQueue struct {
	db  *StateDB
	log *slog.Logger

	mu     sync.Mutex
	queued []SettledChange
	seq    uint64 // of the last push

	durable atomic.Uint64
	wake    chan struct{} // to the writer: something is queued
	written chan struct{} // to the Run goroutine: durable moved
	stop    chan struct{}
	stopped chan struct{}
}

func newSettleQueue(db *StateDB, log *slog.Logger) *settleQueue {
	return &settleQueue{db: db, log: log, wake: make(chan struct{}, 1), written: make(chan struct{}, 1),
		stop: make(chan struct{}), stopped: make(chan struct{})}
}

// push queues changes for the writer and returns their sequence number.
// Run goroutine only.
func (q *settleQueue) push(changes []SettledChange) uint64 {
	q.mu.Lock()
	q.queued = append(q.queued, changes...)
	q.seq++
	seq := q.seq
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return seq
}

// last is the sequence number of the last push.
func (q *settleQueue) last() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.seq
}

// run writes what is queued until close; it writes what is left before
// it returns.
func (q *settleQueue) run() {
	defer close(q.stopped)
	for {
		select {
		case <-q.wake:
			q.writeQueued()
		case <-q.stop:
			q.writeQueued()
			return
		}
	}
}

func (q *settleQueue) writeQueued() {
	q.mu.Lock()
	batch, seq := q.queued, q.seq
	q.queued = nil
	q.mu.Unlock()
	if len(batch) > 0 {
		if err := q.db.RecordSettled(batch); err != nil {
			q.log.Error("persisting settled subtasks; a restart would recount them", "subtasks", len(batch), "err", err)
		}
	}
	q.durable.Store(seq)
	select {
	case q.written <- struct{}{}:
	default:
	}
}

// close writes what is queued and stops the writer.
func (q *settleQueue) close() {
	close(q.stop)
	<-q.stopped
}
