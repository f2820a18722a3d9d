package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/kernels"
)

// fakeStager is a kernels.Device that stages ids, and its IDStage's add
// and release: it records what it is handed and checks that every word
// was read before it came.
type fakeStager struct {
	kernels.Counter
	kernels.NoDevice
	want      []uint32 // the words as read
	piece     int      // pieces after the first start at addresses aligned to it
	failStage error
	failAdd   error // returned by the third Add

	mu       sync.Mutex
	words    int
	added    [][2]int
	released int
	bad      string
}

func (f *fakeStager) Caps() kernels.DeviceCaps { return kernels.DeviceCaps{Stage: true} }

func (f *fakeStager) StageIDs(words int) (*kernels.IDStage, error) {
	if f.failStage != nil {
		return nil, f.failStage
	}
	f.words = words
	return kernels.NewIDStage(f, f.Add, f.Release), nil
}

func (f *fakeStager) Add(ids []uint32, lo, hi int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failAdd != nil && len(f.added) == 2 {
		return f.failAdd
	}
	switch {
	case len(ids) != f.words || lo >= hi:
		f.bad = "a piece outside the stage"
	case !slices.Equal(ids[lo:hi], f.want[lo:hi]):
		f.bad = "a piece handed over before it was read"
	case lo > 0 && uintptr(unsafe.Pointer(&ids[lo]))%uintptr(f.piece) != 0:
		f.bad = "a piece that starts inside a page of the one before"
	}
	f.added = append(f.added, [2]int{lo, hi})
	return nil
}

func (f *fakeStager) Release() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released++
	return nil
}

// readFake fills pairs as a parallel read does: runs of words in a random
// order on four goroutines, each run reported once it is written. With
// stopAt >= 0 only the runs before it are read.
func readFake(s *inputStage, pairs, want []uint32, stopAt int) {
	s.Begin(pairs)
	var runs [][2]int
	rng := rand.New(rand.NewPCG(uint64(len(pairs)), 1))
	for lo := 0; lo < len(pairs); {
		hi := min(len(pairs), lo+2*(1+rng.IntN(40000)))
		runs = append(runs, [2]int{lo, hi})
		lo = hi
	}
	rng.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
	if stopAt >= 0 {
		runs = runs[:stopAt]
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for x := g; x < len(runs); x += 4 {
				r := runs[x]
				copy(pairs[r[0]:r[1]], want[r[0]:r[1]])
				s.Filled(r[0], r[1])
			}
		})
	}
	wg.Wait()
}

// An inputStage hands every piece of the pairs to a device that was ready
// before the read ended, once, after it was read, in pieces aligned to
// their size; in every other case (the device late, too small an input, a
// failed read, staging refused or failing) the count gets no stage and
// what was staged is released.
func TestInputStage(t *testing.T) {
	const words = 1 << 20
	want := make([]uint32, words)
	for i := range want {
		want[i] = uint32(i*2654435761) | 1 // no zero: unread words differ
	}
	sizes := stageSizes{piece: 64 << 10, workers: 3}
	log := slog.New(slog.DiscardHandler)
	ready := func(c kernels.Counter) *pendingCounter {
		pc := &pendingCounter{done: make(chan struct{}), counter: c}
		close(pc.done)
		return pc
	}
	for _, tc := range []struct {
		name      string
		late      bool // the device is ready after the read
		min       int
		stopAt    int // runs read before the read fails (-1: all)
		failStage bool
		failAdd   bool
		staged    bool
	}{
		{name: "staged", stopAt: -1, staged: true},
		{name: "device late", late: true, stopAt: -1},
		{name: "small input", min: 4*words + 1, stopAt: -1},
		{name: "read fails", stopAt: 5},
		{name: "stage refused", stopAt: -1, failStage: true},
		{name: "add fails", stopAt: -1, failAdd: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeStager{want: want, piece: sizes.piece}
			if tc.failStage {
				f.failStage = errors.New("no room")
			}
			if tc.failAdd {
				f.failAdd = errors.New("copy failed")
			}
			dev := ready(f)
			if tc.late {
				dev = &pendingCounter{done: make(chan struct{}), counter: f}
			}
			sz := sizes
			sz.min = tc.min
			s := newInputStage(context.Background(), dev, log, sz)
			pairs := make([]uint32, words)
			readFake(s, pairs, want, tc.stopAt)
			var readErr error
			if tc.stopAt >= 0 {
				readErr = errors.New("read failed")
			}
			got := s.finish(readErr)
			if tc.late {
				close(dev.done)
			}
			if f.bad != "" {
				t.Fatal(f.bad)
			}
			if !tc.staged {
				if got != nil {
					t.Fatal("a stage was returned")
				}
				if f.words > 0 && f.released != 1 {
					t.Fatalf("staging began and was released %d times", f.released)
				}
				return
			}
			if got == nil || f.released != 0 {
				t.Fatalf("stage %v, released %d times", got, f.released)
			}
			slices.SortFunc(f.added, func(a, b [2]int) int { return a[0] - b[0] })
			at := 0
			for _, r := range f.added {
				if r[0] != at {
					t.Fatalf("pieces %v leave a gap or overlap at word %d", f.added, at)
				}
				at = r[1]
			}
			if at != words || len(f.added) < 16 {
				t.Fatalf("%d pieces cover %d of %d words", len(f.added), at, words)
			}
		})
	}
	// A counter that takes no staged ids gets none.
	cpu, err := kernels.NewCPU("merge", kernels.CPUOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := newInputStage(context.Background(), ready(cpu), log, sizes)
	readFake(s, make([]uint32, words), want, -1)
	if s.finish(nil) != nil {
		t.Fatal("a CPU counter got staged ids")
	}
}

