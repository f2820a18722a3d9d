package graph_test

import (
	"fmt"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
)

// rmatCache keeps generated inputs across benchmark runs of one binary.
var rmatCache = map[int][]graph.Edge{}

func rmatEdges(b *testing.B, scale int) []graph.Edge {
	b.Helper()
	if es, ok := rmatCache[scale]; ok {
		return es
	}
	es, err := gen.RMAT(scale, 16, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	rmatCache[scale] = es
	return es
}

// sparseIDs spreads rmat's ids over the whole uint64 range (an odd
// multiplier is a bijection), which sends Clean down its sparse-id path.
func sparseIDs(es []graph.Edge) []graph.Edge {
	out := make([]graph.Edge, len(es))
	for i, e := range es {
		out[i] = graph.Edge{U: e.U*0x9e3779b97f4a7c15 + 1, V: e.V*0x9e3779b97f4a7c15 + 1}
	}
	return out
}

// BenchmarkClean reports raw input edges per second.
func BenchmarkClean(b *testing.B) {
	for _, c := range []struct {
		scale  int
		sparse bool
	}{{18, false}, {20, false}, {20, true}} {
		name := fmt.Sprintf("rmat%d", c.scale)
		if c.sparse {
			name += "-sparse-ids"
		}
		b.Run(name, func(b *testing.B) {
			es := rmatEdges(b, c.scale)
			if c.sparse {
				es = sparseIDs(es)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := graph.Clean(es, graph.CleanOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(es))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}

// BenchmarkOrient reports undirected edges per second.
func BenchmarkOrient(b *testing.B) {
	for _, scale := range []int{18, 20} {
		for _, order := range []graph.Order{graph.OrderDegree, graph.OrderDegeneracy} {
			b.Run(fmt.Sprintf("rmat%d/%s", scale, order), func(b *testing.B) {
				u, st, err := graph.Clean(rmatEdges(b, scale), graph.CleanOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, _, _, err := graph.Orient(u, order, 0); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(st.Edges)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			})
		}
	}
}
