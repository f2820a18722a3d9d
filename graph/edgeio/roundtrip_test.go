package edgeio

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/trigrid/trigrid/graph"
)

func randomEdges(rng *rand.Rand, n int, maxID uint64) []graph.Edge {
	e := make([]graph.Edge, n)
	for i := range e {
		e[i] = graph.Edge{U: rng.Uint64N(maxID), V: rng.Uint64N(maxID)}
	}
	return e
}

func TestRoundTripFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	small := randomEdges(rng, 3000, 1<<20)
	huge := append(randomEdges(rng, 100, math.MaxUint64), graph.Edge{U: math.MaxUint64, V: math.MaxUint64 - 1}, graph.Edge{})
	mtxHuge := append(randomEdges(rng, 100, math.MaxUint64-1), graph.Edge{U: math.MaxUint64 - 1}) // +1 must fit

	exts := []struct {
		ext    string
		format Format
	}{{".txt", FormatEdgeList}, {".tsv", FormatTSV}, {".el", FormatEdgeList}, {".mtx", FormatMTX}, {".bin", FormatBin}, {".tgb", FormatBin}}
	comps := []struct{ suffix, name string }{{"", ""}, {".gz", "gzip"}, {".zst", "zstd"}}
	dir := t.TempDir()
	for _, ex := range exts {
		for _, c := range comps {
			for name, edges := range map[string][]graph.Edge{"small": small, "huge": huge, "empty": nil} {
				if ex.format == FormatMTX && name == "huge" {
					edges = mtxHuge
				}
				path := filepath.Join(dir, name+ex.ext+c.suffix)
				t.Run(filepath.Base(path), func(t *testing.T) {
					// Small pieces: many formatting tasks even for small inputs.
					if err := WriteFile(path, edges, WriteOptions{pieceEdges: 97, Workers: 3}); err != nil {
						t.Fatal(err)
					}
					got, st, err := ReadFile(t.Context(), path, ReadOptions{chunkSize: 4096, Workers: 3})
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(edges) || (len(edges) > 0 && !reflect.DeepEqual(got, edges)) {
						t.Fatalf("read back %d edges, wrote %d (or they differ)", len(got), len(edges))
					}
					fi, _ := os.Stat(path)
					if st.Compression != c.name || st.Bytes != fi.Size() || st.Edges != int64(len(edges)) {
						t.Fatalf("stats %+v, file size %d", st, fi.Size())
					}
					if len(edges) > 0 && st.Format != ex.format && !(ex.format == FormatTSV && st.Format == FormatTSV) {
						t.Fatalf("format %v, want %v", st.Format, ex.format)
					}
					if fi.Mode().Perm() != 0o644 {
						t.Fatalf("mode %v", fi.Mode())
					}
				})
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestWriteTextShape(t *testing.T) {
	edges := ed(1, 2, 30, 4)
	for _, tc := range []struct {
		opts WriteOptions
		want string
	}{
		{WriteOptions{}, "1 2\n30 4\n"},
		{WriteOptions{Format: FormatTSV}, "1\t2\n30\t4\n"},
		{WriteOptions{Format: FormatMTX}, "%%MatrixMarket matrix coordinate pattern general\n31 31 2\n2 3\n31 5\n"},
	} {
		var b bytes.Buffer
		if err := Write(&b, edges, tc.opts); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%v: got %q, want %q", tc.opts.Format, b.String(), tc.want)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, ed(math.MaxUint64, 0), WriteOptions{Format: FormatMTX}); err == nil {
		t.Error("id 2^64-1 written as Matrix Market")
	}
	if err := Write(&b, nil, WriteOptions{Compression: "lz4"}); err == nil || !strings.Contains(err.Error(), "valid: none, gzip, zstd") {
		t.Errorf("got %v", err)
	}
	if err := Write(failWriter{}, ed(1, 2), WriteOptions{}); err == nil {
		t.Error("write error lost")
	}
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "missing", "x.txt"), nil, WriteOptions{}); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	// A failed write leaves neither the target nor a temporary file.
	target := filepath.Join(dir, "x.mtx")
	if err := WriteFile(target, ed(math.MaxUint64, 0), WriteOptions{}); err == nil {
		t.Fatal("want an error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestReaderShapes reads through readers that return a few bytes at a
// time or an error together with data, as pipes and stdin do.
func TestReaderShapes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	edges := randomEdges(rng, 5000, 1<<40)
	for _, f := range []Format{FormatEdgeList, FormatMTX, FormatBin} {
		for _, comp := range []string{"", "gzip", "zstd"} {
			var b bytes.Buffer
			if err := Write(&b, edges, WriteOptions{Format: f, Compression: comp}); err != nil {
				t.Fatal(err)
			}
			for name, wrap := range map[string]func([]byte) *bytes.Reader{"plain": bytes.NewReader} {
				_ = name
				for _, shape := range []struct {
					name string
					r    func() any
				}{
					{"onebyte", func() any { return iotest.OneByteReader(wrap(b.Bytes())) }},
					{"half", func() any { return iotest.HalfReader(wrap(b.Bytes())) }},
					{"dataerr", func() any { return iotest.DataErrReader(wrap(b.Bytes())) }},
				} {
					t.Run(f.String()+"/"+comp+"/"+shape.name, func(t *testing.T) {
						got, st, err := Read(t.Context(), shape.r().(interface{ Read([]byte) (int, error) }), "-", ReadOptions{chunkSize: 4096, Workers: 2})
						if err != nil {
							t.Fatal(err)
						}
						if !reflect.DeepEqual(got, edges) || st.Format != f || st.Compression != comp || st.Bytes != int64(b.Len()) {
							t.Fatalf("%d edges, stats %+v", len(got), st)
						}
					})
				}
			}
		}
	}
}

func TestCompressionErrors(t *testing.T) {
	edges := randomEdges(rand.New(rand.NewPCG(7, 8)), 20000, 1<<30)
	for _, comp := range []string{"gzip", "zstd"} {
		var b bytes.Buffer
		if err := Write(&b, edges, WriteOptions{Compression: comp}); err != nil {
			t.Fatal(err)
		}
		data := b.Bytes()
		corrupt := bytes.Clone(data)
		for i := len(corrupt) / 2; i < len(corrupt)/2+64; i++ {
			corrupt[i] ^= 0x5a
		}
		for name, in := range map[string][]byte{
			"truncated": data[:len(data)/2],
			"corrupt":   corrupt,
			"header":    data[:6],
		} {
			t.Run(comp+"/"+name, func(t *testing.T) {
				_, _, err := Read(t.Context(), bytes.NewReader(in), "e.txt."+comp, ReadOptions{chunkSize: 1 << 12})
				if err == nil || !strings.Contains(err.Error(), comp) || !strings.Contains(err.Error(), "e.txt."+comp) {
					t.Fatalf("got %v, want an error naming the file and %s", err, comp)
				}
				if !strings.Contains(err.Error(), "corrupt") && !strings.Contains(err.Error(), "truncated") {
					t.Fatalf("%v does not say corrupt or truncated", err)
				}
			})
		}
	}
}
