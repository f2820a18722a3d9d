package edgeio

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// The parallel whole-file path and the streaming path must agree on every
// binary file, well-formed or not; malformed ones go to the streaming path
// and keep its messages.
func TestBinaryFileMatchesStream(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		m     int
		width int
		max   uint64
	}{
		{"empty", 0, 4, 10}, {"small", 5, 4, 10}, {"segments", 3*binSegment + 17, 4, 1 << 31}, {"wide", binSegment + 3, 8, 1<<64 - 1},
	} {
		edges := make([]graph.Edge, tc.m)
		for i := range edges {
			edges[i] = graph.Edge{U: rng.Uint64N(tc.max), V: rng.Uint64N(tc.max)}
		}
		p := filepath.Join(dir, tc.name+".bin")
		if err := WriteFile(p, edges, WriteOptions{IDWidth: tc.width}); err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{1, 3} {
			var progressed int64
			got, st, ok, err := readBinaryFile(context.Background(), p, ReadOptions{Workers: w, Progress: func(d, total int64) { progressed = d }})
			if !ok || err != nil {
				t.Fatalf("%s: ok=%v err=%v", tc.name, ok, err)
			}
			if st.Edges != int64(tc.m) || st.Format != FormatBin || len(got) != tc.m || progressed != st.Bytes {
				t.Fatalf("%s: stats %+v, %d edges, progress %d", tc.name, st, len(got), progressed)
			}
			for i := range got {
				if got[i] != edges[i] {
					t.Fatalf("%s: edge %d is %v, want %v", tc.name, i, got[i], edges[i])
				}
			}
		}
	}
	// A file with trailing bytes or a short body is not taken by the fast
	// path, so the streaming reader reports it.
	p := filepath.Join(dir, "small.bin")
	data, _ := os.ReadFile(p)
	for name, bad := range map[string][]byte{"trailing": append(append([]byte{}, data...), 0), "short": data[:len(data)-3]} {
		q := filepath.Join(dir, name+".bin")
		if err := os.WriteFile(q, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, _ := readBinaryFile(context.Background(), q, ReadOptions{}); ok {
			t.Errorf("%s: the fast path took a malformed file", name)
		}
		if _, _, err := ReadFile(context.Background(), q, ReadOptions{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// ReadBinaryPairs32 gives the pairs of exactly the files of 32-bit ids
// that the parallel path takes, in file order, and declines every other.
func TestReadBinaryPairs32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	edges := make([]graph.Edge, 2*binSegment+5)
	for i := range edges {
		edges[i] = graph.Edge{U: rng.Uint64N(1 << 32), V: rng.Uint64N(1 << 32)}
	}
	p32 := filepath.Join(dir, "a.bin")
	if err := WriteFile(p32, edges, WriteOptions{IDWidth: 4}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 4} {
		pairs, st, ok, err := ReadBinaryPairs32(context.Background(), p32, ReadOptions{Workers: w})
		if !ok || err != nil {
			t.Fatalf("workers %d: ok=%v err=%v", w, ok, err)
		}
		if st.Edges != int64(len(edges)) || st.Format != FormatBin || len(pairs) != 2*len(edges) {
			t.Fatalf("workers %d: stats %+v, %d ids", w, st, len(pairs))
		}
		for i, e := range edges {
			if uint64(pairs[2*i]) != e.U || uint64(pairs[2*i+1]) != e.V {
				t.Fatalf("workers %d: pair %d is (%d, %d), want %v", w, i, pairs[2*i], pairs[2*i+1], e)
			}
		}
	}
	p64 := filepath.Join(dir, "b.bin")
	if err := WriteFile(p64, edges[:10], WriteOptions{IDWidth: 8}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p32)
	short := filepath.Join(dir, "short.bin")
	if err := os.WriteFile(short, data[:len(data)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "c.bin.gz")
	if err := WriteFile(gz, edges[:10], WriteOptions{IDWidth: 4}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{p64, short, gz, filepath.Join(dir, "missing.bin"), "-"} {
		if _, _, ok, err := ReadBinaryPairs32(context.Background(), q, ReadOptions{}); ok || err != nil {
			t.Fatalf("%s: ok=%v err=%v, want declined", q, ok, err)
		}
	}
	if _, _, ok, _ := ReadBinaryPairs32(context.Background(), p32, ReadOptions{Format: FormatEdgeList}); ok {
		t.Fatal("a file read as text taken by the binary path")
	}
}

// pairsRecorder checks what a PairsWatcher is told: Begin once with the
// result, then every word once, each already final when reported.
type pairsRecorder struct {
	want  []uint32
	mu    sync.Mutex
	begun []uint32
	seen  []int
	bad   string
}

func (r *pairsRecorder) Begin(p []uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.begun != nil {
		r.bad = "Begin called twice"
	}
	r.begun, r.seen = p, make([]int, len(p))
}

func (r *pairsRecorder) Filled(lo, hi int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.begun == nil || lo < 0 || lo > hi || hi > len(r.begun) || lo%2 != 0 || hi%2 != 0 {
		r.bad = fmt.Sprintf("Filled(%d, %d) of %d words", lo, hi, len(r.begun))
		return
	}
	for i := lo; i < hi; i++ {
		r.seen[i]++
		if r.begun[i] != r.want[i] && r.bad == "" {
			r.bad = fmt.Sprintf("word %d reported before it was read", i)
		}
	}
}

// A PairsWatcher hears of every word of a 32-bit binary file once, after
// it is read, and of nothing for files the parallel path declines.
func TestReadBinaryPairs32Watched(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	edges := make([]graph.Edge, 3*binSegment+7)
	want := make([]uint32, 0, 2*len(edges))
	for i := range edges {
		edges[i] = graph.Edge{U: rng.Uint64N(1<<32-1) + 1, V: rng.Uint64N(1<<32-1) + 1} // no zero: unread words differ
		want = append(want, uint32(edges[i].U), uint32(edges[i].V))
	}
	p32 := filepath.Join(dir, "a.bin")
	if err := WriteFile(p32, edges, WriteOptions{IDWidth: 4}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 3} {
		r := &pairsRecorder{want: want}
		pairs, _, ok, err := ReadBinaryPairs32(context.Background(), p32, ReadOptions{Workers: w, Pairs32: r})
		if !ok || err != nil {
			t.Fatalf("workers %d: ok=%v err=%v", w, ok, err)
		}
		if r.bad != "" {
			t.Fatalf("workers %d: %s", w, r.bad)
		}
		if len(r.begun) != len(pairs) || &r.begun[0] != &pairs[0] {
			t.Fatalf("workers %d: Begin saw another slice than the result", w)
		}
		for i, n := range r.seen {
			if n != 1 {
				t.Fatalf("workers %d: word %d reported %d times", w, i, n)
			}
		}
	}
	p64 := filepath.Join(dir, "b.bin")
	if err := WriteFile(p64, edges[:10], WriteOptions{IDWidth: 8}); err != nil {
		t.Fatal(err)
	}
	r := &pairsRecorder{}
	if _, _, _, err := ReadFileIDs(context.Background(), p64, ReadOptions{Pairs32: r}); err != nil || r.begun != nil {
		t.Fatalf("64-bit file: err %v, Begin called %v", err, r.begun != nil)
	}
}
