package kernels

import (
	"testing"
)

// TestMakeHostBlocks: the room is what a split of the pairs into p groups
// can need, and a discarded HostBlocks makes nothing more.
func TestMakeHostBlocks(t *testing.T) {
	pairs := IDPairs{P32: make([]uint32, 2<<20)}
	for i := range pairs.P32 {
		pairs.P32[i] = uint32(i % 1000)
	}
	h := MakeHostBlocks(pairs, 3)
	h.Scanned()
	h.Wait()
	// 1000 vertices at most (largest id 999), 2^20 pairs.
	if len(h.Offsets) != 3*(1000+3) || len(h.Cols) != 1<<20 {
		t.Fatalf("%d offsets and %d columns, want %d and %d", len(h.Offsets), len(h.Cols), 3*1003, 1<<20)
	}
	wide := IDPairs{P64: []uint64{1 << 40, 3, 5, 1 << 41}}
	h = MakeHostBlocks(wide, 2)
	h.Wait()
	// Ids beyond the pairs: at most 2 pairs' 4 endpoints.
	if len(h.Offsets) != 2*(4+2) || len(h.Cols) != 2 {
		t.Fatalf("%d offsets and %d columns, want 12 and 2", len(h.Offsets), len(h.Cols))
	}
	d := MakeHostBlocks(pairs, 4)
	d.Discard()
	d.Wait()
	if d.Offsets != nil && len(d.Offsets) != 4*(1000+4) {
		t.Fatalf("a discarded HostBlocks has %d offsets", len(d.Offsets))
	}
	var none *HostBlocks
	none.Scanned()
	none.Wait()
	none.Discard()
}

// MaxID is the largest id of either width, across chunk boundaries, and 0
// for no pairs.
func TestMaxID(t *testing.T) {
	p32 := make([]uint32, 3<<20+5)
	p64 := make([]uint64, len(p32))
	for i := range p32 {
		p32[i] = uint32(i*2654435761) >> 8
		p64[i] = uint64(i) * 0x9e3779b97f4a7c15 >> 3
	}
	for _, at := range []int{0, 1 << 20, len(p32) - 1} {
		p32[at], p64[at] = 1<<31+7, 1<<62+9
		if got := (IDPairs{P32: p32}).MaxID(); got != 1<<31+7 {
			t.Errorf("32-bit, largest at %d: %d", at, got)
		}
		if got := (IDPairs{P64: p64}).MaxID(); got != 1<<62+9 {
			t.Errorf("64-bit, largest at %d: %d", at, got)
		}
		p32[at], p64[at] = 0, 0
	}
	if got := (IDPairs{}).MaxID(); got != 0 {
		t.Errorf("no pairs: %d", got)
	}
}
