package gpu

import (
	"fmt"
	"sync"
	"unsafe"
	"weak"

	"github.com/trigrid/trigrid/graph"
)

// hostCopy is a block's offsets and columns in pinned host memory
// (tg_host_alloc), the source of its asynchronous uploads.
type hostCopy struct {
	block weak.Pointer[graph.CSR]
	mem   unsafe.Pointer
	cap   int64 // bytes of mem
	off   []uint64
	cols  []uint32
	used  uint64 // last use, for LRU eviction
	// readers counts the slots with a pending load from this copy: the
	// library reads it until the load completes, so it is not freed or
	// reused before.
	readers int
}

// pinnedCache keeps pinned copies of blocks within limit bytes. It is
// used under the Counter's mutex.
type pinnedCache struct {
	lib    *Library
	limit  int64
	held   int64 // bytes of the copies
	copies map[weak.Pointer[graph.CSR]]*hostCopy
	buf    []byte
}

func newPinnedCache(lib *Library, limit int64) *pinnedCache {
	return &pinnedCache{lib: lib, limit: limit, copies: map[weak.Pointer[graph.CSR]]*hostCopy{}, buf: make([]byte, errBufLen)}
}

// hostBytes is the size of a block's pinned copy: offsets, then columns.
func hostBytes(b *graph.CSR) int64 { return int64(len(b.Offsets))*8 + int64(len(b.Cols))*4 }

// get returns b's pinned copy, making it when b has none; nil when the
// limit leaves no room for it even after evicting every copy that is
// neither in use (readers) nor wanted (keep), or when the host has no
// pinned memory to give (the caller then uploads from b itself).
func (p *pinnedCache) get(b *graph.CSR, tick uint64, keep func(*graph.CSR) bool) *hostCopy {
	if p == nil || p.limit <= 0 {
		return nil
	}
	key := weak.Make(b)
	if hc := p.copies[key]; hc != nil {
		if len(hc.off) != len(b.Offsets) || len(hc.cols) != len(b.Cols) {
			return nil // blocks are immutable; never upload a stale copy
		}
		hc.used = tick
		return hc
	}
	need := max(hostBytes(b), 8)
	if need > p.limit {
		return nil
	}
	hc := p.buffer(need, keep)
	if hc == nil {
		return nil
	}
	hc.block = key
	hc.used = tick
	hc.off = unsafe.Slice((*uint64)(hc.mem), len(b.Offsets))
	hc.cols = unsafe.Slice((*uint32)(unsafe.Add(hc.mem, 8*len(b.Offsets))), len(b.Cols))
	copy(hc.off, b.Offsets)
	parallelCopy(hc.cols, b.Cols)
	p.copies[key] = hc
	return hc
}

// has reports whether b has a pinned copy.
func (p *pinnedCache) has(b *graph.CSR) bool {
	if p == nil {
		return false
	}
	hc := p.copies[weak.Make(b)]
	return hc != nil && len(hc.off) == len(b.Offsets) && len(hc.cols) == len(b.Cols)
}

// buffer finds room for need bytes, evicting copies that are neither in
// use nor kept, least recently used first (those of collected blocks
// before all others), and allocates it.
func (p *pinnedCache) buffer(need int64, keep func(*graph.CSR) bool) *hostCopy {
	for p.held+need > p.limit {
		var victim *hostCopy
		var vkey weak.Pointer[graph.CSR]
		var vage uint64
		for k, hc := range p.copies {
			b := k.Value()
			if hc.readers > 0 || b != nil && keep(b) {
				continue
			}
			age := hc.used
			if b == nil {
				age = 0
			}
			if victim == nil || age < vage {
				victim, vkey, vage = hc, k, age
			}
		}
		if victim == nil {
			return nil
		}
		delete(p.copies, vkey)
		p.release(victim)
	}
	var mem unsafe.Pointer
	if rc := p.lib.hostAlloc(uint64(need), &mem, &p.buf[0], errBufLen); rc != tgOK || mem == nil {
		return nil
	}
	p.held += need
	return &hostCopy{mem: mem, cap: need}
}

// release frees one buffer.
func (p *pinnedCache) release(hc *hostCopy) {
	if hc.mem != nil {
		p.lib.hostFree(hc.mem)
		p.held -= hc.cap
	}
	*hc = hostCopy{}
}

// close frees every buffer. No load may be pending from any of them (the
// context is destroyed first).
func (p *pinnedCache) close() {
	if p == nil {
		return
	}
	for k, hc := range p.copies {
		delete(p.copies, k)
		p.release(hc)
	}
}

// String describes the cache for errors and logs.
func (p *pinnedCache) String() string {
	return fmt.Sprintf("%d pinned copies, %d of %d bytes", len(p.copies), p.held, p.limit)
}

// parallelCopy copies src into dst on a few goroutines when it is large:
// staging a block into pinned memory is a memory copy that one core does
// at a fraction of the host's bandwidth.
func parallelCopy(dst, src []uint32) {
	const chunk = 1 << 20 // entries
	if len(src) <= chunk {
		copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	for lo := 0; lo < len(src); lo += chunk {
		hi := min(lo+chunk, len(src))
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
}
