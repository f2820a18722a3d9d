package gpu

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// openRef opens the reference library with opts, every non-empty array
// pinnable (the reference library has no pages to share).
func openRef(t *testing.T, opts Options) *Library {
	t.Helper()
	good, _ := refLibs(t)
	opts.Path = good
	lib, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	pinAll(lib)
	return lib
}

// pinAll makes every non-empty array of lib's blocks pinnable, within
// the pin limit lib was opened with; no counter of lib may be open.
func pinAll(lib *Library) {
	cfg := devmem.PinsConfig{Limit: lib.pins.Limit(), MinBytes: 1, Logger: lib.logger}
	lib.pins = devmem.NewPins(lib.abi, cfg)
}

// registerSlice page-locks s whatever its size (abi.Register).
func registerSlice[T any](lib *Library, s []T) (*abi.Registration, error) {
	return abi.Register(lib.abi, s)
}

// stillRegistered reports whether the library's pin registry still holds
// b: asked of the registry, not by registering b's memory again, which the
// CUDA runtime refuses with an API error that compute-sanitizer reports.
func stillRegistered(t *testing.T, lib *Library, b *graph.CSR) bool {
	t.Helper()
	return lib.pins.Pinned(b)
}

// Counters of one Library on two goroutines share the pinned blocks: both
// count exactly, each uploads from pinned blocks, a block pinned once
// serves both, closing one keeps the pins, and closing the other, with
// loads still pending (the blocks of the subtasks ahead were uploaded
// before its last kernel), releases them.
func TestCountersSharePins(t *testing.T) {
	g := forward(t, append(hubEdges(600), randomEdges(600, 5000, 5)...))
	ts := partitioned(g, 3, "hash")
	var want uint64
	for _, s := range ts {
		want += mustReference(t, s)
	}
	lib := openRef(t, Options{})
	var cs [2]*Counter
	for i := range cs {
		c, err := lib.NewCounter("auto")
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = c
	}
	// The second counter counts the first subtask only, its next two
	// known: their blocks are uploaded ahead and left pending.
	n := [2]int{len(ts), 1}
	var want1 uint64
	for _, s := range ts[:n[1]] {
		want1 += mustReference(t, s)
	}
	var got [2]uint64
	var errs [2]error
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			for x, s := range ts[:n[i]] {
				s.Ahead = ts[x+1 : min(len(ts), x+3)]
				res, err := c.Count(t.Context(), s)
				if err != nil {
					errs[i] = fmt.Errorf("counter %d, subtask %d: %w", i, x, err)
					return
				}
				got[i] += res.Triangles
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got[0] != want || got[1] != want1 {
		t.Errorf("counts %d and %d, want %d and %d", got[0], got[1], want, want1)
	}
	// The blocks uploaded ahead of the second counter's next subtasks,
	// which it never counts, are loads still pending.
	if st := cs[1].DeviceStats(); st.Ahead == 0 {
		t.Error("no load pending after the last subtask with subtasks ahead")
	}
	distinct := map[*graph.CSR]bool{}
	for _, s := range ts {
		distinct[s.IJ], distinct[s.IK], distinct[s.JK] = true, true, true
	}
	if made := lib.pins.Stats().Made; made > len(distinct) {
		t.Errorf("%d blocks pinned of %d blocks shared by two counters", made, len(distinct))
	}
	for i, c := range cs {
		if st := c.DeviceStats(); st.PinnedUploads == 0 {
			t.Errorf("counter %d: no upload from pinned blocks (%+v)", i, st)
		}
	}
	if err := cs[0].Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if lib.pins.Stats().Held == 0 {
		t.Error("pins released while a counter is open")
	}
	// The last counter closes with loads pending from pinned blocks: its
	// context goes first, then the pins (the library refuses to unregister
	// memory a pending load reads).
	if err := cs[1].Close(); err != nil || cs[1].Close() != nil {
		t.Fatalf("close with loads pending: %v", err)
	}
	if st := lib.pins.Stats(); st.Held != 0 || st.Blocks != 0 {
		t.Errorf("after the last close: %s", st)
	}
	for b := range distinct {
		if b.NumEdges() > 0 && stillRegistered(t, lib, b) {
			t.Fatal("a block is still registered after the last counter closed")
		}
	}
}

// With the real threshold, blocks of at least devmem.MinRegisterBytes are pinned
// and uploaded from there, and smaller ones from pageable memory; the count
// is exact.
func TestCountPinsLargeBlocks(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	// 2^17 edges: the blocks of P = 2 hold some 2^15 each, 128 KiB of
	// columns, the whole graph 512 KiB.
	g := forward(t, randomEdges(1<<14, 1<<17, 21))
	whole := kernels.Whole(g)
	want := mustReference(t, whole)
	c := autoCounter(t, lib)
	ts := partitioned(g, 2, "hash")
	var sum uint64
	for x, s := range append([]kernels.Subtask{whole}, ts...) {
		res, err := c.Count(t.Context(), s)
		if err != nil {
			t.Fatalf("subtask %d: %v", x, err)
		}
		if x > 0 {
			sum += res.Triangles
		} else if res.Triangles != want {
			t.Errorf("whole graph: %d triangles, want %d", res.Triangles, want)
		}
	}
	if sum != want {
		t.Errorf("P = 2: %d triangles, want %d", sum, want)
	}
	st := c.DeviceStats()
	if st.PinnedUploads != 1 || st.Uploads < 5 || !stillRegistered(t, lib, g) {
		t.Errorf("want the whole graph alone pinned: %d of %d uploads pinned, %s", st.PinnedUploads, st.Uploads, lib.pins.Stats())
	}
}

// A malformed block uploaded from pinned memory is reported when its load
// completes, as an error and never a count; its pin is not left read, and
// the counter counts the next subtask exactly.
func TestCountMalformedPinnedBlock(t *testing.T) {
	g := forward(t, append(hubEdges(300), randomEdges(300, 3000, 4)...))
	ts := partitioned(g, 2, "hash")
	lib := openRef(t, Options{})
	c, err := lib.NewCounter("auto")
	if err != nil {
		t.Fatal(err)
	}
	// A copy of its own (a copy sharing an array with the block would
	// overlap its pin and be uploaded from pageable memory).
	bad := *ts[0].JK
	bad.Offsets = append([]uint64(nil), bad.Offsets...)
	bad.Cols = append([]uint32(nil), bad.Cols...)
	bad.Cols[len(bad.Cols)-1] = uint32(bad.NCols) // out of range
	s := ts[0]
	s.JK = &bad
	if _, err := c.Count(t.Context(), s); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("malformed block: %v, want the library's error", err)
	}
	if !stillRegistered(t, lib, &bad) {
		t.Fatalf("the malformed block was not uploaded from pinned memory: %s", lib.pins.Stats())
	}
	if st := lib.pins.Stats(); st.Readers != 0 {
		t.Errorf("pinned blocks still read by %d loads", st.Readers)
	}
	for _, s := range ts[:2] {
		res, err := c.Count(t.Context(), s)
		if err != nil || res.Triangles != mustReference(t, s) {
			t.Fatalf("after the error: %d triangles, %v; want %d", res.Triangles, err, mustReference(t, s))
		}
	}
	if err := c.Close(); err != nil || lib.pins.Stats().Held != 0 {
		t.Fatalf("close: %v, %s", err, lib.pins.Stats())
	}
}
