package edgeio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
)

// oneByOne formats edges the plain way, one line or one pair after the
// other, as the reference the parallel writer must match byte for byte.
func oneByOne(t *testing.T, edges []graph.Edge, f Format) []byte {
	t.Helper()
	var b bytes.Buffer
	var top uint64
	for _, e := range edges {
		top = max(top, e.U, e.V)
	}
	switch f {
	case FormatBin:
		wd := uint32(4)
		if top > math.MaxUint32 {
			wd = 8
		}
		b.Write(binHeader{version: binVersion, width: wd, edges: uint64(len(edges))}.encode())
		for _, e := range edges {
			if wd == 4 {
				b.Write([]byte{byte(e.U), byte(e.U >> 8), byte(e.U >> 16), byte(e.U >> 24), byte(e.V), byte(e.V >> 8), byte(e.V >> 16), byte(e.V >> 24)})
			} else {
				for _, x := range []uint64{e.U, e.V} {
					for s := 0; s < 64; s += 8 {
						b.WriteByte(byte(x >> s))
					}
				}
			}
		}
	case FormatMTX:
		n := uint64(0)
		if len(edges) > 0 {
			n = top + 1
		}
		fmt.Fprintf(&b, "%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n", n, n, len(edges))
		for _, e := range edges {
			fmt.Fprintf(&b, "%d %d\n", e.U+1, e.V+1)
		}
	case FormatTSV:
		for _, e := range edges {
			fmt.Fprintf(&b, "%d\t%d\n", e.U, e.V)
		}
	default:
		for _, e := range edges {
			fmt.Fprintf(&b, "%d %d\n", e.U, e.V)
		}
	}
	return b.Bytes()
}

// smallChunks is a Chunks with tiny, odd-sized chunks and no id bound, so
// that the writer's ordering and its pass for the largest id are
// exercised.
type smallChunks struct {
	edges []graph.Edge
	k     int
}

func (s smallChunks) Len() int64    { return int64(len(s.edges)) }
func (s smallChunks) ChunkLen() int { return s.k }
func (s smallChunks) Chunk(c int, buf []graph.Edge) []graph.Edge {
	if len(buf) != s.k {
		panic("buffer of the wrong size")
	}
	// Take a little time on some chunks so that they complete out of order.
	if c%5 == 0 {
		time.Sleep(50 * time.Microsecond)
	}
	n := copy(buf, s.edges[c*s.k:min((c+1)*s.k, len(s.edges))])
	return buf[:n]
}

func TestWriteChunksMatchesOneByOne(t *testing.T) {
	rm, err := gen.RMATSource(10, 70, 9)
	if err != nil {
		t.Fatal(err)
	}
	rmEdges, err := gen.RMAT(10, 70, 9, 1)
	if err != nil {
		t.Fatal(err)
	}
	wide := []graph.Edge{{U: 1 << 40, V: 3}, {U: 0, V: 7}, {U: 5, V: math.MaxUint64 - 1}}
	cases := []struct {
		name  string
		src   Chunks
		edges []graph.Edge
	}{
		{"rmat", rm, rmEdges},
		{"small-chunks", smallChunks{rmEdges[:1000], 7}, rmEdges[:1000]},
		{"wide-ids", smallChunks{wide, 2}, wide},
		{"empty", smallChunks{nil, 3}, nil},
		{"slice", sliceChunks{rmEdges[:777], 100}, rmEdges[:777]},
	}
	for _, c := range cases {
		for _, f := range []Format{FormatEdgeList, FormatTSV, FormatMTX, FormatBin} {
			want := oneByOne(t, c.edges, f)
			for _, workers := range []int{1, 3, 8} {
				var buf bytes.Buffer
				var last int64 = -1
				opts := WriteOptions{Format: f, Workers: workers, Progress: func(done, total int64) {
					if done < last || done > total || total != c.src.Len() {
						t.Errorf("%s %v: progress %d of %d after %d", c.name, f, done, total, last)
					}
					last = done
				}}
				if err := WriteChunks(&buf, c.src, opts); err != nil {
					t.Fatalf("%s %v workers %d: %v", c.name, f, workers, err)
				}
				if !bytes.Equal(buf.Bytes(), want) {
					t.Fatalf("%s %v workers %d: %d bytes differ from the one-by-one %d", c.name, f, workers, buf.Len(), len(want))
				}
				if c.src.Len() > 0 && last != c.src.Len() {
					t.Fatalf("%s %v: progress ended at %d of %d", c.name, f, last, c.src.Len())
				}
			}
		}
	}
}

func TestWriteChunksFileReadsBack(t *testing.T) {
	src, err := gen.RMATSource(9, 40, 4)
	if err != nil {
		t.Fatal(err)
	}
	want, err := gen.RMAT(9, 40, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"r.bin", "r.txt.zst", "r.mtx.gz", "r.tsv"} {
		path := filepath.Join(t.TempDir(), name)
		if err := WriteChunksFileContext(context.Background(), path, src, WriteOptions{Workers: 3}); err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadFile(context.Background(), path, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: read back %d edges, wrote %d (or they differ)", name, len(got), len(want))
		}
	}
}

// failAfter fails every write once n bytes were written.
type failAfter struct{ n int }

var errFull = errors.New("device full")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errFull
	}
	f.n -= len(p)
	return len(p), nil
}

// A failing writer stops the workers and its error comes back, at any
// point of the stream.
func TestWriteChunksWriteError(t *testing.T) {
	src, err := gen.RMATSource(12, 64, 1) // 2^18 edges, 4 chunks
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 100, 1 << 20, 2<<20 - 1} {
		for _, f := range []Format{FormatBin, FormatEdgeList} {
			err := WriteChunks(&failAfter{at}, src, WriteOptions{Format: f, Workers: 4})
			if !errors.Is(err, errFull) {
				t.Fatalf("%v failing after %d bytes: %v", f, at, err)
			}
		}
	}
}

func TestWriteChunksRefusals(t *testing.T) {
	wide := smallChunks{[]graph.Edge{{U: 1 << 33, V: 1}}, 4}
	if err := WriteChunks(&bytes.Buffer{}, wide, WriteOptions{Format: FormatBin, IDWidth: 4}); err == nil || !strings.Contains(err.Error(), "cannot hold id 8589934592") {
		t.Fatalf("width 4 for id 2^33: %v", err)
	}
	if err := WriteChunks(&bytes.Buffer{}, wide, WriteOptions{Format: FormatBin, IDWidth: 6}); err == nil || !strings.Contains(err.Error(), "width 6") {
		t.Fatalf("width 6: %v", err)
	}
	top := smallChunks{[]graph.Edge{{U: math.MaxUint64, V: 1}}, 4}
	if err := WriteChunks(&bytes.Buffer{}, top, WriteOptions{Format: FormatMTX}); err == nil || !strings.Contains(err.Error(), "2^64-1") {
		t.Fatalf("mtx of id 2^64-1: %v", err)
	}
}

// BenchmarkWriteRMATSource is `gen rmat --format bin` without the file:
// rmat generated and encoded on every core, written in order to a sink.
func BenchmarkWriteRMATSource(b *testing.B) {
	for _, f := range []Format{FormatBin, FormatEdgeList} {
		b.Run(f.String(), func(b *testing.B) {
			src, err := gen.RMATSource(20, 16, 1)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := WriteChunks(io.Discard, src, WriteOptions{Format: f}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(src.Len())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}
