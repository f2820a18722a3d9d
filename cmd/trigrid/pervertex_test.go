package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/internal/testgraphs"
)

// messyGraph returns a random edge list over sparse 64-bit ids with
// duplicates, both directions and self-loops, as file text and as pairs.
func messyGraph(seed uint64, n, m int) (string, [][2]uint64) {
	rng := rand.New(rand.NewPCG(seed, seed))
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = rng.Uint64() >> rng.UintN(64)
	}
	var b strings.Builder
	b.WriteString("# a comment\n")
	var edges [][2]uint64
	for range m {
		// Skewed endpoints give some vertices many triangles.
		u, v := ids[rng.IntN(1+rng.IntN(n))], ids[rng.IntN(n)]
		if rng.IntN(50) == 0 {
			v = u
		}
		edges = append(edges, [2]uint64{u, v})
		fmt.Fprintf(&b, "%d\t%d\n", u, v)
	}
	return b.String(), edges
}

// readRows reads a TSV file (gzip by extension) and returns its header and
// rows of fields.
func readRows(t *testing.T, path string) (string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(r)
	var rows [][]string
	for sc.Scan() {
		rows = append(rows, strings.Split(sc.Text(), "\t"))
	}
	if err := sc.Err(); err != nil || len(rows) == 0 {
		t.Fatalf("%s: %d lines, %v", path, len(rows), err)
	}
	return strings.Join(rows[0], " "), rows[1:]
}

