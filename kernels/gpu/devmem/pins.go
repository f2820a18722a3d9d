package devmem

import (
	"fmt"
	"log/slog"
	"sync"
	"weak"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
)

// Pins keeps blocks' host arrays page-locked in place (tg_host_register)
// for every context of a library: a registration is portable to every
// context of the process, so one block pinned serves the counters of all
// devices. A pinned block is uploaded asynchronously straight from its
// own arrays, on the copy stream, at the bus's full rate.
//
// Pins holds each pinned block strongly (the memory must not be reused
// while page-locked), at most Limit bytes of them, and gives up the least
// recently used when it needs room, never one a pending load reads
// (readers, counted over every context). Everything is released when the
// last user closes, after its context is destroyed (which completes its
// pending loads). It is safe for concurrent use.
type Pins struct {
	lib    *abi.Lib
	logger *slog.Logger
	// limit bounds the page-locked bytes; <= 0 pins nothing.
	limit int64
	// minBytes is the smallest array registered.
	minBytes uint64

	mu     sync.Mutex
	held   int64
	tick   uint64
	users  int // open users
	pins   map[*graph.CSR]*blockPin
	failed map[weak.Pointer[graph.CSR]]struct{}
	made   int // blocks pinned, for logs
}

// blockPin is one pinned block: the registrations of its arrays (nil for
// an array below minBytes, copied through the driver's staging).
type blockPin struct {
	off, cols *abi.Registration
	bytes     int64
	used      uint64
	readers   int
}

// maxFailed bounds the blocks remembered as not pinnable.
const maxFailed = 1 << 12

// DefaultPinLimit is PinsConfig.Limit's default: the blocks of a graph of
// some 500M edges.
const DefaultPinLimit = 2 << 30

// PinsConfig configures Pins.
type PinsConfig struct {
	// Limit bounds the page-locked bytes; 0 or less pins nothing.
	Limit int64
	// MinBytes is the smallest array pinned (MinRegisterBytes: a smaller
	// one may share a page with another registration; tests of the
	// reference library, which has no pages to share, lower it).
	MinBytes uint64
	// Logger receives the pins given up or refused; nil discards them.
	Logger *slog.Logger
}

// DefaultPinsConfig is DefaultPinLimit of arrays of MinRegisterBytes or
// more.
func DefaultPinsConfig() PinsConfig {
	return PinsConfig{Limit: DefaultPinLimit, MinBytes: MinRegisterBytes}
}

// NewPins is a registry of lib's pins.
func NewPins(lib *abi.Lib, cfg PinsConfig) *Pins {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Pins{lib: lib, logger: logger, limit: cfg.Limit, minBytes: cfg.MinBytes,
		pins: map[*graph.CSR]*blockPin{}, failed: map[weak.Pointer[graph.CSR]]struct{}{}}
}

// Limit is the most bytes pinned; 0 or less pins nothing.
func (r *Pins) Limit() int64 { return r.limit }

// Open records a new user (a counter).
func (r *Pins) Open() {
	r.mu.Lock()
	r.users++
	r.mu.Unlock()
}

// Close records that a user closed, its context destroyed; the last
// releases every registration. It returns the first release error.
func (r *Pins) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.users--
	if r.users > 0 {
		return nil
	}
	var first error
	for b, p := range r.pins {
		if err := r.release(b, p); err != nil && first == nil {
			first = err
		}
	}
	clear(r.failed)
	return first
}

// pinBytes is what pinning b locks: its arrays of at least minBytes.
func (r *Pins) pinBytes(b *graph.CSR) int64 {
	var n int64
	if o := uint64(len(b.Offsets)) * 8; o >= r.minBytes {
		n += int64(o)
	}
	if c := uint64(len(b.Cols)) * 4; c >= r.minBytes {
		n += int64(c)
	}
	return n
}

// Pinnable reports whether b has an array large enough to pin.
func (r *Pins) Pinnable(b *graph.CSR) bool {
	return r != nil && r.limit > 0 && r.pinBytes(b) > 0
}

// Pin makes sure b is pinned, registering it when it is not and there is
// room (giving up idle pins that keep does not want, least recently used
// first), and reports whether it is. A block the host will not lock is
// remembered and not tried again.
func (r *Pins) Pin(b *graph.CSR, keep func(*graph.CSR) bool) bool {
	if !r.Pinnable(b) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.get(b, keep)
	return ok
}

// Adopt records reg, a registration of host memory that holds b's
// columns, as b's pin of bytes, and reports whether it did; the registry
// then releases it as its own. b's offsets stay unpinned. The memory is
// page-locked already, so adopting it locks nothing more: idle pins are
// given up for its room as far as they go, and the limit does not refuse
// it (the registry may then hold more than Limit until room is wanted and
// the adopted pin is idle). Only a registry that pins nothing (Limit 0 or
// less) or one that pins b already declines.
func (r *Pins) Adopt(b *graph.CSR, reg *abi.Registration, bytes int64) bool {
	if r == nil || r.limit <= 0 || reg == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pins[b] != nil {
		return false
	}
	r.room(bytes, nil)
	r.tick++
	r.pins[b] = &blockPin{cols: reg, bytes: bytes, used: r.tick}
	r.held += bytes
	return true
}

