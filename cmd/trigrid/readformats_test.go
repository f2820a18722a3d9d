package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph/edgeio"
)

// fixture is a file of graph/edgeio's testdata.
func fixture(name string) string {
	return filepath.Join("..", "..", "graph", "edgeio", "testdata", name)
}

func readFixture(t *testing.T, name string) string {
	b, err := os.ReadFile(fixture(name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// k4SG is K4 as a GAP serialized graph, undirected.
func k4SG() string {
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	w(false)
	w(int64(12))
	w(int64(4))
	w([]int64{0, 3, 6, 9, 12})
	w([]int32{1, 2, 3, 0, 2, 3, 0, 1, 3, 0, 1, 2})
	return b.String()
}

// TestCountNoWrongCount: inputs that once gave a wrong count with exit 0
// give the right count (K4 has 4 triangles, a triangle 1) or fail with an
// error that names the file and what it is.
func TestCountNoWrongCount(t *testing.T) {
	tests := []struct {
		name, file, content string
		args                []string
		triangles           uint64 // when err is ""
		err                 string
	}{
		{"metis k4", "k4.graph", "4 6\n2 3 4\n1 3 4\n1 2 4\n1 2 3\n", nil, 4, ""},
		{"metis k4 weighted", "k4.graph", "% K4\n4 6 1\n2 1 3 1 4 1\n1 1 3 1 4 1\n1 1 2 1 4 1\n1 1 2 1 3 1\n", nil, 4, ""},
		{"adjacency list", "k4.adjlist", "1 2 3 4\n2 3 4\n3 4\n", nil, 4, ""},
		{"adjacency list forced", "k4.txt", "1 2 3 4\n2 3 4\n3 4\n", []string{"--format", "adjlist"}, 4, ""},
		{"adjacency list as .txt", "k4.txt", "1 2 3 4\n2 3 4\n3 4\n", nil, 0, "k4.txt: this looks like an adjacency list"},
		{"dimacs k4", "k4.gr", "c K4\np sp 4 6\na 1 2 1\na 1 3 1\na 1 4 1\na 2 3 1\na 2 4 1\na 3 4 1\n", nil, 4, ""},
		{"gap sg k4", "k4.sg", k4SG(), nil, 4, ""},
		{"gap sg k4 by content", "k4.dat", k4SG(), nil, 4, ""},
		{"bzip2", "tri.txt.bz2", readFixture(t, "tri.txt.bz2"), nil, 1, ""},
		{"xz", "tri.txt.xz", readFixture(t, "tri.txt.xz"), nil, 1, ""},
		{"konect tar.bz2", "tri.tar.bz2", readFixture(t, "konect-tri.tar.bz2"), nil, 1, ""},
		{"zip", "tri.zip", readFixture(t, "tri.zip"), nil, 0, "tri.zip: this is a zip archive"},
		{"one-line graphml", "g.graphml", `<?xml version="1.0"?><graphml><graph><edge source="1" target="2"/><edge source="2" target="3"/><edge source="3" target="1"/></graph></graphml>`, nil, 0, "this looks like GraphML"},
		{"json array", "e.json", "[[1,2],[2,3],[3,1]]", nil, 0, "e.json: this looks like JSON"},
		{"json array as .txt", "e.txt", "[[1,2],[2,3],[3,1]]", []string{"--format", "edgelist"}, 0, "this looks like JSON"},
		{"binary forced", "prog", "\x89\x01\x02\x03ELF-like\x00\x00\x00\x7f\x05", []string{"--format", "edgelist"}, 0, "prog:1:"},
		{"elf", "prog", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00", nil, 0, "prog: this is an ELF executable"},
		{"utf-16 one line", "u.txt", "\xff\xfe1\x00 \x002\x00", nil, 0, "u.txt: this is UTF-16 text"},
		{"utf-16 no bom", "u.txt", "1\x00 \x002\x00\n\x002\x00 \x003\x00\n\x00", nil, 0, "this looks like UTF-16 text"},
		{"pajek", "g.net", "*Vertices 3\n1 \"a\"\n2 \"b\"\n3 \"c\"\n*Edges\n1 2\n2 3\n3 1\n", nil, 0, "g.net: this looks like a Pajek .net file"},
		{"gml", "g.gml", "graph [\n node [ id 1 ]\n edge [ source 1 target 2 ]\n]\n", nil, 0, "this looks like GML"},
		{"header only", "h.csv", "src,dst\n", nil, 0, "h.csv:1:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, tc.file, tc.content)
			args := append([]string{"count", "--json", "--progress", "none", "--device", "cpu"}, tc.args...)
			out, _, err := run(t, append(args, path)...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v (output %q), want an error saying %q", err, out, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep := decodeReport(t, out); rep.Triangles != tc.triangles {
				t.Fatalf("%d triangles, want %d", rep.Triangles, tc.triangles)
			}
		})
	}
}

// TestCountNoEdges: a graph without edges counts 0 and exits 0, but says
// on stderr that the file held none.
func TestCountNoEdges(t *testing.T) {
	for _, tc := range []struct{ name, content, has string }{
		{"empty.txt", "", "the file holds none"},
		{"comments.txt", "# nothing\n% here\n", "the file holds none"},
		{"loops.txt", "1 1\n2 2\n", "its 2 raw edges are all self-loops"},
		{"empty.graph", "3 0\n\n\n\n", "the file holds none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, tc.name, tc.content)
			out, stderr, err := run(t, "count", "--progress", "none", "--device", "cpu", path)
			if err != nil || !strings.Contains(out, "triangles    0") {
				t.Fatalf("%v\n%s", err, out)
			}
			if want := "no edges in " + path; !strings.Contains(stderr, want) || !strings.Contains(stderr, tc.has) {
				t.Fatalf("stderr %q, want %q and %q", stderr, want, tc.has)
			}
		})
	}
	path := write(t, "tri.txt", "1 2\n2 3\n3 1\n")
	if _, stderr, err := run(t, "count", "--progress", "none", "--device", "cpu", path); err != nil || strings.Contains(stderr, "no edges") {
		t.Fatalf("a graph with edges: %v, stderr %q", err, stderr)
	}
}

// TestCountFormsHeldOut: ca-GrQc written as METIS, GAP, DIMACS and a
// KONECT-like tar archive counts SNAP's 48,260 triangles through every
// count path: whole, partitioned in memory, and through shards made by
// the partitioner's external reader.
func TestCountFormsHeldOut(t *testing.T) {
	edges, _, err := edgeio.ReadFile(t.Context(), filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz"), edgeio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idx := map[uint64]int{}
	for _, e := range edges {
		for _, v := range []uint64{e.U, e.V} {
			if _, ok := idx[v]; !ok {
				idx[v] = len(idx)
			}
		}
	}
	adj := make([]map[int]bool, len(idx))
	for i := range adj {
		adj[i] = map[int]bool{}
	}
	for _, e := range edges {
		u, v := idx[e.U], idx[e.V]
		if u != v {
			adj[u][v], adj[v][u] = true, true
		}
	}
	sorted := func(m map[int]bool) []int {
		var s []int
		for v := range m {
			s = append(s, v)
		}
		sort.Ints(s)
		return s
	}
	var metis, dimacs strings.Builder
	m := 0
	for _, a := range adj {
		m += len(a)
	}
	fmt.Fprintf(&metis, "%d %d\n", len(adj), m/2)
	fmt.Fprintf(&dimacs, "p sp %d %d\n", len(adj), m)
	var sg bytes.Buffer
	w := func(v any) { _ = binary.Write(&sg, binary.LittleEndian, v) }
	w(false)
	w(int64(m))
	w(int64(len(adj)))
	off := int64(0)
	w(off)
	for _, a := range adj {
		off += int64(len(a))
		w(off)
	}
	for u, a := range adj {
		for i, v := range sorted(a) {
			if i > 0 {
				metis.WriteByte(' ')
			}
			fmt.Fprint(&metis, v+1)
			fmt.Fprintf(&dimacs, "a %d %d 1\n", u+1, v+1)
			w(int32(v))
		}
		metis.WriteByte('\n')
	}
	dir := t.TempDir()
	files := map[string]string{"g.graph": metis.String(), "g.gr": dimacs.String(), "g.sg": sg.String()}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name := range files {
		path := filepath.Join(dir, name)
		for _, extra := range [][]string{nil, {"--partitions", "2"}} {
			if rep := countJSON(t, append(extra, path)...); rep.Triangles != 48260 {
				t.Errorf("%s %v: %d triangles, want 48260", name, extra, rep.Triangles)
			}
		}
		shards := filepath.Join(dir, name+".shards")
		if _, stderr, err := run(t, "partition", path, "-o", shards, "-P", "2", "--mem-limit", "1GiB", "--progress", "none"); err != nil {
			t.Fatalf("partition %s: %v\n%s", name, err, stderr)
		}
		if rep := countJSON(t, "--shards", shards); rep.Triangles != 48260 {
			t.Errorf("%s through shards: %d triangles, want 48260", name, rep.Triangles)
		}
	}
	// The report names the archive member read.
	rep := countJSON(t, write(t, "tri.tar.bz2", readFixture(t, "konect-tri.tar.bz2")))
	if rep.Input.Archive != "tar" || rep.Input.Member != "tri/out.tri" || rep.Input.Compression != "bzip2" {
		t.Fatalf("input %+v, want tar member tri/out.tri, bzip2", rep.Input)
	}
	out, _, err := run(t, "count", "--progress", "none", "--device", "cpu", write(t, "tri.tar.bz2", readFixture(t, "konect-tri.tar.bz2")))
	if err != nil || !strings.Contains(out, "bzip2 edgelist") || !strings.Contains(out, "tar member tri/out.tri") {
		t.Fatalf("report (%v):\n%s", err, out)
	}
}
