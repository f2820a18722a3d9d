package pipeline

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/trigrid/trigrid/kernels"
)

// stageSizes shape an inputStage.
type stageSizes struct {
	// piece is the size of the pieces the pairs go to the device in: small
	// enough that little is left to copy when the read ends, large enough
	// that pinning and enqueueing each costs little against its copy. A
	// power of two of 64 KiB or more, so that pieces aligned to it share
	// no page.
	piece int
	// min: pairs of fewer bytes are not staged (they are read before a
	// device starts).
	min int
}

// defaultStageSizes are the sizes of a count's inputStage.
var defaultStageSizes = stageSizes{piece: 32 << 20, min: 64 << 20}

// inputStage sends a 32-bit binary file's pairs to the device while the
// file is still being read: when the device is ready before the read ends
// and its counter is a kernels.IDStager, each piece of the pairs that the
// read has completed is handed to the device (pinned in place and copied
// by the copy engine) while the read goes on. It watches the read through
// edgeio.PairsWatcher.
type inputStage struct {
	log   *slog.Logger
	sizes stageSizes
	begun chan struct{} // closed by Begin
	ended chan struct{} // closed by finish
	wake  chan struct{} // a piece is ready, or the read ended
	done  chan struct{} // closed when the uploader stops

	mu     sync.Mutex
	pairs  []uint32
	starts []int // first word of each piece, ascending; pieces end where the next starts
	left   []int // words of each piece still unread
	ready  []int // pieces read and not yet handed to the device
	failed bool  // the read failed or was cancelled

	// Set by the uploader, read after done is closed.
	stage kernels.IDStage
	added int // pieces handed to the device
	err   error
}

// newInputStage starts the uploader, which waits for dev's counter; the
// caller reads with the stage as its edgeio.PairsWatcher and then calls
// finish.
func newInputStage(ctx context.Context, dev *pendingCounter, log *slog.Logger, sizes stageSizes) *inputStage {
	s := &inputStage{log: log, sizes: sizes, begun: make(chan struct{}), ended: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.upload(ctx, dev)
	return s
}

// Begin implements edgeio.PairsWatcher.
func (s *inputStage) Begin(pairs []uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(s.begun)
	s.pairs = pairs
	if len(pairs) == 0 {
		return
	}
	// Pieces start at addresses aligned to their size (after the first),
	// so that no two pinned pieces share a page.
	piece := uintptr(s.sizes.piece)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(pairs)))
	first := int((piece - base%piece) % piece / 4)
	s.starts = []int{0}
	for w := first; w < len(pairs); w += int(piece / 4) {
		if w > 0 {
			s.starts = append(s.starts, w)
		}
	}
	s.left = make([]int, len(s.starts))
	for i := range s.starts {
		s.left[i] = s.end(i) - s.starts[i]
	}
}

// end is the word after piece i.
func (s *inputStage) end(i int) int {
	if i+1 < len(s.starts) {
		return s.starts[i+1]
	}
	return len(s.pairs)
}

// Filled implements edgeio.PairsWatcher.
func (s *inputStage) Filled(lo, hi int) {
	s.mu.Lock()
	i := sort.Search(len(s.starts), func(i int) bool { return s.end(i) > lo })
	woke := false
	for ; i < len(s.starts) && s.starts[i] < hi; i++ {
		s.left[i] -= min(hi, s.end(i)) - max(lo, s.starts[i])
		if s.left[i] == 0 {
			s.ready = append(s.ready, i)
			woke = true
		}
	}
	s.mu.Unlock()
	if woke {
		s.poke()
	}
}

func (s *inputStage) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// upload waits for the device; when it is ready first and takes staged
// ids, it hands each piece to it as the read completes it, until every
// piece is handed over, the read fails or ctx ends.
func (s *inputStage) upload(ctx context.Context, dev *pendingCounter) {
	defer close(s.done)
	select {
	case <-dev.done:
	case <-s.ended:
		return
	case <-ctx.Done():
		return
	}
	st, ok := dev.counter.(kernels.IDStager)
	if dev.err != nil || !ok {
		return
	}
	select { // a 32-bit binary file's read begins, or another read ends
	case <-s.begun:
	case <-s.ended:
		return
	case <-ctx.Done():
		return
	}
	s.mu.Lock()
	pairs, pieces := s.pairs, len(s.starts)
	late := isClosed(s.ended)
	s.mu.Unlock()
	if late || len(pairs)*4 < s.sizes.min {
		return // the read ended before the device was ready, or will
	}
	stage, err := st.StageIDs(len(pairs))
	if err != nil {
		s.err = err
		return
	}
	s.stage = stage
	for s.added < pieces {
		s.mu.Lock()
		next, failed := s.ready, s.failed
		s.ready = nil
		s.mu.Unlock()
		if failed {
			return
		}
		for _, i := range next {
			if err := stage.Add(pairs, s.starts[i], s.end(i)); err != nil {
				s.err = err
				return
			}
			s.added++
		}
		if len(next) > 0 {
			continue
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			s.err = ctx.Err()
			return
		}
	}
}

// finish ends the staging once the read is over (readErr its error) and
// returns the stage holding every pair on the device, or nil: the read
// failed, the device was not ready before it ended, does not stage ids,
// or staging failed (then released and logged). The caller releases a
// returned stage.
func (s *inputStage) finish(readErr error) kernels.IDStage {
	s.mu.Lock()
	s.failed = readErr != nil
	close(s.ended)
	s.mu.Unlock()
	s.poke()
	<-s.done
	if s.stage == nil {
		if s.err != nil {
			s.log.Info("the edge list goes to the device after the read: staging it failed", "err", s.err)
		}
		return nil
	}
	if readErr != nil || s.err != nil || s.added != len(s.starts) {
		if s.err != nil {
			s.log.Info("the edge list goes to the device after the read: staging it failed", "err", s.err)
		}
		if err := s.stage.Release(); err != nil {
			s.log.Warn("releasing staged ids", "err", err)
		}
		return nil
	}
	s.log.Debug("the edge list went to the device while it was read", "pieces", s.added)
	return s.stage
}

// readIDsStaged is readIDs for a count on dev's device: when it may be a
// GPU, the pairs of a 32-bit binary file go to it while they are read
// (inputStage), and in.staged holds them there. The caller releases
// in.staged (releaseStage).
func readIDsStaged(ctx context.Context, path string, dev *pendingCounter, cfg *Config, rep *Report) (input, error) {
	if !dev.maybeDevice {
		return readIDs(dev.ctx, path, cfg, rep, nil)
	}
	s := newInputStage(ctx, dev, cfg.Logger, defaultStageSizes)
	in, err := readIDs(dev.ctx, path, cfg, rep, s)
	t := time.Now()
	in.staged = s.finish(err)
	if in.staged != nil {
		rep.Input.Staged = true
		rep.Seconds.StageWait = since(t)
	}
	return in, err
}

// releaseStage releases st (nil is a no-op), logging a failure.
func releaseStage(st kernels.IDStage, log *slog.Logger) {
	if st == nil {
		return
	}
	if err := st.Release(); err != nil {
		log.Warn("releasing staged ids", "err", err)
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
