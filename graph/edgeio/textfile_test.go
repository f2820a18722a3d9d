package edgeio

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// messyText writes an edge list with what real files hold: comments at
// the top and in the middle, a header line, blank lines, extra columns,
// CRLF, a BOM, long ids, bad lines, no final newline.
func messyText(rng *rand.Rand, lines int, bad bool) string {
	var b strings.Builder
	if rng.IntN(3) == 0 {
		b.WriteString("\ufeff")
	}
	if rng.IntN(2) == 0 {
		b.WriteString("# Directed graph\n# Nodes: 10 Edges: 20\n")
	}
	if rng.IntN(3) == 0 {
		b.WriteString("FromNodeId\tToNodeId\n")
	}
	eol := "\n"
	if rng.IntN(4) == 0 {
		eol = "\r\n"
	}
	for i := range lines {
		switch r := rng.IntN(100); {
		case r < 2:
			b.WriteString("% a comment" + eol)
		case r < 4:
			b.WriteString(eol)
		case r < 5:
			fmt.Fprintf(&b, "%d 18446744073709551615%s", rng.Uint64N(1000), eol)
		case r < 6 && bad:
			fmt.Fprintf(&b, "%d x%s", i, eol)
		case r < 8:
			fmt.Fprintf(&b, "%d,%d,1.5%s", rng.Uint64N(1<<40), rng.Uint64N(1000), eol)
		default:
			fmt.Fprintf(&b, "%d\t%d%s", rng.Uint64N(1000), rng.Uint64N(1<<33), eol)
		}
	}
	if rng.IntN(2) == 0 {
		b.WriteString("7 8") // no final newline
	}
	return b.String()
}

// The parallel text reader gives exactly what the streaming reader gives:
// edges in order, every figure of the stats, and the same error (file,
// line, text, reason) for the same first bad line; files it does not take
// (lone CRs, lines too long for it) fall back without a trace.
func TestReadTextFileMatchesStream(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	dir := t.TempDir()
	for k := range 60 {
		text := messyText(rng, 50+rng.IntN(3000), k%3 == 0)
		if k%10 == 9 {
			text = strings.ReplaceAll(text, "\n", "\r") // classic Mac: falls back
		}
		path := filepath.Join(dir, fmt.Sprintf("g%d.txt", k))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, skip := range []bool{false, true} {
			for _, ck := range []struct{ size, workers int }{{16, 1}, {64, 3}, {1000, 2}} {
				opts := ReadOptions{chunkSize: ck.size, Workers: ck.workers, SkipBadLines: skip}
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				want, wst, werr := Read(t.Context(), f, path, opts)
				f.Close()
				got, gst, ok, gerr := readTextFile(t.Context(), path, opts)
				if !ok {
					if k%10 != 9 && len(text) >= 2*ck.size {
						t.Fatalf("%s chunk %d: not taken", path, ck.size)
					}
					continue
				}
				if k%10 == 9 {
					t.Fatalf("%s: lone CRs taken by the parallel reader", path)
				}
				if fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Fatalf("%s chunk %d skip %v: error %v, stream %v", path, ck.size, skip, gerr, werr)
				}
				if werr != nil {
					continue
				}
				wst.Path = path
				if gst != wst || len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
					t.Fatalf("%s chunk %d skip %v: %d edges, stats %+v; stream %d edges, %+v", path, ck.size, skip, len(got), gst, len(want), wst)
				}
			}
		}
	}
}

// Small, compressed and Matrix Market files and standard input are left
// to the streaming reader.
func TestReadTextFileDeclines(t *testing.T) {
	dir := t.TempDir()
	edges := randomEdges(rand.New(rand.NewPCG(1, 1)), 3000, 100)
	for _, name := range []string{"a.txt.gz", "a.mtx", "a.bin"} {
		p := filepath.Join(dir, name)
		if err := WriteFile(p, edges, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, _ := readTextFile(t.Context(), p, ReadOptions{chunkSize: 64}); ok {
			t.Fatalf("%s taken by the parallel text reader", name)
		}
	}
	p := filepath.Join(dir, "a.txt")
	if err := WriteFile(p, edges, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := readTextFile(t.Context(), p, ReadOptions{}); ok {
		t.Fatal("a file smaller than two chunks taken by the parallel text reader")
	}
	if _, _, ok, _ := readTextFile(t.Context(), "-", ReadOptions{chunkSize: 64}); ok {
		t.Fatal("standard input taken by the parallel text reader")
	}
}

// ReadFileIDs gives what ReadFile gives, as 32-bit pairs where it can:
// same edges in the same order, same stats, same errors.
func TestReadFileIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	dir := t.TempDir()
	small := randomEdges(rng, 5000, 1<<32)
	big := append(randomEdges(rng, 5000, 1<<32), graph.Edge{U: 1 << 32, V: 3})
	var files []string
	for name, edges := range map[string][]graph.Edge{"s.txt": small, "s.bin": small, "s.txt.gz": small, "b.txt": big, "b.bin": big} {
		p := filepath.Join(dir, name)
		if err := WriteFile(p, edges, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	for k := range 20 {
		p := filepath.Join(dir, fmt.Sprintf("m%d.txt", k))
		if err := os.WriteFile(p, []byte(messyText(rng, 500+rng.IntN(2000), k%2 == 0)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	narrowed := 0
	for _, p := range files {
		for _, skip := range []bool{false, true} {
			opts := ReadOptions{chunkSize: 256, Workers: 3, SkipBadLines: skip}
			want, wst, werr := ReadFile(t.Context(), p, opts)
			p32, edges, st, err := ReadFileIDs(t.Context(), p, opts)
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Fatalf("%s: error %v, ReadFile's %v", p, err, werr)
			}
			if werr != nil {
				continue
			}
			if p32 != nil && edges != nil {
				t.Fatalf("%s: both pairs and edges", p)
			}
			if p32 != nil {
				narrowed++
				edges = make([]graph.Edge, len(p32)/2)
				for i := range edges {
					edges[i] = graph.Edge{U: uint64(p32[2*i]), V: uint64(p32[2*i+1])}
				}
			}
			if st != wst || len(edges) != len(want) || (len(want) > 0 && !reflect.DeepEqual(edges, want)) {
				t.Fatalf("%s: %d edges, stats %+v; ReadFile %d, %+v", p, len(edges), st, len(want), wst)
			}
		}
	}
	if narrowed < 4 {
		t.Fatalf("only %d reads came as 32-bit pairs", narrowed)
	}
}

// A line longer than the parallel reader looks for a line end in goes to
// the streaming reader, which reads the file the same way it reads any.
func TestReadTextFileLongLine(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "%d %d\n", i, i+1)
	}
	b.WriteString("5 6" + strings.Repeat(" 7", textLongLine) + "\n") // extra columns
	for i := range 2000 {
		fmt.Fprintf(&b, "%d %d\n", i, i+2)
	}
	p := filepath.Join(t.TempDir(), "long.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := ReadOptions{chunkSize: 4096, Workers: 2}
	if _, _, ok, err := readTextFile(t.Context(), p, opts); ok || err != nil {
		t.Fatalf("a line of %d bytes taken by the parallel reader (err %v)", textLongLine*2, err)
	}
	got, st, err := ReadFile(t.Context(), p, opts)
	if err != nil || len(got) != 4001 || got[2000] != (graph.Edge{U: 5, V: 6}) || st.Lines != 4001 {
		t.Fatalf("%d edges, stats %+v, err %v", len(got), st, err)
	}
}
