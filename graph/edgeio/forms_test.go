package edgeio

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/trigrid/trigrid/graph"
)

// The writers here turn a graph into each form the readers take. They
// are written from the formats' descriptions, apart from the readers, so
// that a reading that agrees with them checks both.

// simpleGraph is an undirected simple graph: vertex i has the input id
// ids[i] and the sorted neighbours adj[i].
type simpleGraph struct {
	ids []uint64
	adj [][]int
}

// newSimpleGraph symmetrizes edges and drops self-loops and duplicates.
func newSimpleGraph(edges []graph.Edge) *simpleGraph {
	set := map[uint64]bool{}
	for _, e := range edges {
		set[e.U], set[e.V] = true, true
	}
	g := &simpleGraph{}
	for id := range set {
		g.ids = append(g.ids, id)
	}
	slices.Sort(g.ids)
	index := make(map[uint64]int, len(g.ids))
	for i, id := range g.ids {
		index[id] = i
	}
	g.adj = make([][]int, len(g.ids))
	for _, e := range edges {
		u, v := index[e.U], index[e.V]
		if u != v {
			g.adj[u] = append(g.adj[u], v)
			g.adj[v] = append(g.adj[v], u)
		}
	}
	for i := range g.adj {
		slices.Sort(g.adj[i])
		g.adj[i] = slices.Compact(g.adj[i])
	}
	return g
}

func (g *simpleGraph) edges() int {
	m := 0
	for _, a := range g.adj {
		m += len(a)
	}
	return m / 2
}

// triangles counts by brute force: for each edge u < v, the common
// neighbours above v.
func (g *simpleGraph) triangles() uint64 {
	var t uint64
	for u, au := range g.adj {
		for _, v := range au {
			if v <= u {
				continue
			}
			av := g.adj[v]
			i, j := 0, 0
			for i < len(au) && j < len(av) {
				switch {
				case au[i] < av[j]:
					i++
				case au[i] > av[j]:
					j++
				default:
					if au[i] > v {
						t++
					}
					i++
					j++
				}
			}
		}
	}
	return t
}

// edgeSet is the undirected simple edge set of edges, ids mapped by id
// (nil: as they are).
func edgeSet(edges []graph.Edge, id func(uint64) uint64) map[[2]uint64]bool {
	s := make(map[[2]uint64]bool, len(edges))
	for _, e := range edges {
		u, v := e.U, e.V
		if id != nil {
			u, v = id(u), id(v)
		}
		if u == v {
			continue
		}
		s[[2]uint64{min(u, v), max(u, v)}] = true
	}
	return s
}

