// Package testrelay is a TCP relay for network-fault tests that impairs
// what it forwards: delay and jitter on every chunk, lost segments
// (delivered one retransmission timeout late, with everything behind
// them, as TCP delivers a lost segment), throughput stalls and holds
// (nothing forwarded, nothing dropped, no RST), and connections reset in
// mid-stream. It stands in for tc netem where the kernel has none, at the
// level the programs under test see: the bytes of a TCP stream and when
// they arrive. Datagrams (gossip) do not pass through it.
//
// The continuous impairment (Set) applies to every chunk; stalls, holds
// and resets are events the test triggers, so it knows they happened.
package testrelay

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Impairment is what happens to every chunk the relay forwards.
type Impairment struct {
	// Delay is added to each chunk in each direction, and Jitter up to
	// that much more, uniformly; chunks are never reordered (a chunk is
	// never due before the one read before it).
	Delay, Jitter time.Duration
	// Loss is the probability that a chunk is lost: it arrives
	// RetransmitAfter late, and the chunks behind it wait for it.
	Loss float64
	// RetransmitAfter is how late a lost chunk arrives; 0 means 200 ms,
	// Linux's minimum retransmission timeout.
	RetransmitAfter time.Duration
	// Hold forwards nothing, either way, until it is lifted: bytes wait
	// in the relay (and, once its queue is full, in TCP below it), as
	// behind a link that went silent. No connection is closed.
	Hold bool
}

// Config configures a Relay.
type Config struct {
	// Listener accepts the connections to relay. Required; the relay
	// closes it.
	Listener net.Listener
	// Dial opens the upstream connection for each accepted one.
	// Required.
	Dial func(ctx context.Context) (net.Conn, error)
	// Impairment is the impairment to start with.
	Impairment Impairment
	// Seed seeds jitter and loss.
	Seed uint64
	// ChunkBytes is the most one read takes, the unit of delay and loss.
	ChunkBytes int
	// QueueChunks is how many chunks a direction holds before it stops
	// reading (back pressure to the sender).
	QueueChunks int
}

// DefaultConfig returns a Config with the sizes set and no impairment.
func DefaultConfig() Config {
	return Config{ChunkBytes: 16 << 10, QueueChunks: 64}
}

// Stats counts what a relay did.
type Stats struct {
	// Accepted counts connections accepted; Resets those reset.
	Accepted, Resets int64
	// Lost counts chunks delivered late as lost; Stalls the stalls and
	// holds started.
	Lost, Stalls int64
	// Up and Down count bytes forwarded to upstream and back.
	Up, Down int64
}

// Relay forwards TCP connections from its listener to Dial's, impaired.
type Relay struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	imp       Impairment
	holdUntil time.Time
	changed   chan struct{} // closed and replaced when imp or holdUntil change
	rng       *rand.Rand
	pairs     map[*pair]struct{}
	closed    bool

	accepted, resets, lost, stalls atomic.Int64
	bytes                          [2]atomic.Int64
}

// New starts a relay; Close stops it.
func New(cfg Config) (*Relay, error) {
	if cfg.Listener == nil || cfg.Dial == nil {
		return nil, errors.New("testrelay: Listener and Dial are required")
	}
	d := DefaultConfig()
	if cfg.ChunkBytes <= 0 {
		cfg.ChunkBytes = d.ChunkBytes
	}
	if cfg.QueueChunks <= 0 {
		cfg.QueueChunks = d.QueueChunks
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Relay{cfg: cfg, ctx: ctx, cancel: cancel, imp: cfg.Impairment, changed: make(chan struct{}),
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x7e1a7)), pairs: map[*pair]struct{}{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Addr is the listener's address.
func (r *Relay) Addr() net.Addr { return r.cfg.Listener.Addr() }

// Set replaces the impairment.
func (r *Relay) Set(imp Impairment) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if imp.Hold && !r.imp.Hold {
		r.stalls.Add(1)
	}
	r.imp = imp
	r.notifyLocked()
}

// Stall forwards nothing, either way, for d from now (a throughput
// stall); traffic resumes by itself.
func (r *Relay) Stall(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stalls.Add(1)
	if until := time.Now().Add(d); until.After(r.holdUntil) {
		r.holdUntil = until
	}
	r.notifyLocked()
}

func (r *Relay) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Reset resets every open connection: both ends get an RST (a read or
// write fails with "connection reset by peer"). It returns how many
// connections it reset.
func (r *Relay) Reset() int {
	r.mu.Lock()
	pairs := make([]*pair, 0, len(r.pairs))
	for p := range r.pairs {
		pairs = append(pairs, p)
	}
	r.mu.Unlock()
	n := 0
	for _, p := range pairs {
		if p.end(true) {
			n++
			r.resets.Add(1)
		}
	}
	return n
}

// Stats returns the counts so far.
func (r *Relay) Stats() Stats {
	return Stats{Accepted: r.accepted.Load(), Resets: r.resets.Load(), Lost: r.lost.Load(),
		Stalls: r.stalls.Load(), Up: r.bytes[0].Load(), Down: r.bytes[1].Load()}
}

// Close stops accepting, closes every connection and waits for the
// relay's goroutines.
func (r *Relay) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	pairs := make([]*pair, 0, len(r.pairs))
	for p := range r.pairs {
		pairs = append(pairs, p)
	}
	r.mu.Unlock()
	r.cancel()
	err := r.cfg.Listener.Close()
	for _, p := range pairs {
		p.end(false)
	}
	r.wg.Wait()
	return err
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.cfg.Listener.Accept()
		if err != nil {
			return
		}
		r.accepted.Add(1)
		r.wg.Add(1)
		go r.serve(c)
	}
}

// serve dials upstream for one accepted connection and pumps both ways.
func (r *Relay) serve(down net.Conn) {
	defer r.wg.Done()
	up, err := r.cfg.Dial(r.ctx)
	if err != nil {
		down.Close()
		return
	}
	p := &pair{conns: [2]net.Conn{down, up}, done: make(chan struct{})}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		p.end(false)
		return
	}
	r.pairs[p] = struct{}{}
	r.mu.Unlock()
	var dirs sync.WaitGroup
	for dir := range 2 {
		dirs.Add(1)
		go func() {
			defer dirs.Done()
			r.pump(p, dir)
		}()
	}
	dirs.Wait()
	p.end(false)
	r.mu.Lock()
	delete(r.pairs, p)
	r.mu.Unlock()
}
