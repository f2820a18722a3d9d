package edgeio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/internal/testlong"
)

// heldOut is a real graph with its published triangle count.
type heldOut struct {
	name, path string
	triangles  uint64
}

// heldOutGraphs are the repository's ca-GrQc and, when present, the
// shared datasets (the larger ones in long tests only).
func heldOutGraphs(t *testing.T) []heldOut {
	gs := []heldOut{{"ca-GrQc-repo", filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz"), 48260}}
	if raceEnabled && !longTests() {
		return gs // the race detector makes each form slow: one graph
	}
	if testgraphs.InCI() || hasDatasets() {
		for _, d := range testgraphs.Datasets(t) {
			if d.Edges <= testgraphs.DefaultEdges || longTests() {
				gs = append(gs, heldOut{d.Name, d.Path, d.Triangles})
			}
		}
	}
	return gs
}

// hasDatasets reports the shared datasets beside the module root.
func hasDatasets() bool {
	_, err := os.Stat(filepath.Join("..", "..", "..", "shared", "datasets", "MANIFEST.tsv"))
	return err == nil
}

func longTests() bool { return testlong.Enabled() }

type testBuffer = bytes.Buffer

// heldOutForm is one graph written in one form.
type heldOutForm struct {
	file string
	data []byte
	// renumbered: the form numbers vertices 0..n-1 in the order of
	// simpleGraph.ids (and declares n); else it keeps the input's ids.
	renumbered bool
	member     string // the tar member that holds the graph
}

func heldOutForms(t *testing.T, edges []graph.Edge, g *simpleGraph) []heldOutForm {
	el := edgeListText(edges)
	var mtx []byte
	{
		var b testBuffer
		if err := Write(&b, edges, WriteOptions{Format: FormatMTX}); err != nil {
			t.Fatal(err)
		}
		mtx = b.Bytes()
	}
	sg, dsg := g.gap(false, false), g.gap(true, false)
	forms := []heldOutForm{
		{file: "g.graph", data: g.metis("", 0), renumbered: true},
		{file: "g.graph", data: g.metis("0", 0), renumbered: true},
		{file: "ew.graph", data: g.metis("1", 0), renumbered: true},
		{file: "vw.graph", data: g.metis("10", 0), renumbered: true},
		{file: "vw2ew.graph", data: g.metis("011", 2), renumbered: true},
		{file: "all.metis", data: g.metis("111", 3), renumbered: true},
		{file: "size.graph", data: g.metis("100", 0), renumbered: true},
		{file: "g.graph.gz", data: compressed(t, compGzip, g.metis("1", 0)), renumbered: true},
		{file: "g.adjlist", data: g.adjList(true)},
		{file: "half.adj", data: g.adjList(false)},
		{file: "g.adjlist.xz", data: compressed(t, compXz, g.adjList(false))},
		{file: "g.gr", data: g.dimacs("sp"), renumbered: true},
		{file: "g.col", data: g.dimacs("edge"), renumbered: true},
		{file: "g.gr.zst", data: compressed(t, compZstd, g.dimacs("sp")), renumbered: true},
		{file: "u.sg", data: sg, renumbered: true},
		{file: "d.sg", data: dsg, renumbered: true},
		{file: "u.wsg", data: g.gap(false, true), renumbered: true},
		{file: "d.wsg", data: g.gap(true, true), renumbered: true},
		{file: "sg-by-content", data: sg, renumbered: true},
		{file: "wsg-by-content.bin", data: g.gap(false, true), renumbered: true},
		{file: "d.sg.zst", data: compressed(t, compZstd, dsg), renumbered: true},
		{file: "d.wsg.gz", data: compressed(t, compGzip, g.gap(true, true)), renumbered: true},
		{file: "g.txt.xz", data: compressed(t, compXz, el)},
		{file: "g.mtx.xz", data: compressed(t, compXz, mtx)},
		{file: "g.tar", data: tarball(t, member{"g/README.txt", []byte("a graph\n")}, member{"g/g.mtx", mtx}), member: "g/g.mtx"},
		{file: "konect.tar.gz", member: "g/out.g", data: compressed(t, compGzip, tarball(t,
			member{"g/README.g", []byte("KONECT\n")}, member{"g/meta.g", []byte("name: g\n")},
			member{"g/out.g", append([]byte("% sym unweighted\n"), el...)}, member{"g/ent.g.vertex.name", []byte("a\nb\n")}))},
		{file: "suitesparse.tar.xz", member: "g/g.mtx", data: compressed(t, compXz, tarball(t,
			member{"g/g.mtx", mtx}, member{"g/g_coord.mtx", []byte("%%MatrixMarket matrix array real general\n1 1\n0.5\n")}))},
		{file: "sg.tar.zst", member: "x/u.sg", data: compressed(t, compZstd, tarball(t, member{"x/LICENSE", []byte("free\n")}, member{"x/u.sg", sg})), renumbered: true},
		{file: "inner.tar", member: "g/g.graph.gz", data: tarball(t, member{"g/g.graph.gz", compressed(t, compGzip, g.metis("", 0))}), renumbered: true},
	}
	if bz := compressed(t, compBzip2, el); bz != nil {
		forms = append(forms,
			heldOutForm{file: "g.txt.bz2", data: bz},
			heldOutForm{file: "konect.tar.bz2", member: "g/out.g", data: compressed(t, compBzip2, tarball(t,
				member{"g/README.g", []byte("KONECT\n")}, member{"g/out.g", el}))},
			heldOutForm{file: "g.graph.bz2", data: compressed(t, compBzip2, g.metis("1", 0)), renumbered: true})
	}
	return forms
}

// TestHeldOutForms writes real graphs in every form the readers take and
// reads each back: the simple edge set must be the edge list's (the
// reference reading is testgraphs', which shares no code with these
// readers), ids mapped back where the form renumbers them, and the
// triangles, counted by brute force, the published count.
func TestHeldOutForms(t *testing.T) {
	t.Parallel()
	for _, h := range heldOutGraphs(t) {
		t.Run(h.name, func(t *testing.T) {
			var edges []graph.Edge
			for _, e := range testgraphs.ReadEdges(t, h.path) {
				edges = append(edges, graph.Edge{U: e[0], V: e[1]})
			}
			g := newSimpleGraph(edges)
			if got := g.triangles(); got != h.triangles {
				t.Fatalf("the reference graph has %d triangles, the manifest says %d", got, h.triangles)
			}
			want := edgeSet(edges, nil)
			for _, f := range heldOutForms(t, edges, g) {
				t.Run(f.file, func(t *testing.T) {
					t.Parallel()
					path := writeBytes(t, f.file, f.data)
					optsList := []ReadOptions{{}, {chunkSize: 4096, Workers: 3}}
					if raceEnabled {
						optsList = optsList[1:]
					}
					for _, opts := range optsList {
						got, st, err := ReadFile(t.Context(), path, opts)
						if err != nil {
							t.Fatal(err)
						}
						var id func(uint64) uint64
						if f.renumbered {
							id = func(i uint64) uint64 { return g.ids[i] }
							if st.DeclaredVertices != uint64(len(g.ids)) {
								t.Errorf("declared %d vertices, want %d", st.DeclaredVertices, len(g.ids))
							}
						}
						gotSet := edgeSet(got, id)
						if len(gotSet) != len(want) {
							t.Fatalf("%d edges, the edge list has %d", len(gotSet), len(want))
						}
						for e := range want {
							if !gotSet[e] {
								t.Fatalf("edge %v is missing", e)
							}
						}
						if st.Edges != int64(len(got)) || st.Member != f.member || (f.member != "") != (st.Archive == "tar") {
							t.Fatalf("stats %+v for %d edges, want member %q", st, len(got), f.member)
						}
						if len(want) <= testgraphs.DefaultEdges {
							mapped := got
							if id != nil {
								mapped = make([]graph.Edge, len(got))
								for i, e := range got {
									mapped[i] = graph.Edge{U: id(e.U), V: id(e.V)}
								}
							}
							if tri := newSimpleGraph(mapped).triangles(); tri != h.triangles {
								t.Fatalf("%d triangles, want %d", tri, h.triangles)
							}
						}
					}
				})
			}
		})
	}
}
