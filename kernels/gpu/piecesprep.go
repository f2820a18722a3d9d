package gpu

import (
	"time"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// piecesHost is the host memory an orientation in pieces pins first,
// readied by PrepareOrient before the pairs are final.
type piecesHost struct {
	keys []uint64          // the pairs' whole memory as keys
	done chan struct{}     // closed once reg is set
	reg  *abi.Registration // keys' pin; nil: pinning failed
}

// PrepareOrient implements kernels.Device: when an orientation of
// pairs would go in pieces (the pairs do not fit the device whole, and the
// runs would not be too many), it pins the pairs' memory on a goroutine
// of its own and returns at once. Pinning reads nothing, so the caller may
// still be writing pairs. OrientOnDevice of pairs or a prefix of them
// takes what it readied; another orientation, a later PrepareOrient or
// Close releases it.
func (c *Counter) PrepareOrient(pairs []uint32) {
	np := uint64(len(pairs) / 2)
	at := unsafe.Pointer(unsafe.SliceData(pairs))
	if np == 0 || uintptr(at)%8 != 0 {
		return // wordsAsKeys copies unaligned pairs: nothing to pin ahead
	}
	if _, _, ok := c.hasFree(devmem.PreprocessMinBytes(np, 0)); ok {
		return // tg_preprocess may take them whole
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return
	}
	c.dropPiecesHost()
	c.dropSpare()
	// The work area without vertex words is the largest the pieces could
	// have: past maxPieceRuns even so, they will decline.
	capItems, err := c.ctx.PiecesBegin(0, np, nil)
	if err != nil {
		return
	}
	if err := c.ctx.PiecesEnd(); err != nil || (np+capItems-1)/capItems > maxPieceRuns {
		return
	}
	h := &piecesHost{keys: unsafe.Slice((*uint64)(at), np), done: make(chan struct{})}
	c.piecesHost = h
	go func() {
		defer close(h.done)
		t := time.Now()
		h.reg = c.lib.registerPairs(kernels.IDPairs{P64: h.keys})
		c.lib.logger.Debug("pieces: host memory readied", "keys_pinned", time.Since(t).Seconds())
	}()
}

// takePiecesHost returns, once ready, the memory PrepareOrient readied
// when its keys start where keys does and hold at least as many, and nil
// otherwise (releasing any). c.mu is held.
func (c *Counter) takePiecesHost(keys []uint64) *piecesHost {
	h := c.piecesHost
	if h == nil {
		return nil
	}
	if len(keys) == 0 || unsafe.SliceData(keys) != unsafe.SliceData(h.keys) || len(keys) > len(h.keys) {
		c.dropPiecesHost()
		return nil
	}
	c.piecesHost = nil
	<-h.done
	return h
}

// dropPiecesHost releases what PrepareOrient readied and no orientation
// took. c.mu is held.
func (c *Counter) dropPiecesHost() {
	h := c.piecesHost
	if h == nil {
		return
	}
	c.piecesHost = nil
	<-h.done
	c.lib.releaseLogged(h.reg)
}

// spareRoom is pinned host memory past a forward graph's columns, in the
// array whose pin the pin registry holds for those columns: it stays
// pinned and alive while the graph is counted.
type spareRoom struct {
	cols  *uint32 // the graph's first column
	mem   unsafe.Pointer
	bytes uint64
}

// spareAfter is the room of words past fwd's columns, which lie at their
// start (8-byte aligned; none when less than 8 bytes are left).
func spareAfter(fwd *graph.CSR, words []uint32) spareRoom {
	from := (uint64(len(fwd.Cols)) + 1) &^ 1
	if len(fwd.Cols) == 0 || from+2 > uint64(len(words)) {
		return spareRoom{}
	}
	return spareRoom{cols: &fwd.Cols[0], mem: unsafe.Pointer(&words[from]), bytes: (uint64(len(words)) - from) * 4}
}

// takeSpare returns the spare room an orientation in pieces left when it
// lies past fwd's columns (else none) and forgets it. c.mu is held.
func (c *Counter) takeSpare(fwd *graph.CSR) spareRoom {
	r := c.spare
	c.spare = spareRoom{}
	if len(fwd.Cols) == 0 || r.cols != &fwd.Cols[0] {
		return spareRoom{}
	}
	return r
}

// dropSpare forgets the spare room, if any. c.mu is held.
func (c *Counter) dropSpare() { c.spare = spareRoom{} }
