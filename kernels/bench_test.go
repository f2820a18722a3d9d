package kernels

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// benchScales lists the rmat scales BenchmarkCount runs; TRIGRID_BENCH_SCALE
// (comma-free, e.g. "20") overrides the default, because building a scale
// 20 graph takes a while.
func benchScales() []int {
	if s := os.Getenv("TRIGRID_BENCH_SCALE"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return []int{n}
		}
	}
	return []int{16, 18}
}

// BenchmarkCount counts degree-ordered rmat graphs (edge factor 16) with each
// CPU kernel on all cores, reporting input edges per second. The first
// count is checked against the other kernels' agreement in TestRmatSmall and
// against the reference here, once per graph.
func BenchmarkCount(b *testing.B) {
	for _, scale := range benchScales() {
		g := rmat(scale, 16)
		var want uint64
		for _, name := range []string{"hash", "hashcol", "merge", "auto"} {
			b.Run(fmt.Sprintf("rmat%d/%s", scale, name), func(b *testing.B) {
				c, err := NewCPU(name, CPUOptions{})
				if err != nil {
					b.Fatal(err)
				}
				var res Result
				for b.Loop() {
					res, err = c.Count(context.Background(), Whole(g))
					if err != nil {
						b.Fatal(err)
					}
				}
				if want == 0 {
					want = mustReference(b, Whole(g))
				}
				if res.Triangles != want {
					b.Fatalf("%s counted %d, reference %d", name, res.Triangles, want)
				}
				b.ReportMetric(float64(g.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
				b.ReportMetric(float64(res.Triangles), "triangles")
			})
		}
	}
}
