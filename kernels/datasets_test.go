package kernels

import (
	"testing"

	"github.com/trigrid/trigrid/internal/testgraphs"
)

// readEdgeList reads an edge list and compacts its ids to 0..n-1 in order
// of first appearance, the dense form forward builds from.
func readEdgeList(t testing.TB, path string) (int, [][2]uint32) {
	t.Helper()
	ids := map[uint64]uint32{}
	id := func(x uint64) uint32 {
		v, ok := ids[x]
		if !ok {
			v = uint32(len(ids))
			ids[x] = v
		}
		return v
	}
	pairs := testgraphs.ReadEdges(t, path)
	edges := make([][2]uint32, len(pairs))
	for i, p := range pairs {
		edges[i] = [2]uint32{id(p[0]), id(p[1])}
	}
	return len(ids), edges
}

func TestDatasets(t *testing.T) {
	for _, d := range testgraphs.Datasets(t) {
		t.Run(d.Name, func(t *testing.T) {
			testgraphs.SkipLarge(t, d)
			s := Whole(forward(readEdgeList(t, d.Path)))
			for _, c := range testCounters(t) {
				if got := countWith(t, c, s); got != d.Triangles {
					t.Errorf("%s = %d, MANIFEST says %d", c.Name(), got, d.Triangles)
				}
			}
		})
	}
}
