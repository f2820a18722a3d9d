package partition

import (
	"fmt"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
)

// BenchmarkRangeBounds times the range scheme's boundary search
// (RangeBounds: the bucket grid, its cell counts and the search over cuts)
// on R-MAT scale benchScale (default 16; TRIGRID_BENCH_SCALE=14 is the
// graph of docs/performance.md) at several P, reporting the largest block
// over the mean that the bounds give and the median process CPU seconds
// beside the median wall time of a search (a shared machine's load moves
// the wall time, not the CPU time).
func BenchmarkRangeBounds(b *testing.B) {
	edges, err := gen.RMAT(benchScale(), 16, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	fwd, _, _, err := graph.ForwardFromEdges(edges, graph.OrderDegree, 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []int{4, 8, 16, 32} {
		b.Run(fmt.Sprintf("P%d", p), func(b *testing.B) {
			var bounds []uint64
			var fold int
			var cpu, wall []float64
			for b.Loop() {
				c0, t0 := processCPU(), time.Now()
				if bounds, fold, err = RangeBounds(fwd, p, 0); err != nil {
					b.Fatal(err)
				}
				cpu = append(cpu, (processCPU() - c0).Seconds())
				wall = append(wall, time.Since(t0).Seconds())
			}
			b.ReportMetric(median(cpu), "median-cpu-s")
			b.ReportMetric(median(wall), "median-wall-s")
			l, err := NewFoldedLayout(fwd.NumRows(), p, fold, bounds)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(blockRatio(fwd, l, p), "max/mean-block")
			b.ReportMetric(float64(fold), "fold")
		})
	}
}

// blockRatio is the largest block of l over the mean of all p^2 blocks.
func blockRatio(fwd *graph.CSR, l *Layout, p int) float64 {
	m := make([]uint64, p*p)
	for u := range fwd.NumRows() {
		gu := l.Group(uint32(u))
		for _, v := range fwd.Cols[fwd.Offsets[u]:fwd.Offsets[u+1]] {
			m[gu*p+l.Group(v)]++
		}
	}
	var mx, sum uint64
	for _, x := range m {
		mx, sum = max(mx, x), sum+x
	}
	return float64(mx) * float64(p*p) / float64(sum)
}
