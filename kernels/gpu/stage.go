package gpu

import (
	"errors"
	"fmt"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// stage is an edge list of 32-bit ids on its way into the context's input
// buffer (tg_input_alloc, tg_input_copy_async), piece by piece, each piece
// registered (page-locked in place) so that the copy engine reads it at
// the bus's speed while the host goes on reading the rest. Its fields
// change under the counter's mutex.
type stage struct {
	c     *Counter
	words int
	added int  // words enqueued
	held  bool // the library holds the input buffer for this stage
	regs  []*abi.Registration
}

// StageIDs implements kernels.Device: it reserves the context's input
// buffer for words 32-bit ids (replacing an earlier stage's). An error
// wrapping ErrOutOfMemory means the ids do not fit the device.
func (c *Counter) StageIDs(words int) (*kernels.IDStage, error) {
	if words < 0 || words%2 != 0 {
		return nil, fmt.Errorf("gpu: stage ids: %d ids are no whole number of pairs", words)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil, fmt.Errorf("gpu: stage ids: counter is closed")
	}
	if c.input != nil {
		c.input.held = false // tg_input_alloc frees its buffer
		c.input = nil
	}
	if err := c.ctx.InputAlloc(uint64(words) * 4); err != nil {
		return nil, fmt.Errorf("gpu: stage ids: %w", err)
	}
	s := &stage{c: c, words: words, held: true}
	c.input = s
	return kernels.NewIDStage(s, s.Add, s.Release), nil
}

// Add is kernels.IDStage.Add. A piece of devmem.MinRegisterBytes or more is
// registered first; one that cannot be is copied from pageable memory,
// which is slower but the same.
func (s *stage) Add(ids []uint32, lo, hi int) error {
	if len(ids) != s.words || lo < 0 || lo > hi || hi > len(ids) {
		return fmt.Errorf("gpu: stage ids: words %d to %d of %d, for a stage of %d", lo, hi, len(ids), s.words)
	}
	if lo == hi {
		return nil
	}
	piece := ids[lo:hi]
	reg, err := devmem.Register(s.c.lib.abi, piece)
	if err != nil {
		s.c.lib.logger.Debug("staging ids from pageable memory", "err", err)
		reg = nil
	}
	c := s.c
	c.mu.Lock()
	if !s.held || c.ctx == nil {
		c.mu.Unlock()
		return errors.Join(fmt.Errorf("gpu: stage ids: the stage was released or consumed"), reg.Release())
	}
	err = c.ctx.InputCopy(uint64(lo)*4, piece)
	if err == nil {
		s.added += len(piece)
		if reg != nil {
			s.regs = append(s.regs, reg)
		}
	}
	c.mu.Unlock()
	if err != nil {
		return errors.Join(fmt.Errorf("gpu: stage ids: %w", err), reg.Release())
	}
	return nil
}

// Release is kernels.IDStage.Release.
func (s *stage) Release() error {
	c := s.c
	var errs []error
	c.mu.Lock()
	if s.held && c.ctx != nil {
		if err := c.ctx.InputFree(); err != nil {
			errs = append(errs, fmt.Errorf("gpu: release staged ids: %w", err))
		}
	}
	s.held = false
	if c.input == s {
		c.input = nil
	}
	regs := s.regs
	s.regs = nil
	c.mu.Unlock()
	// No copy is pending now: the library waited for them when it freed
	// or consumed the buffer, or when the context was destroyed.
	for _, r := range regs {
		if err := r.Release(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// takeStage checks that p.Staged is a complete stage of c's and hands its
// buffer to the library call about to consume it. c.mu is held.
func (c *Counter) takeStage(p kernels.IDPairs) error {
	s, ok := p.Staged.Handle().(*stage)
	switch {
	case !ok || s.c != c:
		return fmt.Errorf("staged ids belong to another device")
	case p.P64 != nil:
		return fmt.Errorf("staged ids are 32-bit, the pairs 64-bit")
	case !s.held || c.input != s:
		return fmt.Errorf("the staged ids were released or consumed")
	case s.words != len(p.P32) || s.added != s.words:
		return fmt.Errorf("%d of %d ids staged for %d", s.added, s.words, len(p.P32))
	}
	s.held = false // the library frees the buffer, whatever the outcome
	c.input = nil
	return nil
}

// uploadPiece is the size of the pieces uploadPairs hands a large list
// of 32-bit ids to the device in: large enough that pinning and enqueueing
// each costs little against its copy, small enough that the first copy
// starts soon and the last ends soon after the last pin. A power of two
// of a page or more (kernels.AlignedPieces); a variable for the tests.
var uploadPiece = 128 << 20

// uploadPairs readies p's ids, not staged while read, for a call of the
// library that copies them in: 32-bit ids of two pieces or more are
// staged now, piece by piece (each pinned in place, then copied by the
// copy engine while the next is pinned: one pass of pinning and copying
// where pinning the whole list and then copying it makes two), and the
// pairs come back with Staged set; otherwise they are pinned whole
// (registerPairs) for the library's one copy. done releases the stage or
// the pins once the call has consumed the ids. c.mu is not held.
func (c *Counter) uploadPairs(p kernels.IDPairs) (_ kernels.IDPairs, done func()) {
	if p.Staged != nil {
		return p, func() {}
	}
	if p.P32 != nil && len(p.P32)*4 >= 2*uploadPiece {
		st, err := c.stageInPieces(p.P32)
		if err == nil {
			p.Staged = st
			return p, func() { c.releaseStageLogged(st) }
		}
		// Pinned whole, the same ids take the library's own copy.
		c.lib.logger.Debug("uploading ids pinned whole: staging them failed", "err", err)
	}
	reg := c.lib.registerPairs(p)
	return p, func() { c.lib.releaseLogged(reg) }
}

// stageInPieces stages ids on c's device in pieces of uploadPiece bytes
// (kernels.AlignedPieces), in order. After a failure nothing is held.
func (c *Counter) stageInPieces(ids []uint32) (*kernels.IDStage, error) {
	st, err := c.StageIDs(len(ids))
	if err != nil {
		return nil, err
	}
	starts := kernels.AlignedPieces(ids, uploadPiece)
	for i, lo := range starts {
		hi := len(ids)
		if i+1 < len(starts) {
			hi = starts[i+1]
		}
		if err := st.Add(ids, lo, hi); err != nil {
			c.releaseStageLogged(st)
			return nil, err
		}
	}
	return st, nil
}

// releaseStageLogged releases st, logging a failure.
func (c *Counter) releaseStageLogged(st *kernels.IDStage) {
	if err := st.Release(); err != nil {
		c.lib.logger.Warn("releasing staged ids", "err", err)
	}
}

// registerPairs page-locks p's ids for one upload, so that the library's
// copy runs at the bus's speed: pinning memory the host has touched and
// copying costs less than one copy from pageable memory. A failure leaves
// them pageable (nil). The caller releases the registration.
func (l *Library) registerPairs(p kernels.IDPairs) *abi.Registration {
	var (
		reg *abi.Registration
		err error
	)
	if p.P64 != nil {
		reg, err = devmem.Register(l.abi, p.P64)
	} else {
		reg, err = devmem.Register(l.abi, p.P32)
	}
	if err != nil {
		l.logger.Debug("uploading ids from pageable memory", "err", err)
		return nil
	}
	return reg
}
