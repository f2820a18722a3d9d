package edgeio

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

type pairsSeen struct {
	begun  []uint32
	filled []bool
}

func (w *pairsSeen) Begin(p []uint32) { w.begun, w.filled = p, make([]bool, len(p)) }
func (w *pairsSeen) Filled(lo, hi int) {
	for i := lo; i < hi; i++ {
		w.filled[i] = true
	}
}

// A stream of a binary list of 32-bit ids gives the pairs a file of it
// gives (the watcher told of every word); other streams give edges.
func TestReadStreamIDs(t *testing.T) {
	edges := []graph.Edge{{U: 1, V: 2}, {U: 7, V: 3}, {U: 4_000_000_000, V: 0}, {U: 5, V: 5}}
	var bin, wide, text bytes.Buffer
	if err := Write(&bin, edges, WriteOptions{Format: FormatBin}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&wide, edges, WriteOptions{Format: FormatBin, IDWidth: 8}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&text, edges, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var w pairsSeen
	p32, es, st, err := readStreamIDs(context.Background(), bytes.NewReader(bin.Bytes()), "-", ReadOptions{Pairs32: &w})
	if err != nil || es != nil {
		t.Fatalf("binary stream: %v, %d edges", err, len(es))
	}
	want := []uint32{1, 2, 7, 3, 4_000_000_000, 0, 5, 5}
	if !slices.Equal(p32, want) || st.Edges != 4 || st.Bytes != int64(bin.Len()) || st.Format != FormatBin {
		t.Fatalf("binary stream: %v, %+v", p32, st)
	}
	if len(w.begun) != len(want) || slices.Contains(w.filled, false) {
		t.Fatalf("watcher: begun with %d words, filled %v", len(w.begun), w.filled)
	}
	for _, s := range []*bytes.Buffer{&wide, &text} {
		p32, es, _, err := readStreamIDs(context.Background(), bytes.NewReader(s.Bytes()), "-", ReadOptions{})
		if err != nil || p32 != nil || !slices.Equal(es, edges) {
			t.Fatalf("stream %q...: %v, %v, %v", s.Bytes()[:8], err, p32, es)
		}
	}
}

// A stream shorter or longer than its header, or whose header declares
// more than memory can hold, is an error that says so.
func TestReadStreamIDsRefusals(t *testing.T) {
	var bin bytes.Buffer
	if err := Write(&bin, []graph.Edge{{U: 1, V: 2}, {U: 3, V: 4}}, WriteOptions{Format: FormatBin}); err != nil {
		t.Fatal(err)
	}
	b := bin.Bytes()
	huge := slices.Clone(b[:binHeaderSize])
	for i := range 8 {
		huge[16+i] = byte(uint64(math.MaxInt64/4) >> (8 * i))
	}
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"truncated", b[:len(b)-3], "truncated binary edge list: header declares 2 edges (16 bytes of pairs) but only 13 bytes follow"},
		{"trailing", append(slices.Clone(b), 9, 9), "2 trailing bytes after the 2 declared edges"},
		{"huge header", huge, "a corrupt header?"},
	}
	for _, c := range cases {
		_, _, _, err := readStreamIDs(context.Background(), bytes.NewReader(c.in), "-", ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "stdin") {
			t.Fatalf("%s: %v, want %q about stdin", c.name, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := readStreamIDs(ctx, bytes.NewReader(b), "-", ReadOptions{}); err != context.Canceled {
		t.Fatalf("cancelled: %v", err)
	}
}
