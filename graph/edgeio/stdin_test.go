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

// FuzzReadStreamIDs: any stream gives pairs, edges or an error, never a
// panic; pairs are what the streaming reader gives as edges, and a stream
// the streaming reader refuses is refused here too.
func FuzzReadStreamIDs(f *testing.F) {
	var b bytes.Buffer
	_ = Write(&b, []graph.Edge{{U: 1, V: 2}, {U: 3, V: 4}}, WriteOptions{Format: FormatBin})
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:binHeaderSize])
	f.Add(append(slices.Clone(b.Bytes()), 0))
	f.Add([]byte("1 2\n2 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p32, es, _, err := readStreamIDs(t.Context(), bytes.NewReader(data), "-", ReadOptions{})
		ref, _, rerr := Read(t.Context(), bytes.NewReader(data), "-", ReadOptions{})
		if err != nil && strings.Contains(err.Error(), "ends in the middle of this line") {
			// A text stream whose last line has no newline is refused as cut
			// (Read of a reader, the reference, takes it).
			if last := data[bytes.LastIndexByte(data, '\n')+1:]; len(bytes.TrimSpace(last)) == 0 {
				t.Fatalf("refused as cut, but the stream ends with a whole line: %v", err)
			}
			return
		}
		if err != nil {
			if rerr == nil && p32 == nil && es == nil && !strings.Contains(err.Error(), "corrupt header") {
				t.Fatalf("refused what the streaming reader reads: %v", err)
			}
			return
		}
		if rerr != nil {
			t.Fatalf("read what the streaming reader refuses (%v)", rerr)
		}
		if p32 == nil {
			if !slices.Equal(es, ref) {
				t.Fatal("edges differ from the streaming reader's")
			}
			return
		}
		if len(p32) != 2*len(ref) {
			t.Fatalf("%d words for %d edges", len(p32), len(ref))
		}
		for i, e := range ref {
			if uint64(p32[2*i]) != e.U || uint64(p32[2*i+1]) != e.V {
				t.Fatalf("pair %d: %d %d, the streaming reader %v", i, p32[2*i], p32[2*i+1], e)
			}
		}
	})
}
