package kernels

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkCountLocal counts whole rmat graphs (benchScales) with the
// total-only auto kernel and with the per-vertex kernel, per vertex and per
// edge, on all cores, reporting forward edges per second:
//
//	TRIGRID_BENCH_SCALE=20 go test -run '^$' -bench CountLocal -count 5 ./kernels
func BenchmarkCountLocal(b *testing.B) {
	for _, scale := range benchScales() {
		g := rmat(scale, 16)
		want := mustReference(b, Whole(g))
		for _, mode := range []string{"total", "vertex", "edge"} {
			b.Run(fmt.Sprintf("rmat%d/%s", scale, mode), func(b *testing.B) {
				c, err := NewCPU("auto", CPUOptions{})
				if err != nil {
					b.Fatal(err)
				}
				var res Result
				for b.Loop() {
					switch mode {
					case "total":
						res, err = c.Count(context.Background(), Whole(g))
					default:
						vs := make([]uint64, g.NumRows())
						acc := &Local{VI: vs, VJ: vs, VK: vs}
						if mode == "edge" {
							es := make([]uint64, g.NumEdges())
							acc.EIJ, acc.EIK, acc.EJK = es, es, es
						}
						res, err = c.(LocalCounter).CountLocal(context.Background(), Whole(g), acc)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if res.Triangles != want {
					b.Fatalf("%s counted %d, reference %d", mode, res.Triangles, want)
				}
				b.ReportMetric(float64(g.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			})
		}
	}
}