func parseU(t *testing.T, s string) uint64 {
	t.Helper()
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// checkPerVertexFiles compares per-vertex and per-edge TSV files with the
// truth, and the report's clustering figures with ones computed here.
func checkPerVertexFiles(t *testing.T, want *testgraphs.Local, vpath, epath string, trans, avg float64) {
	t.Helper()
	h, rows := readRows(t, vpath)
	if h != "id degree triangles clustering" || len(rows) != len(want.Degree) {
		t.Fatalf("%s: header %q, %d rows, want %d", vpath, h, len(rows), len(want.Degree))
	}
	var sumC float64
	prev := uint64(0)
	for i, r := range rows {
		id, d, tri := parseU(t, r[0]), parseU(t, r[1]), parseU(t, r[2])
		if i > 0 && id <= prev {
			t.Fatalf("%s: ids not ascending at row %d", vpath, i)
		}
		prev = id
		if d != want.Degree[id] || tri != want.Triangles[id] {
			t.Fatalf("vertex %d: degree %d, triangles %d; want %d, %d", id, d, tri, want.Degree[id], want.Triangles[id])
		}
		c, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		var wc float64
		if d >= 2 {
			wc = float64(2*tri) / float64(d*(d-1))
		}
		if math.Abs(c-wc) > 1e-15 {
			t.Fatalf("vertex %d: clustering %v, want %v", id, c, wc)
		}
		sumC += wc
	}
	if wa := sumC / float64(len(rows)); math.Abs(avg-wa) > 1e-12 {
		t.Fatalf("average clustering %v, want %v", avg, wa)
	}
	if wt := 3 * float64(want.Total) / float64(want.Wedges); math.Abs(trans-wt) > 1e-12 {
		t.Fatalf("transitivity %v, want %v", trans, wt)
	}
	if epath == "" {
		return
	}
	h, rows = readRows(t, epath)
	if h != "u v support" || len(rows) != len(want.Support) {
		t.Fatalf("%s: header %q, %d rows, want %d", epath, h, len(rows), len(want.Support))
	}
	for _, r := range rows {
		u, v, s := parseU(t, r[0]), parseU(t, r[1]), parseU(t, r[2])
		w, ok := want.Support[[2]uint64{u, v}]
		if !ok || u >= v || s != w {
			t.Fatalf("edge %d-%d: support %d, want %d (in graph: %v)", u, v, s, w, ok)
		}
	}
}

func TestCountPerVertex(t *testing.T) {
	text, edges := messyGraph(7, 300, 4000)
	in := write(t, "g.txt", text)
	want := testgraphs.LocalCounts(edges)
	dir := t.TempDir()
	for _, args := range [][]string{
		nil,
		{"--kernel", "local"},
		{"--kernel", "merge", "--workers", "1"},
		{"--partitions", "2", "--scheme", "hash"},
		{"--partitions", "3", "--scheme", "range"},
		{"--partitions", "4", "--scheme", "hash"},
	} {
		vp, ep := filepath.Join(dir, "v.tsv"), filepath.Join(dir, "e.tsv.gz")
		rep := countJSON(t, append(args, "--per-vertex", vp, "--per-edge", ep, "--top", "3", in)...)
		if rep.Triangles != want.Total || rep.AverageClustering == nil || rep.PerVertex == nil {
			t.Fatalf("%v: %d triangles (want %d), clustering %v", args, rep.Triangles, want.Total, rep.AverageClustering)
		}
		checkPerVertexFiles(t, want, vp, ep, rep.Transitivity, *rep.AverageClustering)
		top := rep.PerVertex.TopVertices
		if len(top) != 3 || top[0].Triangles < top[1].Triangles || top[0].Triangles != want.Triangles[top[0].ID] {
			t.Fatalf("top vertices %+v", top)
		}
		for _, tri := range want.Triangles {
			if tri > top[2].Triangles && tri != top[0].Triangles && tri != top[1].Triangles {
				t.Fatalf("vertex with %d triangles missing from top %+v", tri, top)
			}
		}
		te := rep.PerVertex.TopEdges
		if len(te) != 3 || te[0].Support != want.Support[[2]uint64{te[0].U, te[0].V}] {
			t.Fatalf("top edges %+v", te)
		}
		for _, s := range want.Support {
			if s > te[0].Support {
				t.Fatalf("edge with support %d above the top %+v", s, te)
			}
		}
	}
	// Without files or top, --clustering still gives the average.
	rep := countJSON(t, "--clustering", in)
	if rep.AverageClustering == nil || rep.PerVertex == nil || rep.PerVertex.VerticesFile != "" {
		t.Fatalf("--clustering: %+v", rep.PerVertex)
	}
	// Without any, there is no per-vertex work but still transitivity.
	rep = countJSON(t, in)
	if rep.AverageClustering != nil || rep.PerVertex != nil || rep.Transitivity == 0 {
		t.Fatalf("plain count: clustering %v, per vertex %+v, transitivity %v", rep.AverageClustering, rep.PerVertex, rep.Transitivity)
	}
}

func TestCountPerVertexFlagErrors(t *testing.T) {
	in := write(t, "g.txt", "1 2\n2 3\n3 1\n")
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--per-vertex", filepath.Join(dir, "v.csv"), in}, "--per-vertex"},
		{[]string{"--per-edge", filepath.Join(dir, "e.txt"), in}, "--per-edge"},
		{[]string{"--top", "-1", in}, "--top"},
		{[]string{"--per-vertex", filepath.Join(dir, "v.tsv"), in, in}, "one graph FILE"},
		{[]string{"--per-vertex", filepath.Join(dir, "x.tsv"), "--per-edge", filepath.Join(dir, "x.tsv"), in}, "same file"},
		{[]string{"--per-vertex", filepath.Join(dir, "no", "v.tsv"), in}, "no/v.tsv"},
		{[]string{"--clustering", "--device", "gpu", "--kernel", "trust", in}, "GPU kernels with one: auto, polak, wetric"},
		{[]string{"--per-vertex", filepath.Join(dir, "v.tsv"), "--kernel", "grouptc", in}, "--kernel grouptc has no per-vertex mode"},
	} {
		_, _, err := run(t, append([]string{"count", "--progress", "none"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.args, err, c.want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("files left behind: %v", left)
	}
}
