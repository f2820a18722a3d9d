package gpu

import (
	"sync"
	"time"
	"unsafe"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// piecesHost is the host memory an orientation in pieces pins and makes
// first, readied by PrepareOrient before the pairs are final.
type piecesHost struct {
	keys []uint64          // the pairs' whole memory as keys
	done chan struct{}     // closed once reg, second and sreg are set
	reg  *abi.Registration // keys' pin; nil: pinning failed
	// second is the merge's host array, faulted in; sreg its pin (nil:
	// pinning failed).
	second []uint64
	sreg   *abi.Registration
}

// PrepareOrient implements kernels.Device: when an orientation of
// pairs would go in pieces (the pairs do not fit the device whole, and the
// runs would not be too many), it pins the pairs' memory and makes, faults
// in and pins the second host array the pieces merge into, on goroutines of
// its own, and returns at once. Pinning reads nothing, so the caller may
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
		var wg sync.WaitGroup
		var keysPinned time.Duration
		wg.Go(func() {
			h.reg = c.lib.registerPairs(kernels.IDPairs{P64: h.keys})
			keysPinned = time.Since(t)
		})
		h.second = make([]uint64, np)
		devmem.Prefault(h.second)
		faulted := time.Since(t)
		h.sreg = c.lib.registerPairs(kernels.IDPairs{P64: h.second})
		wg.Wait()
		c.lib.logger.Debug("pieces: host memory readied", "keys_pinned", keysPinned.Seconds(),
			"second_faulted", faulted.Seconds(), "second_pinned", time.Since(t).Seconds())
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
	c.lib.releaseLogged(h.sreg)
}

// takeSpare returns the spare pinned host array an orientation in pieces
// left (nil: none) and forgets it: the caller releases it. c.mu is held.
func (c *Counter) takeSpare() *abi.Registration {
	r := c.spare
	c.spare = nil
	return r
}

// dropSpare releases the spare pinned host array, if any. c.mu is held.
func (c *Counter) dropSpare() {
	if r := c.takeSpare(); r != nil {
		c.lib.releaseLogged(r)
	}
}

// releaseInBackground releases r on a goroutine of its own, which Close
// waits for.
func (c *Counter) releaseInBackground(r *abi.Registration) {
	c.background.Go(func() { c.lib.releaseLogged(r) })
}
