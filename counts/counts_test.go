package counts

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/trigrid/trigrid/graph"
)

// sample is a triangle {0,1,2} plus a pendant 3 on 2 and a vertex 4 on 3,
// over rank ids, with shuffled original ids: triangles 1,1,1,0,0; support
// 1 on the triangle's edges, 0 on the others.
func sample() *Counts {
	edges := [][3]uint64{{0, 1, 1}, {0, 2, 1}, {1, 2, 1}, {2, 3, 0}, {3, 4, 0}}
	c := &Counts{
		OrigID:    []uint64{70, 10, 1 << 63, 5, 40},
		Triangles: []uint64{1, 1, 1, 0, 0},
		PerEdge:   true,
		Edges: func(yield func([2]uint32, uint64) bool) {
			for _, e := range edges {
				if !yield([2]uint32{uint32(e[0]), uint32(e[1])}, e[2]) {
					return
				}
			}
		},
	}
	c.Degree = Degrees(5, c.Edges)
	return c
}

func TestClustering(t *testing.T) {
	c := sample()
	if err := c.Check(1); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(2); err == nil {
		t.Fatal("Check(2) passed with one triangle")
	}
	if !slices.Equal(c.Degree, []uint32{2, 2, 3, 2, 1}) {
		t.Fatalf("degrees %v", c.Degree)
	}
	// C = 1, 1, 1/3, 0, 0 (vertex 4 has degree 1).
	want := (1 + 1 + 1.0/3) / 5
	if got := c.AverageClustering(); math.Abs(got-want) > 1e-15 {
		t.Fatalf("average clustering %v, want %v", got, want)
	}
	// wedges: 1 + 1 + 3 + 1 + 0 = 6; transitivity 3/6.
	if got := Transitivity(1, 6); got != 0.5 {
		t.Fatalf("transitivity %v", got)
	}
	if Transitivity(0, 0) != 0 || Clustering(5, 1) != 0 || (&Counts{}).AverageClustering() != 0 {
		t.Fatal("empty cases are not 0")
	}
}

func TestTop(t *testing.T) {
	c := sample()
	top := c.TopVertices(2)
	if len(top) != 2 || top[0].ID != 10 || top[1].ID != 70 {
		t.Fatalf("top vertices %+v", top)
	}
	if got := c.TopVertices(10); len(got) != 5 || got[4].Triangles != 0 || got[2].ID != 1<<63 {
		t.Fatalf("top 10 vertices %+v", got)
	}
	te := c.TopEdges(3)
	want := []Edge{{10, 70, 1}, {10, 1 << 63, 1}, {70, 1 << 63, 1}}
	if !slices.Equal(te, want) {
		t.Fatalf("top edges %+v, want %+v", te, want)
	}
	if c.TopVertices(0) != nil {
		t.Fatal("top 0 is not empty")
	}
}

// TestTopMatchesSort checks the bounded heap against a full sort.
func TestTopMatchesSort(t *testing.T) {
	rows := make([]int, 1000)
	for i := range rows {
		rows[i] = (i * 7919) % 613
	}
	less := func(a, b int) int { return b - a }
	for _, k := range []int{1, 5, 100, 999, 2000} {
		got := topK(k, slices.Values(rows), less)
		all := slices.Clone(rows)
		slices.SortFunc(all, less)
		if !slices.Equal(got, all[:min(k, len(all))]) {
			t.Fatalf("k=%d: %v", k, got[:min(10, len(got))])
		}
	}
}

