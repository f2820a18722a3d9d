package gpu

import (
	"fmt"
	"sync"
	"weak"

	"github.com/trigrid/trigrid/graph"
)

// pinRegistry keeps blocks' host arrays page-locked in place
// (tg_host_register) for every counter of a Library: a registration is
// portable to every context of the process, so one block pinned serves
// the counters of all devices. A pinned block is uploaded with
// tg_load_block_async straight from its own arrays, on the copy stream,
// at the bus's full rate.
//
// The registry holds each pinned block strongly (the memory must not be
// reused while page-locked), at most limit bytes of them, and gives up the
// least recently used when it needs room, never one a pending load reads
// (readers, counted over every counter). Everything is released when the
// last counter closes, after its context is destroyed (which completes
// its pending loads).
type pinRegistry struct {
	lib *Library
	// limit bounds the page-locked bytes; <= 0 pins nothing.
	limit int64
	// minBytes is the smallest array registered (MinRegisterBytes; tests
	// of the reference library lower it, which has no pages to share).
	minBytes uint64

	mu     sync.Mutex
	held   int64
	tick   uint64
	users  int // open counters
	pins   map[*graph.CSR]*blockPin
	failed map[weak.Pointer[graph.CSR]]struct{}
	made   int // registrations made, for tests and logs
}

// blockPin is one pinned block: the registrations of its arrays (nil for
// an array below minBytes, copied through the driver's staging).
type blockPin struct {
	off, cols *Registration
	bytes     int64
	used      uint64
	readers   int
}

// maxFailed bounds the blocks remembered as not pinnable.
const maxFailed = 1 << 12

func newPinRegistry(lib *Library, limit int64) *pinRegistry {
	return &pinRegistry{lib: lib, limit: limit, minBytes: MinRegisterBytes,
		pins: map[*graph.CSR]*blockPin{}, failed: map[weak.Pointer[graph.CSR]]struct{}{}}
}

// open records a new counter.
func (r *pinRegistry) open() {
	r.mu.Lock()
	r.users++
	r.mu.Unlock()
}

// close records that a counter closed, its context destroyed; the last
// releases every registration. It returns the first release error.
func (r *pinRegistry) close() error {
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
func (r *pinRegistry) pinBytes(b *graph.CSR) int64 {
	var n int64
	if o := uint64(len(b.Offsets)) * 8; o >= r.minBytes {
		n += int64(o)
	}
	if c := uint64(len(b.Cols)) * 4; c >= r.minBytes {
		n += int64(c)
	}
	return n
}

// pinnable reports whether b has an array large enough to pin.
func (r *pinRegistry) pinnable(b *graph.CSR) bool {
	return r != nil && r.limit > 0 && r.pinBytes(b) > 0
}

// pin makes sure b is pinned, registering it when it is not and there is
// room (giving up idle pins that keep does not want, least recently used
// first), and reports whether it is. A block the host will not lock is
// remembered and not tried again.
func (r *pinRegistry) pin(b *graph.CSR, keep func(*graph.CSR) bool) bool {
	if !r.pinnable(b) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.get(b, keep)
	return ok
}

// adopt records reg, a registration of host memory that holds b's
// columns, as b's pin of bytes, when there is room, and reports whether it
// did; the registry then releases it as its own. b's offsets stay
// unpinned.
func (r *pinRegistry) adopt(b *graph.CSR, reg *Registration, bytes int64) bool {
	if r == nil || r.limit <= 0 || reg == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pins[b] != nil || bytes > r.limit || !r.room(bytes, nil) {
		return false
	}
	r.tick++
	r.pins[b] = &blockPin{cols: reg, bytes: bytes, used: r.tick}
	r.held += bytes
	return true
}

// holdCols reports whether b's columns are pinned now and, when they are,
// counts a reader of them (until endLoad), as startLoad does, without
// pinning anything.
func (r *pinRegistry) holdCols(b *graph.CSR) bool {
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

// startLoad pins b as pin does and, when it is pinned, counts a pending
// load reading it (until endLoad), so that it is neither given up nor
// released meanwhile.
func (r *pinRegistry) startLoad(b *graph.CSR, keep func(*graph.CSR) bool) bool {
	if !r.pinnable(b) {
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

// endLoad records that a load counted by startLoad has completed or was
// dropped.
func (r *pinRegistry) endLoad(b *graph.CSR) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.pins[b]; p != nil && p.readers > 0 {
		p.readers--
	}
}

// get returns b's pin, making it when there is room. r.mu is held.
func (r *pinRegistry) get(b *graph.CSR, keep func(*graph.CSR) bool) (*blockPin, bool) {
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
		p.off, err = registerSlice(r.lib, b.Offsets)
	}
	if err == nil && uint64(len(b.Cols))*4 >= r.minBytes {
		p.cols, err = registerSlice(r.lib, b.Cols)
	}
	if err != nil {
		// Overlapping another registration or refused by the host: the
		// block is uploaded from pageable memory.
		r.lib.logger.Debug("block not pinned", "bytes", need, "err", err)
		if rerr := p.off.Release(); rerr != nil {
			r.lib.logger.Warn("releasing a partial pin", "err", rerr)
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
func (r *pinRegistry) room(need int64, keep func(*graph.CSR) bool) bool {
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
			r.lib.logger.Warn("releasing a pinned block", "err", err)
			return false
		}
	}
	return true
}

// release unregisters one pin and forgets it. r.mu is held. A pin the
// library refuses to release stays (held and counted).
func (r *pinRegistry) release(b *graph.CSR, p *blockPin) error {
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

// String describes the registry for errors and logs.
func (r *pinRegistry) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("%d pinned blocks, %d of %d bytes, %d counters", len(r.pins), r.held, r.limit, r.users)
}
