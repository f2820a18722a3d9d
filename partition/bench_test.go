package partition

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/storage"
)

// benchScale is the R-MAT scale of the benchmarks: TRIGRID_BENCH_SCALE,
// default 16 so `go test -bench .` stays quick; 22 is the target size.
func benchScale() int {
	if s, err := strconv.Atoi(os.Getenv("TRIGRID_BENCH_SCALE")); err == nil && s > 0 {
		return s
	}
	return 16
}

func BenchmarkSplit(b *testing.B) {
	edges, err := gen.RMAT(benchScale(), 16, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	fwd, _, _, err := graph.ForwardFromEdges(edges, graph.OrderDegree, 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, sc := range schemes {
		b.Run(fmt.Sprintf("%v/P4", sc), func(b *testing.B) {
			var bal Balance
			for b.Loop() {
				part, err := Split(fwd, sc, 4, 0)
				if err != nil {
					b.Fatal(err)
				}
				bal = part.Balance()
			}
			b.ReportMetric(float64(fwd.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			b.ReportMetric(bal.BlockRatio, "max/mean-block")
		})
	}
}

// BenchmarkPartitionInMemory times PartitionInMemory (the split of `count
// --partitions`) alone, with the layout (the range scheme's boundary search
// included), reporting the median process CPU seconds of a run beside the median wall time so
// that runs with -cpu 1,2 show the parallel scaling on a shared machine.
func BenchmarkPartitionInMemory(b *testing.B) {
	edges, err := gen.RMAT(benchScale(), 16, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	fwd, _, _, err := graph.ForwardFromEdges(edges, graph.OrderDegree, 0)
	if err != nil {
		b.Fatal(err)
	}
	edges = nil
	for _, sc := range schemes {
		b.Run(fmt.Sprintf("%v/P4", sc), func(b *testing.B) {
			var cpu, wall []float64
			for b.Loop() {
				c0, t0 := processCPU(), time.Now()
				if _, err := PartitionInMemory(context.Background(), fwd, Config{Scheme: sc, P: 4}); err != nil {
					b.Fatal(err)
				}
				cpu = append(cpu, (processCPU() - c0).Seconds())
				wall = append(wall, time.Since(t0).Seconds())
			}
			b.ReportMetric(median(cpu), "median-cpu-s")
			b.ReportMetric(median(wall), "median-wall-s")
			b.ReportMetric(float64(fwd.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}

// median returns the median of x (x is reordered).
func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	slices.Sort(x)
	return x[len(x)/2]
}

// BenchmarkPartitionFile runs the whole pipeline from a binary edge file,
// in memory and external (1 GiB limit), for both schemes.
func BenchmarkPartitionFile(b *testing.B) {
	edges, err := gen.RMAT(benchScale(), 16, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "g.bin")
	if err := edgeio.WriteFile(path, edges, edgeio.WriteOptions{Format: edgeio.FormatBin}); err != nil {
		b.Fatal(err)
	}
	edges = nil
	for _, c := range []struct {
		sc  storage.Scheme
		mem int64
	}{{storage.SchemeHash, 0}, {storage.SchemeHash, 1 << 30}, {storage.SchemeRange, 0}, {storage.SchemeRange, 1 << 30}} {
		sc, mem := c.sc, c.mem
		b.Run(fmt.Sprintf("%v/P4/mem%d", sc, mem>>20), func(b *testing.B) {
			var sum *Summary
			for b.Loop() {
				st, err := storage.Open("file://" + b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				sum, err = PartitionFile(context.Background(), path, edgeio.ReadOptions{}, st,
					Config{Scheme: sc, P: 4, MemLimit: mem, TempDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sum.Graph.Edges)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			b.ReportMetric(sum.Ratio, "shard/raw")
			b.ReportMetric(sum.Balance.BlockRatio, "max/mean-block")
			b.Logf("stages %+v", sum.Stages)
		})
	}
}