// readTSV reads a TSV file (any compression FormatOf names) into its
// header and rows of fields.
func readTSV(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	switch {
	case strings.HasSuffix(path, ".gz"):
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	case strings.HasSuffix(path, ".zst"):
		z, err := zstd.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		r = z
	}
	sc := bufio.NewScanner(r)
	var rows [][]string
	for sc.Scan() {
		rows = append(rows, strings.Split(sc.Text(), "\t"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s is empty", path)
	}
	return rows[0], rows[1:]
}

func TestWriteTSVAndBinary(t *testing.T) {
	dir := t.TempDir()
	c := sample()
	ctx := context.Background()
	wantV := []string{"5\t2\t0\t0", "10\t2\t1\t1", "40\t1\t0\t0", "70\t2\t1\t1", "9223372036854775808\t3\t1\t" + strconv.FormatFloat(1.0/3, 'g', -1, 64)}
	wantE := []string{"10\t70\t1", "70\t9223372036854775808\t1", "10\t9223372036854775808\t1", "5\t9223372036854775808\t0", "5\t40\t0"}
	for _, ext := range []string{".tsv", ".tsv.gz", ".tsv.zst"} {
		vp, ep := filepath.Join(dir, "v"+ext), filepath.Join(dir, "e"+ext)
		if n, err := WriteVertices(ctx, vp, c); err != nil || n != 5 {
			t.Fatalf("%s: %d rows, %v", vp, n, err)
		}
		if n, err := WriteEdges(ctx, ep, c); err != nil || n != 5 {
			t.Fatalf("%s: %d rows, %v", ep, n, err)
		}
		h, rows := readTSV(t, vp)
		if strings.Join(h, " ") != "id degree triangles clustering" {
			t.Fatalf("%s: header %v", vp, h)
		}
		for i, r := range rows {
			if strings.Join(r, "\t") != wantV[i] {
				t.Fatalf("%s: row %d = %q, want %q", vp, i, strings.Join(r, "\t"), wantV[i])
			}
		}
		h, rows = readTSV(t, ep)
		if strings.Join(h, " ") != "u v support" || len(rows) != len(wantE) {
			t.Fatalf("%s: header %v, %d rows", ep, h, len(rows))
		}
		for i, r := range rows {
			if strings.Join(r, "\t") != wantE[i] {
				t.Fatalf("%s: row %d = %q, want %q", ep, i, strings.Join(r, "\t"), wantE[i])
			}
		}
	}

	vp := filepath.Join(dir, "v.bin")
	if _, err := WriteVertices(ctx, vp, c); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(vp)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if string(data[:8]) != "TGCOUNTS" || le.Uint16(data[8:]) != 1 || le.Uint16(data[10:]) != 1 || le.Uint64(data[16:]) != 5 || len(data) != 24+5*32 {
		t.Fatalf("binary header % x, %d bytes", data[:24], len(data))
	}
	for i, want := range slices.Collect(c.Vertices()) {
		r := data[24+32*i:]
		got := Vertex{le.Uint64(r), le.Uint64(r[8:]), le.Uint64(r[16:]), math.Float64frombits(le.Uint64(r[24:]))}
		if got != want {
			t.Fatalf("binary row %d = %+v, want %+v", i, got, want)
		}
	}
	ep := filepath.Join(dir, "e.bin")
	if _, err := WriteEdges(ctx, ep, c); err != nil {
		t.Fatal(err)
	}
	if data, err = os.ReadFile(ep); err != nil {
		t.Fatal(err)
	}
	if le.Uint16(data[10:]) != 2 || le.Uint64(data[16:]) != 5 || len(data) != 24+5*24 {
		t.Fatalf("binary edges header % x, %d bytes", data[:24], len(data))
	}
	if r := data[24:]; le.Uint64(r) != 10 || le.Uint64(r[8:]) != 70 || le.Uint64(r[16:]) != 1 {
		t.Fatalf("first edge record % x", r[:24])
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	c := sample()
	ctx := context.Background()
	if _, err := WriteVertices(ctx, filepath.Join(dir, "v.csv"), c); err == nil || !strings.Contains(err.Error(), "v.csv") {
		t.Fatalf("unknown extension: %v", err)
	}
	if _, err := WriteVertices(ctx, filepath.Join(dir, "missing", "v.tsv"), c); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing directory: %v", err)
	}
	c.PerEdge = false
	if _, err := WriteEdges(ctx, filepath.Join(dir, "e.tsv"), c); err == nil {
		t.Fatal("edges without support: no error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := WriteVertices(cctx, filepath.Join(dir, "v.tsv"), sample()); err == nil {
		t.Fatal("cancelled: no error")
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Fatalf("files left after failed writes: %v", left)
	}
}

// csrDegrees equals Degrees over the same CSR's edges.
func TestCSRDegrees(t *testing.T) {
	g := &graph.CSR{Offsets: []uint64{0, 3, 4, 5, 5, 5}, Cols: []uint32{1, 2, 4, 3, 4}, NCols: 5}
	want := Degrees(5, csrEdges(g, nil))
	if got := csrDegrees(g); !slices.Equal(got, want) || !slices.Equal(want, []uint32{3, 2, 2, 1, 2}) {
		t.Fatalf("csrDegrees %v, Degrees %v", got, want)
	}
}

// Files of many batches, each formatted in parts: every row in order,
// as one row at a time would write it, in every format.
func TestWriteManyRows(t *testing.T) {
	t.Parallel()
	const n = 2*batchRows + 12345
	rng := rand.New(rand.NewPCG(3, 4))
	c := &Counts{OrigID: make([]uint64, n), Triangles: make([]uint64, n), Degree: make([]uint32, n), PerEdge: true}
	for x := range n {
		c.OrigID[x] = uint64(x)*7 + 1 // ascending: Vertices keeps rank order
		c.Degree[x] = uint32(rng.IntN(1000))
		c.Triangles[x] = uint64(rng.IntN(int(c.Degree[x])*int(c.Degree[x])/2 + 1))
	}
	c.Edges = func(yield func([2]uint32, uint64) bool) {
		for x := range n - 1 {
			if !yield([2]uint32{uint32(x), uint32(x + 1)}, uint64(x%5)) {
				return
			}
		}
	}
	var wantV, wantE []string
	for v := range c.Vertices() {
		wantV = append(wantV, fmt.Sprintf("%d\t%d\t%d\t%s", v.ID, v.Degree, v.Triangles, strconv.FormatFloat(v.Clustering, 'g', -1, 64)))
	}
	for e := range c.EdgeRows() {
		wantE = append(wantE, fmt.Sprintf("%d\t%d\t%d", e.U, e.V, e.Support))
	}
	dir := t.TempDir()
	ctx := context.Background()
	for _, ext := range []string{".tsv", ".tsv.zst"} {
		vp, ep := filepath.Join(dir, "v"+ext), filepath.Join(dir, "e"+ext)
		if rows, err := WriteVertices(ctx, vp, c); err != nil || rows != n {
			t.Fatalf("%s: %d rows, %v", vp, rows, err)
		}
		if rows, err := WriteEdges(ctx, ep, c); err != nil || rows != n-1 {
			t.Fatalf("%s: %d rows, %v", ep, rows, err)
		}
		for _, f := range []struct {
			path string
			want []string
		}{{vp, wantV}, {ep, wantE}} {
			_, rows := readTSV(t, f.path)
			if len(rows) != len(f.want) {
				t.Fatalf("%s: %d rows, want %d", f.path, len(rows), len(f.want))
			}
			for i, r := range rows {
				if got := strings.Join(r, "\t"); got != f.want[i] {
					t.Fatalf("%s: row %d = %q, want %q", f.path, i, got, f.want[i])
				}
			}
		}
	}
	vb, eb := filepath.Join(dir, "v.bin"), filepath.Join(dir, "e.bin")
	if _, err := WriteVertices(ctx, vb, c); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteEdges(ctx, eb, c); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBinary(vb, eb)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := slices.Collect(got.Vertices()), slices.Collect(c.Vertices()); !slices.Equal(g, w) {
		t.Error("binary vertices differ from the counts")
	}
	if g, w := slices.Collect(got.EdgeRows()), slices.Collect(c.EdgeRows()); !slices.Equal(g, w) {
		t.Error("binary edges differ from the counts")
	}
}

// byID orders ranks as a stable sort by id does, for dense, sparse 64-bit
// and repeated ids.
func TestByID(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name string
		id   func(x int) uint64
	}{
		{"dense", func(x int) uint64 { return uint64((x * 7919) % 100003) }},
		{"sparse", func(x int) uint64 { return rng.Uint64() }},
		{"repeated", func(x int) uint64 { return uint64(rng.IntN(50)) << 40 }},
		{"one", func(x int) uint64 { return 42 }},
	} {
		ids := make([]uint64, 100003)
		for x := range ids {
			ids[x] = c.id(x)
		}
		want := make([]uint32, len(ids))
		for x := range want {
			want[x] = uint32(x)
		}
		slices.SortStableFunc(want, func(a, b uint32) int { return cmp.Compare(ids[a], ids[b]) })
		if got := byID(ids); !slices.Equal(got, want) {
			t.Errorf("%s: byID differs from a stable sort by id", c.name)
		}
	}
	if got := byID(nil); len(got) != 0 {
		t.Errorf("no ids: %v", got)
	}
}
