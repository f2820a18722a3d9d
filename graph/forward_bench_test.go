package graph_test

import (
	"fmt"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// rmatPairs is rmatEdges as 32-bit pairs of input ids.
func rmatPairs(b *testing.B, scale int) []uint32 {
	b.Helper()
	es := rmatEdges(b, scale)
	p := make([]uint32, 0, 2*len(es))
	for _, e := range es {
		p = append(p, uint32(e.U), uint32(e.V))
	}
	return p
}

// BenchmarkForwardHost times the host's degree-order forward graph from
// 32-bit pairs of input ids, phase by phase: CompactPairsInPlace (clean)
// then ForwardCompacted (order). It reports raw input edges per second of
// both together; each round restores the consumed pairs untimed.
func BenchmarkForwardHost(b *testing.B) {
	for _, scale := range []int{20, 21} {
		b.Run(fmt.Sprintf("rmat%d", scale), func(b *testing.B) {
			src := rmatPairs(b, scale)
			work := make([]uint32, len(src))
			var clean, order float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				copy(work, src)
				b.StartTimer()
				t := b.Elapsed()
				c, err := graph.CompactPairsInPlace(work, graph.CleanOptions{})
				if err != nil {
					b.Fatal(err)
				}
				t1 := b.Elapsed()
				if _, _, _, _, err := graph.ForwardCompacted(c, graph.CleanOptions{}); err != nil {
					b.Fatal(err)
				}
				clean += (t1 - t).Seconds()
				order += (b.Elapsed() - t1).Seconds()
			}
			b.ReportMetric(clean/float64(b.N), "clean-s")
			b.ReportMetric(order/float64(b.N), "order-s")
			b.ReportMetric(float64(len(src)/2)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}