// metis writes g as a METIS file with the given fmt ("" for none) and
// ncon (0 for none): sizes, vertex weights and edge weights are made up.
func (g *simpleGraph) metis(format string, ncon int) []byte {
	var b bytes.Buffer
	b.WriteString("% a METIS graph\n")
	fmt.Fprintf(&b, "%d %d", len(g.adj), g.edges())
	if format != "" {
		fmt.Fprintf(&b, " %s", format)
	}
	if ncon > 0 {
		fmt.Fprintf(&b, " %d", ncon)
	}
	b.WriteByte('\n')
	f := strings.Repeat("0", 3-len(format)) + format
	vw := ncon
	if vw == 0 && f[1] == '1' {
		vw = 1
	}
	for i, a := range g.adj {
		if i%97 == 5 {
			b.WriteString("% a comment among the vertices\n")
		}
		var fields []string
		if f[0] == '1' {
			fields = append(fields, fmt.Sprint(1+i%3))
		}
		for k := 0; k < vw; k++ {
			fields = append(fields, fmt.Sprint(1+(i+k)%5))
		}
		for _, v := range a {
			fields = append(fields, fmt.Sprint(v+1))
			if f[2] == '1' {
				fields = append(fields, fmt.Sprint(1+v%7))
			}
		}
		b.WriteString(strings.Join(fields, " "))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// adjList writes g with its input ids, every neighbour on both ends'
// lines (both) or on the smaller end's only.
func (g *simpleGraph) adjList(both bool) []byte {
	var b bytes.Buffer
	b.WriteString("# an adjacency list\n")
	for i, a := range g.adj {
		fmt.Fprint(&b, g.ids[i])
		for _, v := range a {
			if both || v > i {
				fmt.Fprintf(&b, " %d", g.ids[v])
			}
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// dimacs writes g as a DIMACS shortest-path file (each edge as two arcs)
// or, for "edge", as a clique file (each edge once).
func (g *simpleGraph) dimacs(problem string) []byte {
	var b bytes.Buffer
	b.WriteString("c a DIMACS graph\nc\n")
	m := 2 * g.edges()
	word := "a"
	if problem == "edge" {
		m, word = g.edges(), "e"
	}
	fmt.Fprintf(&b, "p %s %d %d\n", problem, len(g.adj), m)
	for u, a := range g.adj {
		for _, v := range a {
			switch {
			case word == "a":
				fmt.Fprintf(&b, "a %d %d %d\n", u+1, v+1, 1+(u+v)%9)
			case v > u:
				fmt.Fprintf(&b, "e %d %d\n", u+1, v+1)
			}
		}
	}
	return b.Bytes()
}

// gap writes g in the GAP serialized layout: undirected (each edge at
// both ends), or directed with each edge once, from its smaller end, and
// the in side as the transpose; weighted puts a weight after each
// neighbour.
func (g *simpleGraph) gap(directed, weighted bool) []byte {
	n := len(g.adj)
	out := make([][]int, n)
	in := make([][]int, n)
	for u, a := range g.adj {
		for _, v := range a {
			if !directed || v > u {
				out[u] = append(out[u], v)
				in[v] = append(in[v], u)
			}
		}
	}
	var b bytes.Buffer
	put := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	e := 0
	for _, a := range out {
		e += len(a)
	}
	put(directed)
	put(int64(e))
	put(int64(n))
	side := func(lists [][]int) {
		off := int64(0)
		put(off)
		for _, a := range lists {
			off += int64(len(a))
			put(off)
		}
		for _, a := range lists {
			for _, v := range a {
				put(int32(v))
				if weighted {
					put(int32(1 + v%5))
				}
			}
		}
	}
	side(out)
	if directed {
		side(in)
	}
	return b.Bytes()
}

// edgeListText writes edges one per line with a SNAP-like comment.
func edgeListText(edges []graph.Edge) []byte {
	var b bytes.Buffer
	b.WriteString("# Nodes and edges\n")
	for _, e := range edges {
		fmt.Fprintf(&b, "%d\t%d\n", e.U, e.V)
	}
	return b.Bytes()
}

// compressed returns data compressed as comp: gzip, zstd and xz here,
// bzip2 through the bzip2 program (nil without it).
func compressed(t testing.TB, comp string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	switch comp {
	case compGzip:
		w := gzip.NewWriter(&b)
		w.Write(data)
		w.Close()
	case compZstd:
		w, _ := zstd.NewWriter(&b)
		w.Write(data)
		w.Close()
	case compXz:
		w, err := xz.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
	case compBzip2:
		if _, err := exec.LookPath("bzip2"); err != nil {
			return nil
		}
		cmd := exec.Command("bzip2", "-c")
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return out
	default:
		t.Fatalf("no compression %q", comp)
	}
	return b.Bytes()
}

type member struct {
	name string
	data []byte
}

// tarball returns a tar archive of members (a directory entry first for
// each directory, as tar writes them).
func tarball(t testing.TB, members ...member) []byte {
	t.Helper()
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	dirs := map[string]bool{}
	for _, m := range members {
		if strings.HasSuffix(m.name, "/") {
			if err := w.WriteHeader(&tar.Header{Name: m.name, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if d, _, ok := strings.Cut(m.name, "/"); ok && !dirs[d] {
			dirs[d] = true
			if err := w.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteHeader(&tar.Header{Name: m.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(m.data))}); err != nil {
			t.Fatal(err)
		}
		w.Write(m.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeBytes(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := t.TempDir() + "/" + name
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
