package pipeline

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

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
	// workers pin and hand over pieces side by side. Pinning is the
	// slowest step, but it competes with the reading goroutines for the
	// memory's bandwidth: one worker ends the staging soonest
	// (docs/decisions/2026-11-24-input-staged-while-read.md).
	workers int
}

// defaultStageSizes are the sizes of a count's inputStage.
var defaultStageSizes = stageSizes{piece: 32 << 20, min: 64 << 20, workers: 1}

// inputStage sends a 32-bit binary file's pairs to the device while the
// file is still being read: when the device is ready before the read ends
// and its counter stages ids (kernels.Device), each piece of the pairs that the
// read has completed is handed to the device (pinned in place and copied
// by the copy engine) while the read goes on. It watches the read through
// edgeio.PairsWatcher.
type inputStage struct {
	log   *slog.Logger
	sizes stageSizes
	devUp chan struct{} // the device's counter is made (pendingCounter.done)
	begun chan struct{} // closed by Begin
	ended chan struct{} // closed by finish
	done  chan struct{} // closed when the uploader stops

	mu     sync.Mutex
	more   *sync.Cond // on mu: a piece is ready, the read ended or staging failed
	pairs  []uint32
	starts []int // first word of each piece, ascending; pieces end where the next starts
	left   []int // words of each piece still unread
	ready  []int // pieces read and not yet taken by a worker
	taken  int   // pieces taken by the workers
	added  int   // pieces handed to the device
	failed bool  // the read failed or was cancelled
	err    error // staging failed
	// upFirst says the device was ready when the read ended (set by
	// finish): the uploader stages what was read, however late it looks.
	upFirst bool

	// Set by the uploader, read after done is closed.
	stage *kernels.IDStage
}

// newInputStage starts the uploader, which waits for dev's counter; the
// caller reads with the stage as its edgeio.PairsWatcher and then calls
// finish.
func newInputStage(ctx context.Context, dev *pendingCounter, log *slog.Logger, sizes stageSizes) *inputStage {
	s := &inputStage{log: log, sizes: sizes, devUp: dev.done, begun: make(chan struct{}), ended: make(chan struct{}), done: make(chan struct{})}
	s.more = sync.NewCond(&s.mu)
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
	s.starts = kernels.AlignedPieces(pairs, s.sizes.piece)
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
	defer s.mu.Unlock()
	i := sort.Search(len(s.starts), func(i int) bool { return s.end(i) > lo })
	for ; i < len(s.starts) && s.starts[i] < hi; i++ {
		s.left[i] -= min(hi, s.end(i)) - max(lo, s.starts[i])
		if s.left[i] == 0 {
			s.ready = append(s.ready, i)
			s.more.Signal()
		}
	}
}

// upload waits for the device; when it is ready first and takes staged
// ids, its workers hand each piece to it as the read completes it, until
// every piece is handed over, the read fails (a cancelled read fails too)
// or staging fails.
func (s *inputStage) upload(ctx context.Context, dev *pendingCounter) {
	defer close(s.done)
	select {
	case <-dev.done:
	case <-s.ended:
		if !s.readyFirst() {
			return
		}
	case <-ctx.Done():
		return
	}
	st, ok := dev.counter.(kernels.Device)
	if dev.err != nil || !ok || !st.Caps().Stage {
		return
	}
	select { // a 32-bit binary file's read begins, or another read ends
	case <-s.begun:
	case <-s.ended:
		if !isClosed(s.begun) {
			return
		}
	case <-ctx.Done():
		return
	}
	s.mu.Lock()
	pairs, pieces := s.pairs, len(s.starts)
	late := isClosed(s.ended) && !s.upFirst
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
	var wg sync.WaitGroup
	for range max(1, s.sizes.workers) {
		wg.Go(func() { s.work(stage, pairs, pieces) })
	}
	wg.Wait()
}

// work takes ready pieces and hands them to the device until none is left
// to take, the read failed or staging failed.
func (s *inputStage) work(stage *kernels.IDStage, pairs []uint32, pieces int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.ready) == 0 && s.taken < pieces && !s.failed && s.err == nil {
			s.more.Wait()
		}
		if s.taken == pieces || s.failed || s.err != nil {
			return
		}
		i := s.ready[0]
		s.ready = s.ready[1:]
		s.taken++
		s.mu.Unlock()
		err := stage.Add(pairs, s.starts[i], s.end(i))
		s.mu.Lock()
		if err != nil {
			s.err = err
			s.more.Broadcast()
			return
		}
		s.added++
	}
}

// readyFirst reports whether the device was ready when the read ended.
func (s *inputStage) readyFirst() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.upFirst
}

// finish ends the staging once the read is over (readErr its error) and
// returns the stage holding every pair on the device, or nil: the read
// failed, the device was not ready before it ended, does not stage ids,
// or staging failed (then released and logged). The caller releases a
// returned stage.
func (s *inputStage) finish(readErr error) *kernels.IDStage {
	s.mu.Lock()
	s.failed = readErr != nil
	s.upFirst = isClosed(s.devUp)
	close(s.ended)
	s.more.Broadcast()
	s.mu.Unlock()
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
func readIDsStaged(ctx context.Context, path string, dev *pendingCounter, stage bool, cfg *Config, rep *Report) (input, error) {
	if !stage {
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
func releaseStage(st *kernels.IDStage, log *slog.Logger) {
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