// The device path from staged ids (the CUDA-ABI reference library): a
// whole count and a forward graph handed back, with --verify, equal the
// brute-force total and the host's graph, array for array.
func TestStagedDevicePath(t *testing.T) {
	ctx := context.Background()
	lib := deviceLibrary(t)
	path, list := writeMessyBin(t, 13, 6)
	want := testgraphs.LocalCounts(list).Total
	log := slog.New(slog.DiscardHandler)
	read := func(cfg *Config, rep *Report) (*pendingCounter, input) {
		t.Helper()
		cfg.fill()
		dev := startCounter(ctx, cfg)
		<-dev.done // the device is ready before the read
		s := newInputStage(ctx, dev, log, stageSizes{piece: 256 << 10})
		in, err := readIDs(ctx, path, cfg, rep, s)
		if err != nil {
			t.Fatal(err)
		}
		in.staged = s.finish(nil)
		if in.staged == nil || in.p32 == nil {
			t.Fatal("the pairs were not staged")
		}
		return dev, in
	}

	slots, _ := deviceSlots(t, lib, 1, 0, false)
	cfg := testConfig(slots)
	cfg.Verify = true
	rep := &Report{}
	dev, in := read(&cfg, rep)
	defer releaseStage(in.staged, log)
	counter, err := dev.wait(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCounter(counter, log)
	d, err := countIDsOnDevice(ctx, counter.(kernels.Device), &in, &cfg, rep)
	if err != nil || d == nil {
		t.Fatalf("count from staged ids: %v (%v)", err, d)
	}
	if rep.Triangles != want {
		t.Fatalf("%d triangles from staged ids, brute force %d", rep.Triangles, want)
	}
	host := &Report{}
	fwd, hostIDs, err := Load(ctx, path, testConfig(nil), host, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkDevicePrep(d, host); err != nil {
		t.Fatal(err)
	}

	slots, tally := deviceSlots(t, lib, 1, 0, false)
	cfg = testConfig(slots)
	rep = &Report{}
	dev, in = read(&cfg, rep)
	defer releaseStage(in.staged, log)
	counter, err = dev.wait(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCounter(counter, log)
	dfwd, ids, done, err := orientIDsOnDevice(ctx, path, counter.(kernels.Device), &in, &cfg, rep, true)
	if err != nil || !done || tally.counts()[1] != 1 {
		t.Fatalf("orient from staged ids: %v (done %v, tallies %v)", err, done, tally.counts())
	}
	if !slices.Equal(dfwd.Offsets, fwd.Offsets) || !slices.Equal(dfwd.Cols, fwd.Cols) || !slices.Equal(ids, hostIDs) {
		t.Fatal("the forward graph from staged ids differs from the host's")
	}
	if got := wholeCount(t, dfwd); got != want {
		t.Fatalf("%d triangles in the forward graph from staged ids, brute force %d", got, want)
	}
}

// When the device declines staged ids (they do not fit it from their own
// ids), the pieces' pins go before the host compacts the ids in place, so
// that the compacted pairs, handed to the device in one upload, do not
// span several pinned ranges (the reference library refuses that copy as
// the CUDA runtime does). The forward graph then equals the host's.
func TestStagedIDsDeclinedThenOriented(t *testing.T) {
	ctx := context.Background()
	lib := deviceLibrary(t)
	path, _ := writeMessyBin(t, 13, 7)
	log := slog.New(slog.DiscardHandler)
	// The device declines the ids (as when they do not fit it).
	slots, _ := deviceSlots(t, lib, 1, 0, true)
	cfg := testConfig(slots)
	cfg.fill()
	rep := &Report{}
	dev := startCounter(ctx, &cfg)
	<-dev.done
	// A piece is not staged when the host will not pin it (an earlier
	// test's pinned range may still cover the address the read reuses):
	// read again into fresh memory.
	var in input
	for try := 0; ; try++ {
		s := newInputStage(ctx, dev, log, stageSizes{piece: 256 << 10})
		var err error
		if in, err = readIDs(ctx, path, &cfg, rep, s); err != nil {
			t.Fatal(err)
		}
		if in.staged = s.finish(nil); in.staged != nil && in.p32 != nil {
			break
		}
		if try == 4 {
			t.Fatal("the pairs were not staged")
		}
	}
	defer releaseStage(in.staged, log)
	counter, err := dev.wait(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCounter(counter, log)
	if _, _, done, err := orientIDsOnDevice(ctx, path, counter.(kernels.Device), &in, &cfg, rep, false); done || err != nil {
		t.Fatalf("staged ids not declined: done %v, %v", done, err)
	}
	c, err := graph.CompactPairsInPlace(in.p32, graph.CleanOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	big, _ := deviceSlots(t, lib, 1, 0, false)
	oc, err := big[0].NewCounter("auto")
	if err != nil {
		t.Fatal(err)
	}
	defer closeCounter(oc, log)
	fwd, _, _, err := oc.(kernels.Device).OrientOnDevice(ctx, c.Pairs, uint64(len(c.OrigID)))
	if err != nil {
		t.Fatalf("orienting the compacted pairs on the device: %v", err)
	}
	host, _, err := Load(ctx, path, testConfig(nil), &Report{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fwd.Offsets, host.Offsets) || !slices.Equal(fwd.Cols, host.Cols) {
		t.Fatal("the device's forward graph differs from the host's")
	}
}
