package simulate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/trigrid/trigrid/graph"
)

// Chunks is a generated edge list read chunk by chunk (gen.Source): chunk
// c holds the same edges whenever it is asked for.
type Chunks interface {
	Len() int64
	ChunkLen() int
	MaxIDBound() uint64
	Chunk(c int, buf []graph.Edge) []graph.Edge
}

// bucketBits is log2 of the buckets the edge keys are spread over before
// each bucket is sorted on its own.
const bucketBits = 12

// StatsFromChunks computes the block statistics of a generated graph
// without building it: the raw edges become one 64-bit key each (the
// smaller id above the larger), are sorted and deduplicated (self-loops
// dropped) to the simple undirected graph; the vertices that keep an
// edge are ranked by (degree, id) ascending, as graph.Orient's degree
// order ranks them (isolated ids drop out as cleaning compacts them);
// and each edge is counted in the fine block of its two ranks, lower
// first. It holds two keys per raw edge (16 bytes) and three words per
// id, a fraction of what building the forward graph takes, so a graph
// of billions of edges fits a machine that could not partition it.
// Tests check it against ComputeBlockStats of graph.ForwardFromEdges.
func StatsFromChunks(ctx context.Context, src Chunks, fineP, workers int, source string) (*BlockStats, error) {
	if fineP < 1 || fineP > 4096 {
		return nil, fmt.Errorf("simulate: fine P %d: want 1 to 4096", fineP)
	}
	if src.MaxIDBound() >= math.MaxUint32 {
		return nil, fmt.Errorf("simulate: %s: ids up to %d do not fit 32 bits", source, src.MaxIDBound())
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	keys, err := bucketKeys(ctx, src, workers)
	if err != nil {
		return nil, err
	}
	n := int64(src.MaxIDBound()) + 1
	deg := degrees(keys, n, workers)
	rank, vertices := degreeRank(deg)
	deg = nil
	b := &BlockStats{Kind: BlockStatsKind, Format: BlockStatsFormat, Source: source, Vertices: vertices, FineP: fineP,
		BlockEdges: make([]int64, fineP*fineP)}
	hs := make([][]int64, workers) // one histogram per goroutine
	eachBucketOf(len(keys), workers, func(w, x int) {
		if hs[w] == nil {
			hs[w] = make([]int64, fineP*fineP)
		}
		h := hs[w]
		for _, k := range keys[x] {
			a, c := rank[k>>32], rank[uint32(k)]
			if a > c {
				a, c = c, a
			}
			h[int(a%uint32(fineP))*fineP+int(c%uint32(fineP))]++
		}
	})
	for _, h := range hs {
		for i, v := range h {
			b.BlockEdges[i] += v
			b.Edges += v
		}
	}
	return b, ctx.Err()
}

// eachBucket runs fn over buckets 0..n-1 on workers goroutines, taking
// them from a shared cursor.
func eachBucket(n, workers int, fn func(x int)) {
	eachBucketOf(n, workers, func(_, x int) { fn(x) })
}

// eachBucketOf is eachBucket telling fn which goroutine (0..workers-1)
// runs it.
func eachBucketOf(n, workers int, fn func(w, x int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(workers, n) {
		wg.Go(func() {
			for x := int(next.Add(1) - 1); x < n; x = int(next.Add(1) - 1) {
				fn(w, x)
			}
		})
	}
	wg.Wait()
}

// bucketKeys generates every chunk, keys each edge other than a
// self-loop as min << 32 | max, spreads the keys over buckets by their
// smaller id's top bits, and sorts and deduplicates each bucket: the
// buckets concatenated are the sorted unique undirected edges.
func bucketKeys(ctx context.Context, src Chunks, workers int) ([][]uint64, error) {
	chunks := int((src.Len() + int64(src.ChunkLen()) - 1) / int64(src.ChunkLen()))
	shift := 0
	for (src.MaxIDBound() >> shift) >= 1<<bucketBits {
		shift++
	}
	nb := int(src.MaxIDBound()>>shift) + 1
	raw := make([]uint64, src.Len())
	counts := make([][]int32, chunks) // per chunk, keys per bucket (a chunk holds < 2^31)
	eachBucket(chunks, workers, func(c int) {
		if ctx.Err() != nil {
			return
		}
		buf := make([]graph.Edge, src.ChunkLen())
		es := src.Chunk(c, buf)
		out := raw[int64(c)*int64(src.ChunkLen()):]
		cnt := make([]int32, nb)
		for i, e := range es {
			u, v := min(e.U, e.V), max(e.U, e.V)
			if u == v {
				out[i] = math.MaxUint64
				continue
			}
			out[i] = u<<32 | v
			cnt[u>>shift]++
		}
		counts[c] = cnt
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Bucket x of chunk c starts at the keys of buckets < x in every
	// chunk plus bucket x in chunks < c.
	starts := make([][]int64, chunks)
	bucketStart := make([]int64, nb+1)
	var at int64
	for x := range nb {
		bucketStart[x] = at
		for c := range chunks {
			if starts[c] == nil {
				starts[c] = make([]int64, nb)
			}
			starts[c][x] = at
			at += int64(counts[c][x])
		}
	}
	bucketStart[nb] = at
	sorted := make([]uint64, at)
	eachBucket(chunks, workers, func(c int) {
		pos := starts[c]
		lo := int64(c) * int64(src.ChunkLen())
		for _, k := range raw[lo:min(lo+int64(src.ChunkLen()), int64(len(raw)))] {
			if k == math.MaxUint64 {
				continue
			}
			x := (k >> 32) >> shift
			sorted[pos[x]] = k
			pos[x]++
		}
	})
	raw = nil
	buckets := make([][]uint64, nb)
	eachBucket(nb, workers, func(x int) {
		b := sorted[bucketStart[x]:bucketStart[x+1]]
		slices.Sort(b)
		buckets[x] = slices.Compact(b)
	})
	return buckets, ctx.Err()
}

// degrees counts each id's edges in the unique edge list.
func degrees(buckets [][]uint64, n int64, workers int) []uint32 {
	parts := make([][]uint32, workers)
	eachBucketOf(len(buckets), workers, func(w, x int) {
		if parts[w] == nil {
			parts[w] = make([]uint32, n)
		}
		d := parts[w]
		for _, k := range buckets[x] {
			d[k>>32]++
			d[uint32(k)]++
		}
	})
	deg := make([]uint32, n)
	for _, d := range parts {
		for i, v := range d {
			deg[i] += v
		}
	}
	return deg
}

// degreeRank ranks the ids of positive degree by (degree, id) ascending
// (a counting sort by degree, ids ascending within one) and returns the
// ranks and how many ids have one; an isolated id gets no rank.
func degreeRank(deg []uint32) ([]uint32, int64) {
	maxDeg := slices.Max(deg)
	next := make([]uint32, int64(maxDeg)+2)
	for _, d := range deg {
		if d > 0 {
			next[d+1]++
		}
	}
	for d := 1; d < len(next); d++ {
		next[d] += next[d-1]
	}
	rank := make([]uint32, len(deg))
	for id, d := range deg {
		if d > 0 {
			rank[id] = next[d]
			next[d]++
		}
	}
	return rank, int64(next[len(next)-1])
}
