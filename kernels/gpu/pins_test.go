package gpu

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// openRef opens the reference library with a pin limit, every non-empty
// array pinnable.
func openRef(t *testing.T, opts Options) *Library {
	t.Helper()
	good, _ := refLibs(t)
	opts.Path = good
	lib, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	lib.pins.minBytes = 1
	return lib
}

// stillRegistered reports whether the reference library still holds a
// registration of b's columns: registering them again is refused then.
func stillRegistered(t *testing.T, lib *Library, b *graph.CSR) bool {
	t.Helper()
	r, err := registerSlice(lib, b.Cols)
	if err != nil {
		return true
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	return false
}

// The registry pins blocks within its limit, gives up the least recently
// used idle pin for room, never one a pending load reads or the caller
// keeps, refuses a block larger than the limit, remembers a block the
// library would not register, and releases everything when the last
// counter closes.
func TestPinRegistry(t *testing.T) {
	g := forward(t, randomEdges(300, 3000, 9))
	ts := partitioned(g, 2, "hash")
	a, b, c := ts[0].IJ, ts[1].IK, ts[2].JK // (0,0), (0,1), (1,0)
	none := func(*graph.CSR) bool { return false }
	lib := openRef(t, Options{})
	r := lib.pins
	r.limit = r.pinBytes(a) + r.pinBytes(b) + r.pinBytes(c)/2
	r.open()
	for _, x := range []*graph.CSR{a, b} {
		if !r.pin(x, none) || !r.isPinned(x) || !stillRegistered(t, lib, x) {
			t.Fatalf("not pinned: %s", r)
		}
	}
	// Both read by pending loads: c is not pinned; both kept: neither.
	if !r.startLoad(a, none) || !r.startLoad(b, none) {
		t.Fatalf("pinned blocks not loadable: %s", r)
	}
	if r.pin(c, none) || !r.isPinned(a) || !r.isPinned(b) {
		t.Errorf("pins read by pending loads were given up: %s", r)
	}
	r.endLoad(a)
	r.endLoad(b)
	if r.pin(c, func(*graph.CSR) bool { return true }) || !r.isPinned(a) || !r.isPinned(b) {
		t.Errorf("kept pins were given up: %s", r)
	}
	// Neither: the least recently used (a) goes, and is unregistered.
	r.pin(b, none)
	if !r.pin(c, none) || r.isPinned(a) || !r.isPinned(b) || !r.isPinned(c) || r.held > r.limit {
		t.Errorf("want b and c within the limit: a %v b %v c %v, %s", r.isPinned(a), r.isPinned(b), r.isPinned(c), r)
	}
	if stillRegistered(t, lib, a) {
		t.Error("a pin given up is still registered")
	}
	// A block larger than the limit is not pinned.
	small := newPinRegistry(lib, 8)
	small.minBytes = 1
	if small.pin(a, none) {
		t.Error("a pin larger than the limit")
	}
	// A block whose memory is registered elsewhere is not pinned, and not
	// tried again.
	d := ts[7].JK // (1,1)
	other, err := registerSlice(lib, d.Cols)
	if err != nil {
		t.Fatal(err)
	}
	r.limit = 1 << 30
	made := r.made
	first := r.pin(d, none)
	again := r.pin(d, none)
	if first || again || r.made != made || len(r.failed) != 1 {
		t.Errorf("a block registered elsewhere: pinned %v, %d registrations, %d remembered", r.isPinned(d), r.made-made, len(r.failed))
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	// The last user releases every pin.
	r.open()
	if err := r.close(); err != nil || !r.isPinned(b) {
		t.Fatalf("a counter still open, pins released: %v, %s", err, r)
	}
	if err := r.close(); err != nil || r.held != 0 || len(r.pins) != 0 {
		t.Fatalf("after the last close: %v, %s", err, r)
	}
	for _, x := range []*graph.CSR{b, c} {
		if stillRegistered(t, lib, x) {
			t.Error("a block is still registered after the last close")
		}
	}
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
	pending := 0
	for i := range cs[1].slots {
		if cs[1].slots[i].pending {
			pending++
		}
	}
	if pending == 0 {
		t.Error("no load pending after the last subtask with subtasks ahead")
	}
	distinct := map[*graph.CSR]bool{}
	for _, s := range ts {
		distinct[s.IJ], distinct[s.IK], distinct[s.JK] = true, true, true
	}
	if lib.pins.made > len(distinct) {
		t.Errorf("%d registrations for %d blocks shared by two counters", lib.pins.made, len(distinct))
	}
	for i, c := range cs {
		if st := c.DeviceStats(); st.PinnedUploads == 0 {
			t.Errorf("counter %d: no upload from pinned blocks (%+v)", i, st)
		}
	}
	if err := cs[0].Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if lib.pins.held == 0 {
		t.Error("pins released while a counter is open")
	}
	// The last counter closes with loads pending from pinned blocks: its
	// context goes first, then the pins (the library refuses to unregister
	// memory a pending load reads).
	if err := cs[1].Close(); err != nil || cs[1].Close() != nil {
		t.Fatalf("close with loads pending: %v", err)
	}
	if lib.pins.held != 0 || len(lib.pins.pins) != 0 {
		t.Errorf("after the last close: %s", lib.pins)
	}
	for b := range distinct {
		if b.NumEdges() > 0 && stillRegistered(t, lib, b) {
			t.Fatal("a block is still registered after the last counter closed")
		}
	}
}

// With the real threshold, blocks of at least MinRegisterBytes are pinned
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
	if st.PinnedUploads != 1 || st.Uploads < 5 || !lib.pins.isPinned(g) {
		t.Errorf("want the whole graph alone pinned: %d of %d uploads pinned, %s", st.PinnedUploads, st.Uploads, lib.pins)
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
	if !lib.pins.isPinned(&bad) {
		t.Fatalf("the malformed block was not uploaded from pinned memory: %s", lib.pins)
	}
	lib.pins.mu.Lock()
	for b, p := range lib.pins.pins {
		if p.readers != 0 {
			t.Errorf("block of %d edges still read by %d loads", b.NumEdges(), p.readers)
		}
	}
	lib.pins.mu.Unlock()
	for _, s := range ts[:2] {
		res, err := c.Count(t.Context(), s)
		if err != nil || res.Triangles != mustReference(t, s) {
			t.Fatalf("after the error: %d triangles, %v; want %d", res.Triangles, err, mustReference(t, s))
		}
	}
	if err := c.Close(); err != nil || lib.pins.held != 0 {
		t.Fatalf("close: %v, %s", err, lib.pins)
	}
}
