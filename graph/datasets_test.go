package graph

import (
	"testing"

	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/internal/testlong"
)

// readEdgeList reads through testgraphs rather than graph/edgeio so that
// a fault in the real readers cannot hide one in Clean.
func readEdgeList(t *testing.T, path string) []Edge {
	t.Helper()
	pairs := testgraphs.ReadEdges(t, path)
	edges := make([]Edge, len(pairs))
	for i, p := range pairs {
		edges[i] = Edge{p[0], p[1]}
	}
	return edges
}

func TestCleanDatasets(t *testing.T) {
	for _, m := range testgraphs.Datasets(t) {
		t.Run(m.Name, func(t *testing.T) {
			testgraphs.SkipLarge(t, m)
			edges := readEdgeList(t, m.Path)
			u, st, err := Clean(edges, CleanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Vertices + int64(st.IsolatedIDs); got != m.Vertices || st.Edges != m.Edges {
				t.Fatalf("%d vertices (%d + %d loop-only), %d edges; manifest says %d, %d",
					got, st.Vertices, st.IsolatedIDs, st.Edges, m.Vertices, m.Edges)
			}
			if st.InputEdges != uint64(len(edges)) ||
				st.InputEdges != st.SelfLoops+st.Duplicates+uint64(st.Edges) {
				t.Fatalf("stats do not add up: %+v", st)
			}
			// Both orientations must give the published triangle count.
			for _, order := range []Order{OrderDegree, OrderDegeneracy} {
				fwd, _, _, err := Orient(u, order, 0)
				if err != nil {
					t.Fatal(err)
				}
				if got := testgraphs.MarkTriangles(fwd); got != m.Triangles {
					t.Fatalf("%s order: %d triangles, manifest says %d", order, got, m.Triangles)
				}
			}
			if !testlong.Enabled() {
				return
			}
			// Full cross-check on real data: the naive cleaner and
			// both orientations (a long test: minutes under -race).
			g := naiveClean(edges)
			checkAgainstNaive(t, edges, u, st)
			for _, order := range []Order{OrderDegree, OrderDegeneracy} {
				fwd, rank, ost, err := Orient(u, order, 0)
				if err != nil {
					t.Fatal(err)
				}
				checkOrientation(t, g, fwd, rank, ost)
				if order == OrderDegeneracy && ost.MaxOutDegree > ost.Degeneracy {
					t.Fatalf("max out-degree %d above degeneracy %d", ost.MaxOutDegree, ost.Degeneracy)
				}
			}
		})
	}
}
