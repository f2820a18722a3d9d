package workerclient

import (
	"context"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// The outbox batches what a worker sends most: its results, and the pulls
// that follow them. One Results message carries the results queued so far
// and the next pull. A batch goes out when it holds ResultBatch results,
// when ResultLinger has passed since its first item, or at once when the
// worker holds no assignment it has not answered (its last result, or a
// pull of an idle worker), so that the end of a job and an idle worker
// wait for nothing. Results are sent in the order reported; a batch whose
// send fails goes again on the next stream (the coordinator takes a
// result of an attempt it still holds and ignores a duplicate), while the
// pull of a broken stream is dropped (Pull asks the new one again).

// outbox is guarded by Conn.mu.
type outbox struct {
	results []api.Result
	pull    int      // assignments asked of pullSess, not yet sent
	pullSes *session // the session pull belongs to
	first   time.Time
	// outstanding counts the assignments Pull returned that Report has
	// not answered.
	outstanding int
	// closing and flushing send everything at once (Close, Flush).
	closing, flushing bool
	// wake tells the sender something was queued; idle closes when the
	// sender has sent everything (a fresh channel per wait).
	wake chan struct{}
	idle chan struct{}
	// stopped closes when the sender returns.
	stopped chan struct{}
}

func (c *Conn) startOutbox() {
	c.out = outbox{wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.sender()
}

// queueResult adds a result to the outbox. Caller holds c.mu.
func (c *Conn) queueResult(r api.Result) {
	if len(c.out.results) == 0 && c.out.pull == 0 {
		c.out.first = time.Now()
	}
	c.out.results = append(c.out.results, r)
	c.out.outstanding = max(0, c.out.outstanding-1)
	c.wakeSender()
}

// queuePull adds n to the pull asked of session s. Caller holds c.mu.
func (c *Conn) queuePull(s *session, n int) {
	if c.out.pullSes != s {
		c.out.pull, c.out.pullSes = 0, s
	}
	if len(c.out.results) == 0 && c.out.pull == 0 {
		c.out.first = time.Now()
	}
	c.out.pull += n
	c.wakeSender()
}

func (c *Conn) wakeSender() {
	select {
	case c.out.wake <- struct{}{}:
	default:
	}
}

// due says whether the outbox should go now, and if not, how long until
// it should. Caller holds c.mu.
func (c *Conn) due() (bool, time.Duration) {
	o := &c.out
	if len(o.results) == 0 && o.pull == 0 {
		return false, -1
	}
	if o.closing || o.flushing || o.outstanding == 0 || len(o.results) >= c.cfg.ResultBatch || c.cfg.ResultLinger <= 0 {
		return true, 0
	}
	wait := c.cfg.ResultLinger - time.Since(o.first)
	return wait <= 0, wait
}

// sender sends the outbox's batches until Close.
func (c *Conn) sender() {
	defer close(c.out.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		c.mu.Lock()
		now, wait := c.due()
		closing := c.out.closing
		var rs []api.Result
		var pull int
		var ps *session
		if now {
			n := min(len(c.out.results), api.MaxBatch)
			rs = c.out.results[:n:n]
			c.out.results = c.out.results[n:]
			pull, ps = c.out.pull, c.out.pullSes
			c.out.pull = 0
		}
		if !now && len(c.out.results) == 0 && c.out.pull == 0 {
			c.out.flushing = false
			if c.out.idle != nil {
				close(c.out.idle)
				c.out.idle = nil
			}
		}
		c.mu.Unlock()
		if now {
			c.sendBatch(rs, pull, ps)
			continue
		}
		if closing {
			return
		}
		if wait > 0 {
			timer.Reset(wait)
		}
		select {
		case <-c.out.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// sendBatch sends results and a pull of session ps in one message, on a
// new stream if the current one breaks; a pull meant for a stream that
// has ended is dropped.
func (c *Conn) sendBatch(rs []api.Result, pull int, ps *session) {
	for range 2 {
		c.mu.Lock()
		s := c.sess
		c.mu.Unlock()
		if s != ps {
			pull = 0
		}
		if len(rs) == 0 && pull == 0 {
			return
		}
		var m *pb.WorkerMessage
		if len(rs) == 0 {
			m = &pb.WorkerMessage{Msg: &pb.WorkerMessage_Pull{Pull: &pb.Pull{Max: int32(pull)}}}
		} else {
			m = &pb.WorkerMessage{Msg: &pb.WorkerMessage_Results{Results: pb.EncodeResults(rs, pull)}}
		}
		if s != nil {
			if err := s.send(m); err == nil {
				return
			}
			s.cancel()
			<-s.done
		}
		if len(rs) == 0 {
			return // Pull asks the new stream itself
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ResendTimeout)
		_, err := c.current(ctx)
		cancel()
		if err != nil {
			c.log.Warn("results not delivered; the coordinator counts their subtasks again", "results", len(rs), "err", err)
			return
		}
	}
	c.log.Warn("results not delivered: the stream broke twice; the coordinator counts their subtasks again", "results", len(rs))
}

// Flush waits until every result reported so far has been handed to a
// stream (or given up on), or ctx ends.
func (c *Conn) Flush(ctx context.Context) error {
	c.mu.Lock()
	if c.out.wake == nil || len(c.out.results) == 0 && c.out.pull == 0 {
		c.mu.Unlock()
		return nil
	}
	if c.out.idle == nil {
		c.out.idle = make(chan struct{})
	}
	idle := c.out.idle
	c.out.flushing = true
	c.mu.Unlock()
	c.wakeSender()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// closeOutbox sends what is queued and stops the sender.
func (c *Conn) closeOutbox() {
	c.mu.Lock()
	if c.out.wake == nil {
		c.mu.Unlock()
		return
	}
	c.out.closing = true
	c.mu.Unlock()
	c.wakeSender()
	<-c.out.stopped
}
