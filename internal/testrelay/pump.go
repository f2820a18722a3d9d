package testrelay

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// pair is one relayed connection: conns[0] was accepted, conns[1] dialed.
type pair struct {
	conns [2]net.Conn
	done  chan struct{}
	once  sync.Once
}

// end closes both connections, with an RST each way when reset, and
// reports whether this call ended the pair.
func (p *pair) end(reset bool) bool {
	ended := false
	p.once.Do(func() {
		ended = true
		close(p.done)
		for _, c := range p.conns {
			if tc, ok := c.(*net.TCPConn); ok && reset {
				tc.SetLinger(0) // close sends RST
			}
			c.Close()
		}
	})
	return ended
}

// chunk is one read, due for writing at due; eof marks the end of the
// direction.
type chunk struct {
	data []byte
	due  time.Time
	eof  bool
}

// pump forwards one direction: 0 from the accepted connection upstream,
// 1 back. The end of the stream (EOF) is passed on as a half-close; any
// other failure ends the pair with resets, as an RST crosses a router.
func (r *Relay) pump(p *pair, dir int) {
	src, dst := p.conns[dir], p.conns[1-dir]
	q := make(chan chunk, r.cfg.QueueChunks)
	var reader sync.WaitGroup
	reader.Add(1)
	go func() {
		defer reader.Done()
		r.read(p, src, q)
	}()
	defer reader.Wait()
	for {
		var c chunk
		var ok bool
		select {
		case c, ok = <-q:
		case <-p.done:
			return
		}
		if !ok || !r.waitDue(p, c.due) {
			return
		}
		if c.eof {
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			return
		}
		if _, err := dst.Write(c.data); err != nil {
			p.end(true)
			return
		}
		r.bytes[dir].Add(int64(len(c.data)))
	}
}

// read reads src into q, each chunk stamped with when it is due; it
// closes q when src fails.
func (r *Relay) read(p *pair, src net.Conn, q chan<- chunk) {
	var last time.Time
	for {
		buf := make([]byte, r.cfg.ChunkBytes)
		n, err := src.Read(buf)
		if n > 0 {
			last = r.due(last, true)
			select {
			case q <- chunk{data: buf[:n], due: last}:
			case <-p.done:
				return
			}
		}
		if errors.Is(err, io.EOF) {
			select {
			case q <- chunk{due: r.due(last, false), eof: true}:
			case <-p.done:
			}
			return
		}
		if err != nil {
			p.end(true)
			close(q)
			return
		}
	}
}

// due returns when a chunk read now is due: after the delay, the jitter
// and, when it is lost (lossy), the retransmission timeout, and never
// before the chunk read before it (last).
func (r *Relay) due(last time.Time, lossy bool) time.Time {
	r.mu.Lock()
	imp := r.imp
	wait := imp.Delay
	if imp.Jitter > 0 {
		wait += time.Duration(r.rng.Int64N(int64(imp.Jitter) + 1))
	}
	lost := lossy && imp.Loss > 0 && r.rng.Float64() < imp.Loss
	r.mu.Unlock()
	if lost {
		r.lost.Add(1)
		rto := imp.RetransmitAfter
		if rto <= 0 {
			rto = 200 * time.Millisecond
		}
		wait += rto
	}
	due := time.Now().Add(wait)
	if due.Before(last) {
		due = last
	}
	return due
}

// waitDue waits until due has come and no hold or stall is on; false
// means the pair ended first.
func (r *Relay) waitDue(p *pair, due time.Time) bool {
	for {
		r.mu.Lock()
		hold, until, changed := r.imp.Hold, r.holdUntil, r.changed
		r.mu.Unlock()
		wake := due
		if until.After(wake) {
			wake = until
		}
		wait := time.Until(wake)
		if !hold && wait <= 0 {
			return true
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if !hold {
			timer = time.NewTimer(wait)
			fire = timer.C
		}
		ended := false
		select {
		case <-changed:
		case <-fire:
		case <-p.done:
			ended = true
		}
		if timer != nil {
			timer.Stop()
		}
		if ended {
			return false
		}
	}
}
