package kernels

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
)

// localBenchGraphs keeps the rmat graphs across the -count repetitions of
// BenchmarkCountLocal, which then alternate the modes on one graph.
var localBenchGraphs = map[int]*graph.CSR{}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCountLocal counts whole rmat graphs (benchScales) with the
// total-only auto kernel and with the per-vertex kernel, per vertex and per
// edge, on all cores, reporting forward edges per second and CPU seconds
// per count (which a loaded machine distorts less than wall time):
//
//	TRIGRID_BENCH_SCALE=20 go test -run '^$' -bench CountLocal -count 5 ./kernels
func BenchmarkCountLocal(b *testing.B) {
	for _, scale := range benchScales() {
		g := localBenchGraphs[scale]
		if g == nil {
			g = rmat(scale, 16)
			localBenchGraphs[scale] = g
		}
		want := mustReference(b, Whole(g))
		for _, mode := range []string{"total", "vertex", "edge"} {
			b.Run(fmt.Sprintf("rmat%d/%s", scale, mode), func(b *testing.B) {
				c, err := NewCPU("auto", CPUOptions{})
				if err != nil {
					b.Fatal(err)
				}
				var res Result
				cpu := cpuTime()
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
				cpu = cpuTime() - cpu
				if res.Triangles != want {
					b.Fatalf("%s counted %d, reference %d", mode, res.Triangles, want)
				}
				b.ReportMetric(float64(g.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}
