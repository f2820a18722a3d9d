package edgeio

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/gen"
)

// benchText is a SNAP-like edge list: tab-separated ids below 2^22.
func benchText(b *testing.B, nEdges int) []byte {
	rng := rand.New(rand.NewPCG(1, 1))
	var buf bytes.Buffer
	if err := Write(&buf, randomEdges(rng, nEdges, 1<<22), WriteOptions{Format: FormatTSV}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkParse measures the single-core parser on one chunk: the figure
// that multiplies by the core count.
func BenchmarkParse(b *testing.B) {
	data := benchText(b, 1<<20)
	p := &lineParser{}
	var res chunkResult
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		res.reset()
		p.parse(data, &res)
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(len(data))*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s/core")
	b.ReportMetric(float64(len(res.edges))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
}

// BenchmarkRead measures the whole pipeline (chunking, parallel parse,
// ordered delivery, collection) on all cores, with LF and CRLF line ends.
func BenchmarkRead(b *testing.B) {
	lf := benchText(b, 1<<22)
	crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
	for _, w := range []int{1, 0} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) { benchRead(b, lf, w) })
		b.Run(fmt.Sprintf("crlf/workers=%d", w), func(b *testing.B) { benchRead(b, crlf, w) })
	}
}

func benchRead(b *testing.B, data []byte, w int) {
	b.SetBytes(int64(len(data)))
	var n int
	cpu := processCPU()
	for b.Loop() {
		e, _, err := Read(context.Background(), bytes.NewReader(data), "b.tsv", ReadOptions{Workers: w})
		if err != nil {
			b.Fatal(err)
		}
		n = len(e)
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
}

// reportCPU reports the process CPU time per operation since cpu, which
// other processes on a shared machine disturb far less than wall time.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(processCPU()-cpu)/1e6/float64(b.N), "cpu-ms/op")
}

// BenchmarkReadFile reads an RMAT edge list (Graph500 scale 18, edge
// factor 16: 4Mi edges, as `trigrid gen rmat` writes it) from a file into
// one slice, as counting does.
func BenchmarkReadFile(b *testing.B) {
	edges, err := gen.RMAT(18, 16, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "rmat18.txt")
	if err := WriteFile(path, edges, WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		got, _, err := ReadFile(context.Background(), path, ReadOptions{})
		if err != nil || len(got) != len(edges) {
			b.Fatalf("%d edges, %v", len(got), err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(len(edges))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
}

func BenchmarkReadBinary(b *testing.B) {
	edges := randomEdges(rand.New(rand.NewPCG(2, 2)), 1<<22, 1<<22)
	for _, w := range []int{4, 8} {
		var buf bytes.Buffer
		if err := Write(&buf, edges, WriteOptions{Format: FormatBin, IDWidth: w}); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		b.Run(fmt.Sprintf("width=%d", w), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				n := 0
				_, err := streamReader(context.Background(), bytes.NewReader(data), "b.bin", -1, nil, ReadOptions{}, func(e []graph.Edge) error {
					n += len(e)
					return nil
				})
				if err != nil || n != len(edges) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(edges))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}

func BenchmarkWriteText(b *testing.B) {
	edges := randomEdges(rand.New(rand.NewPCG(3, 3)), 1<<22, 1<<22)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := Write(&buf, edges, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportMetric(float64(len(edges))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
}

// BenchmarkCRReader measures the line-end conversion every text read goes
// through, on one core: it must stay far faster than parsing.
func BenchmarkCRReader(b *testing.B) {
	lf := benchText(b, 1<<20)
	crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
	cr := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r"))
	for _, tc := range []struct {
		name string
		data []byte
	}{{"lf", lf}, {"crlf", crlf}, {"cr", cr}} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, defaultChunkSize)
			b.SetBytes(int64(len(tc.data)))
			cpu := processCPU()
			for b.Loop() {
				r := newCRReader(bytes.NewReader(tc.data))
				for {
					if _, err := r.Read(buf); err != nil {
						break
					}
				}
			}
			reportCPU(b, cpu)
		})
	}
}
