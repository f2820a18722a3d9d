package storage

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/trigrid/trigrid/graph"
)

// benchScale is the rmat scale of the benchmark graph: 2^17 vertices,
// about 1.7M forward edges, big enough for realistic gap statistics and
// small enough to build in a second on a shared core.
const benchScale = 17

var benchGraph = sync.OnceValue(func() *graph.CSR { return rmatForward(benchScale, 16, 42) })

// benchBlock is block (0,1) of a P = 2 hash partition, a typical
// off-diagonal block.
var benchBlock = sync.OnceValue(func() *graph.CSR { return hashBlocks(benchGraph(), 2)[0][1] })

func BenchmarkEncodeShard(b *testing.B) {
	blk := benchBlock()
	raw := rawCSRBytes(blk)
	b.SetBytes(raw)
	var size int
	for b.Loop() {
		data, err := EncodeShard(testHeader(), blk)
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size)/float64(raw), "ratio")
	b.ReportMetric(float64(size)/float64(blk.NumEdges()), "B/edge")
}

// BenchmarkDecodeShard reports MB/s of CSR produced (u64 offsets + u32
// columns), the unit the decode target is stated in.
func BenchmarkDecodeShard(b *testing.B) {
	blk := benchBlock()
	data, err := EncodeShard(testHeader(), blk)
	if err != nil {
		b.Fatal(err)
	}
	raw := rawCSRBytes(blk)
	b.SetBytes(raw)
	for b.Loop() {
		if _, _, err := DecodeShard("bench.tgs", data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data))/float64(raw), "ratio")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(blk.NumEdges()), "ns/edge")
}

// BenchmarkLevels compares zstd levels on the varint sections: size and
// decode speed. The chosen level is zstdLevel.
func BenchmarkLevels(b *testing.B) {
	blk := benchBlock()
	deg, err := encodeDegrees(blk)
	if err != nil {
		b.Fatal(err)
	}
	cols, err := encodeCols(blk)
	if err != nil {
		b.Fatal(err)
	}
	raw := rawCSRBytes(blk)
	_, dec, err := codecs()
	if err != nil {
		b.Fatal(err)
	}
	for _, lv := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression} {
		enc, err := newEncoder(lv)
		if err != nil {
			b.Fatal(err)
		}
		cd, cc := enc.EncodeAll(deg, nil), enc.EncodeAll(cols, nil)
		b.Run("encode/"+lv.String(), func(b *testing.B) {
			b.SetBytes(raw)
			for b.Loop() {
				enc.EncodeAll(deg, nil)
				enc.EncodeAll(cols, nil)
			}
			b.ReportMetric(float64(len(cd)+len(cc)+headerSize)/float64(raw), "ratio")
		})
		b.Run("decode/"+lv.String(), func(b *testing.B) {
			b.SetBytes(raw)
			for b.Loop() {
				if _, err := dec.DecodeAll(cd, make([]byte, 0, len(deg))); err != nil {
					b.Fatal(err)
				}
				if _, err := dec.DecodeAll(cc, make([]byte, 0, len(cols))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("varint-only", func(b *testing.B) {
		b.SetBytes(raw)
		for b.Loop() {
			offs, err := decodeDegrees("b", deg, uint64(blk.NumRows()), uint64(blk.NumEdges()))
			if err != nil {
				b.Fatal(err)
			}
			if err := decodeCols("b", cols, offs, make([]uint32, blk.NumEdges()), uint64(blk.NCols)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(deg)+len(cols)+headerSize)/float64(raw), "ratio")
	})
}

// BenchmarkDecodeVsCount decodes every shard of a P x P partition of the
// benchmark graph and reports that time over the time of counting the
// whole graph's triangles with a merge kernel: counting through shards
// costs (1 + decode/count) times the whole-graph count, target <= 1.5.
func BenchmarkDecodeVsCount(b *testing.B) {
	g := benchGraph()
	start := time.Now()
	tri := countForward(g)
	countTime := time.Since(start)
	for _, p := range []int{1, 4} {
		var shards [][]byte
		for i, row := range hashBlocks(g, p) {
			for j, blk := range row {
				data, err := EncodeShard(ShardHeader{Scheme: SchemeHash, P: uint32(p), I: uint32(i), J: uint32(j)}, blk)
				if err != nil {
					b.Fatal(err)
				}
				shards = append(shards, data)
			}
		}
		b.Run(fmt.Sprintf("P=%d", p), func(b *testing.B) {
			for b.Loop() {
				for _, data := range shards {
					if _, _, err := DecodeShard("b", data); err != nil {
						b.Fatal(err)
					}
				}
			}
			perOp := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(perOp)/float64(countTime), "decode/count")
			b.ReportMetric(float64(countTime.Milliseconds()), "count-ms")
			b.ReportMetric(float64(tri), "triangles")
		})
	}
}
