package kernels

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
)

// benchScales lists the rmat scales BenchmarkCount runs. TRIGRID_BENCH_SCALE
// (one number, e.g. 20) replaces the default, which stays small because
// building a scale 20 graph takes tens of seconds.
func benchScales() []int {
	if s := os.Getenv("TRIGRID_BENCH_SCALE"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return []int{n}
		}
	}
	return []int{16, 18}
}

// BenchmarkCount counts whole degree-ordered forward graphs (Graph500 rmat,
// edge factor 16, and soc-Epinions1 when the datasets are present) with
// each CPU kernel on all cores, reporting forward edges per second. Every
// kernel's count is checked against Reference once per graph.
//
//	go test -run '^$' -bench 'Count/rmat20/(hashcol|auto)$' -count 3 ./kernels  # with TRIGRID_BENCH_SCALE=20
func BenchmarkCount(b *testing.B) {
	type input struct {
		name string
		g    func() *graph.CSR
	}
	var inputs []input
	for _, scale := range benchScales() {
		inputs = append(inputs, input{fmt.Sprintf("rmat%d", scale), func() *graph.CSR { return rmat(scale, 16) }})
	}
	inputs = append(inputs, input{"epinions", func() *graph.CSR {
		path := filepath.Join(testgraphs.Dir(b), "soc-Epinions1.txt")
		if _, err := os.Stat(path); err != nil {
			b.Skipf("dataset %s not available", path)
		}
		return forward(readEdgeList(b, path))
	}})
	for _, in := range inputs {
		var (
			g    *graph.CSR
			want uint64
		)
		for _, name := range []string{"hash", "hashcol", "merge", "auto"} {
			b.Run(in.name+"/"+name, func(b *testing.B) {
				if g == nil {
					g = in.g()
					want = mustReference(b, Whole(g))
				}
				c, err := NewCPU(name, CPUOptions{})
				if err != nil {
					b.Fatal(err)
				}
				var res Result
				for b.Loop() {
					if res, err = c.Count(context.Background(), Whole(g)); err != nil {
						b.Fatal(err)
					}
				}
				if res.Triangles != want {
					b.Fatalf("%s counted %d, reference %d", name, res.Triangles, want)
				}
				b.ReportMetric(float64(g.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			})
		}
	}
}

// BenchmarkCountBlocks counts rmat scale 16 (TRIGRID_BENCH_SCALE replaces
// it) through all P^3 subtasks of
// its P x P blocks, one Count per subtask as a worker would, reporting the
// whole graph's forward edges per second, without and with the clip
// (Subtask.Clip) that the partition's subtasks carry. It is the data
// behind auto's per-subtask choice.
func BenchmarkCountBlocks(b *testing.B) {
	scale := 16
	if s := os.Getenv("TRIGRID_BENCH_SCALE"); s != "" {
		scale = benchScales()[0]
	}
	g := rmat(scale, 16)
	want := mustReference(b, Whole(g))
	for _, p := range []int{4, 8} {
		for _, s := range []scheme{hashScheme(int(g.NumRows()), p), rangeScheme(g, p)} {
			blocks := split(g, p, s, true)
			for _, kc := range []struct {
				name string
				clip bool
			}{{"hash", false}, {"hashcol", false}, {"merge", false}, {"auto", false},
				{"hash", true}, {"hashcol", true}, {"merge", true}, {"auto", true}} {
				name, clip := kc.name, ""
				if kc.clip {
					clip = "clip/"
				}
				b.Run(fmt.Sprintf("P=%d/%s/%s%s", p, s.name, clip, name), func(b *testing.B) {
					c, err := NewCPU(name, CPUOptions{})
					if err != nil {
						b.Fatal(err)
					}
					var sum uint64
					for b.Loop() {
						sum = 0
						for i := range p {
							for j := range p {
								for k := range p {
									st := Subtask{IJ: blocks[i][j], IK: blocks[i][k], JK: blocks[j][k]}
									st.Clip, st.TailOffset = kc.clip, s.offset(j, k)
									res, err := c.Count(context.Background(), st)
									if err != nil {
										b.Fatal(err)
									}
									sum += res.Triangles
								}
							}
						}
					}
					if sum != want {
						b.Fatalf("%s over subtasks = %d, reference %d", name, sum, want)
					}
					b.ReportMetric(float64(g.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
				})
			}
		}
	}
}