// HoldCols reports whether b's columns are pinned now and, when they are,
// counts a reader of them (until EndLoad), as StartLoad does, without
// pinning anything.
func (r *Pins) HoldCols(b *graph.CSR) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pins[b]
	if p == nil || p.cols == nil {
		return false
	}
	r.tick++
	p.used = r.tick
	p.readers++
	return true
}

// StartLoad pins b as Pin does and, when it is pinned, counts a pending
// load reading it (until EndLoad), so that it is neither given up nor
// released meanwhile.
func (r *Pins) StartLoad(b *graph.CSR, keep func(*graph.CSR) bool) bool {
	if !r.Pinnable(b) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.get(b, keep)
	if ok {
		p.readers++
	}
	return ok
}

// EndLoad records that a load counted by StartLoad (or HoldCols) has
// completed or was dropped.
func (r *Pins) EndLoad(b *graph.CSR) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.pins[b]; p != nil && p.readers > 0 {
		p.readers--
	}
}

// Pinned reports whether the registry holds a pin of b now.
func (r *Pins) Pinned(b *graph.CSR) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pins[b] != nil
}

// get returns b's pin, making it when there is room. r.mu is held.
func (r *Pins) get(b *graph.CSR, keep func(*graph.CSR) bool) (*blockPin, bool) {
	r.tick++
	if p := r.pins[b]; p != nil {
		p.used = r.tick
		return p, true
	}
	key := weak.Make(b)
	if _, bad := r.failed[key]; bad {
		return nil, false
	}
	need := r.pinBytes(b)
	if need > r.limit || !r.room(need, keep) {
		return nil, false
	}
	p := &blockPin{bytes: need, used: r.tick}
	var err error
	if uint64(len(b.Offsets))*8 >= r.minBytes {
		p.off, err = abi.Register(r.lib, b.Offsets)
	}
	if err == nil && uint64(len(b.Cols))*4 >= r.minBytes {
		p.cols, err = abi.Register(r.lib, b.Cols)
	}
	if err != nil {
		// Overlapping another registration or refused by the host: the
		// block is uploaded from pageable memory.
		r.logger.Debug("block not pinned", "bytes", need, "err", err)
		if rerr := p.off.Release(); rerr != nil {
			r.logger.Warn("releasing a partial pin", "err", rerr)
		}
		if len(r.failed) >= maxFailed {
			clear(r.failed)
		}
		r.failed[key] = struct{}{}
		return nil, false
	}
	r.pins[b] = p
	r.held += need
	r.made++
	return p, true
}

// room gives up idle pins, least recently used first, until need more
// bytes fit the limit, and reports whether they do. r.mu is held.
func (r *Pins) room(need int64, keep func(*graph.CSR) bool) bool {
	for r.held+need > r.limit {
		var vb *graph.CSR
		var vp *blockPin
		for b, p := range r.pins {
			if p.readers > 0 || keep != nil && keep(b) {
				continue
			}
			if vp == nil || p.used < vp.used {
				vb, vp = b, p
			}
		}
		if vp == nil {
			return false
		}
		if err := r.release(vb, vp); err != nil {
			r.logger.Warn("releasing a pinned block", "err", err)
			return false
		}
	}
	return true
}

// release unregisters one pin and forgets it. r.mu is held. A pin the
// library refuses to release stays (held and counted).
func (r *Pins) release(b *graph.CSR, p *blockPin) error {
	if err := p.off.Release(); err != nil {
		return err
	}
	if err := p.cols.Release(); err != nil {
		return err
	}
	delete(r.pins, b)
	r.held -= p.bytes
	return nil
}

// PinStats are a registry's figures at one moment.
type PinStats struct {
	Blocks  int   // blocks pinned
	Held    int64 // bytes pinned
	Limit   int64
	Readers int // pending loads reading pinned blocks
	Made    int // blocks pinned since the registry was made
	Users   int
}

// Stats reports the registry's figures now.
func (r *Pins) Stats() PinStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := PinStats{Blocks: len(r.pins), Held: r.held, Limit: r.limit, Made: r.made, Users: r.users}
	for _, p := range r.pins {
		st.Readers += p.readers
	}
	return st
}

// String describes the figures for errors and logs.
func (s PinStats) String() string {
	return fmt.Sprintf("%d pinned blocks (%d loads reading), %d of %d bytes, %d pinned in all, %d users",
		s.Blocks, s.Readers, s.Held, s.Limit, s.Made, s.Users)
}
