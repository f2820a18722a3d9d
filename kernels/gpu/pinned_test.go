package gpu

import (
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// The pinned cache copies blocks exactly, stays within its limit by giving
// up the least recently used copy, never one that is kept or read by a
// pending load, and frees everything on close.
func TestPinnedCache(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	g := forward(t, randomEdges(300, 3000, 9))
	ts := partitioned(g, 2, "hash")
	a, b, c := ts[0].IJ, ts[1].IK, ts[2].JK // (0,0), (0,1), (1,0)
	none := func(*graph.CSR) bool { return false }
	// Room for a and b, not for c beside them.
	p := newPinnedCache(lib, hostBytes(a)+hostBytes(b)+hostBytes(c)/2)
	for i, x := range []*graph.CSR{a, b} {
		hc := p.get(x, uint64(i+1), none)
		if hc == nil || !slices.Equal(hc.off, x.Offsets) || !slices.Equal(hc.cols, x.Cols) || !p.has(x) {
			t.Fatalf("block %d: no exact pinned copy (%s)", i, p)
		}
	}
	// Both in use by pending loads: c gets no copy; both kept: neither.
	for _, hc := range p.copies {
		hc.readers++
	}
	if p.get(c, 3, none) != nil || !p.has(a) || !p.has(b) {
		t.Errorf("copies read by pending loads were given up: %s", p)
	}
	for _, hc := range p.copies {
		hc.readers--
	}
	if p.get(c, 4, func(*graph.CSR) bool { return true }) != nil || !p.has(a) || !p.has(b) {
		t.Errorf("kept copies were given up: %s", p)
	}
	// Neither: the least recently used (a) goes.
	p.get(b, 5, none)
	if p.get(c, 6, none) == nil || p.has(a) || !p.has(b) || !p.has(c) || p.held > p.limit {
		t.Errorf("want b and c within the limit: a %v b %v c %v, %s", p.has(a), p.has(b), p.has(c), p)
	}
	// A block larger than the limit gets no copy.
	if newPinnedCache(lib, 8).get(a, 1, none) != nil {
		t.Error("a copy larger than the limit")
	}
	p.close()
	if p.held != 0 || len(p.copies) != 0 {
		t.Errorf("after close: %s", p)
	}
}
