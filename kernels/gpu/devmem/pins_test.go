package devmem

import (
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
)

// stillRegistered reports whether the reference library still holds a
// registration of b's columns: registering them again is refused then.
func stillRegistered(t *testing.T, lib *abi.Lib, b *graph.CSR) bool {
	t.Helper()
	r, err := abi.Register(lib, b.Cols)
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
	g := forward(t, 300, 3000, 9)
	ts := hashSubtasks(g, 2)
	a, b, c := ts[0].IJ, ts[1].IK, ts[2].JK // (0,0), (0,1), (1,0)
	none := func(*graph.CSR) bool { return false }
	lib := openRef(t)
	r := NewPins(lib, PinsConfig{MinBytes: 1})
	r.limit = r.pinBytes(a) + r.pinBytes(b) + r.pinBytes(c)/2
	r.Open()
	for _, x := range []*graph.CSR{a, b} {
		if !r.Pin(x, none) || !r.Pinned(x) || !stillRegistered(t, lib, x) {
			t.Fatalf("not pinned: %s", r.Stats())
		}
	}
	// Both read by pending loads: c is not pinned; both kept: neither.
	if !r.StartLoad(a, none) || !r.StartLoad(b, none) {
		t.Fatalf("pinned blocks not loadable: %s", r.Stats())
	}
	if r.Pin(c, none) || !r.Pinned(a) || !r.Pinned(b) {
		t.Errorf("pins read by pending loads were given up: %s", r.Stats())
	}
	r.EndLoad(a)
	r.EndLoad(b)
	if r.Pin(c, func(*graph.CSR) bool { return true }) || !r.Pinned(a) || !r.Pinned(b) {
		t.Errorf("kept pins were given up: %s", r.Stats())
	}
	// Neither: the least recently used (a) goes, and is unregistered.
	r.Pin(b, none)
	if !r.Pin(c, none) || r.Pinned(a) || !r.Pinned(b) || !r.Pinned(c) || r.held > r.limit {
		t.Errorf("want b and c within the limit: a %v b %v c %v, %s", r.Pinned(a), r.Pinned(b), r.Pinned(c), r.Stats())
	}
	if stillRegistered(t, lib, a) {
		t.Error("a pin given up is still registered")
	}
	// A block larger than the limit is not pinned.
	small := NewPins(lib, PinsConfig{Limit: 8, MinBytes: 1})
	if small.Pin(a, none) {
		t.Error("a pin larger than the limit")
	}
	// A block whose memory is registered elsewhere is not pinned, and not
	// tried again.
	d := ts[7].JK // (1,1)
	other, err := abi.Register(lib, d.Cols)
	if err != nil {
		t.Fatal(err)
	}
	r.limit = 1 << 30
	made := r.made
	first := r.Pin(d, none)
	again := r.Pin(d, none)
	if first || again || r.made != made || len(r.failed) != 1 {
		t.Errorf("a block registered elsewhere: pinned %v, %d registrations, %d remembered", r.Pinned(d), r.made-made, len(r.failed))
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	// The last user releases every pin.
	r.Open()
	if err := r.Close(); err != nil || !r.Pinned(b) {
		t.Fatalf("a counter still open, pins released: %v, %s", err, r.Stats())
	}
	if err := r.Close(); err != nil || r.held != 0 || len(r.pins) != 0 {
		t.Fatalf("after the last close: %v, %s", err, r.Stats())
	}
	for _, x := range []*graph.CSR{b, c} {
		if stillRegistered(t, lib, x) {
			t.Error("a block is still registered after the last close")
		}
	}
}

// Register pins a slice of MinRegisterBytes and not a smaller one.
func TestRegisterThreshold(t *testing.T) {
	lib := openRef(t)
	if r, err := Register(lib, make([]uint32, MinRegisterBytes/4-1)); r != nil || err != nil {
		t.Fatalf("small slice: got %v, %v; want nothing registered", r, err)
	}
	r, err := Register(lib, make([]uint32, MinRegisterBytes/4))
	if err != nil || r == nil || r.Bytes() != MinRegisterBytes {
		t.Fatalf("register: %v, %v", r, err)
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
}

// An adopted registration is taken beyond the limit (its memory is
// page-locked already), after the idle pins are given up for its room; it
// is never given up while read, and is given up, unregistered, when room
// is wanted and it is idle. A registry that pins nothing adopts nothing.
func TestPinAdopt(t *testing.T) {
	g := forward(t, 300, 3000, 9)
	ts := hashSubtasks(g, 2)
	a, b, c := ts[0].IJ, ts[1].IK, ts[2].JK
	none := func(*graph.CSR) bool { return false }
	lib := openRef(t)
	r := NewPins(lib, PinsConfig{MinBytes: 1})
	r.limit = r.pinBytes(b) + r.pinBytes(c)/2
	r.Open()
	if !r.Pin(b, none) {
		t.Fatalf("b not pinned: %s", r.Stats())
	}
	reg, err := abi.Register(lib, a.Cols)
	if err != nil {
		t.Fatal(err)
	}
	big := r.limit + 1
	if !r.Adopt(a, reg, big) || !r.Pinned(a) || r.Pinned(b) || stillRegistered(t, lib, b) || r.held != big {
		t.Fatalf("adopting past the limit: a %v b %v, %s", r.Pinned(a), r.Pinned(b), r.Stats())
	}
	if r.Adopt(a, reg, big) {
		t.Error("a block adopted twice")
	}
	// Read: c finds no room and a stays.
	if !r.HoldCols(a) {
		t.Fatal("adopted columns not held")
	}
	if r.Pin(c, none) || !r.Pinned(a) {
		t.Errorf("an adopted pin being read was given up: %s", r.Stats())
	}
	r.EndLoad(a)
	if !r.Pin(c, none) || r.Pinned(a) || stillRegistered(t, lib, a) || r.held > r.limit {
		t.Errorf("an idle adopted pin was not given up for room: a %v c %v, %s", r.Pinned(a), r.Pinned(c), r.Stats())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	off := NewPins(lib, PinsConfig{Limit: 0, MinBytes: 1})
	reg2, err := abi.Register(lib, a.Cols)
	if err != nil {
		t.Fatal(err)
	}
	if off.Adopt(a, reg2, 8) {
		t.Error("a registry that pins nothing adopted a pin")
	}
	if err := reg2.Release(); err != nil {
		t.Fatal(err)
	}
}
