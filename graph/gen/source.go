package gen

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/osmem"
	"github.com/trigrid/trigrid/internal/parallel"
)

// chunkEdges is the fixed chunk size. It is part of the output's
// definition: changing it changes the edges a seed gives.
const chunkEdges = 1 << 16

// edgeBytes is the in-memory size of one graph.Edge.
const edgeBytes = uint64(unsafe.Sizeof(graph.Edge{}))

// Source is a generated edge list produced chunk by chunk: chunk c holds
// edges [c*ChunkLen(), min((c+1)*ChunkLen(), Len())) and is the same
// whichever goroutine fills it and in whatever order, so a writer can
// stream a list far larger than memory, in parallel, and get exactly the
// edges RMAT or ER would return. A Source is safe for concurrent use.
type Source struct {
	edges uint64
	maxID uint64
	fill  func(c int, dst []graph.Edge)
}

// Len is the number of edges.
func (s *Source) Len() int64 { return int64(s.edges) }

// ChunkLen is the number of edges of every chunk but the last.
func (s *Source) ChunkLen() int { return chunkEdges }

// MaxIDBound is at least every id the source gives (2^scale - 1 for rmat,
// n - 1 for er); the largest id actually drawn may be smaller.
func (s *Source) MaxIDBound() uint64 { return s.maxID }

// Chunk fills chunk c into buf (which must hold ChunkLen edges) and
// returns the filled part.
func (s *Source) Chunk(c int, buf []graph.Edge) []graph.Edge {
	lo := uint64(c) * chunkEdges
	n := min(uint64(chunkEdges), s.edges-lo)
	dst := buf[:n]
	s.fill(c, dst)
	return dst
}

// materialize fills the whole list in memory, its chunks spread over
// workers goroutines (0 means GOMAXPROCS). A list longer than a slice may
// be, or larger than the memory available (or GOMEMLIMIT), is refused up
// front: a clear message instead of an out-of-memory kill minutes later.
func (s *Source) materialize(what string, workers int) ([]graph.Edge, error) {
	if s.edges > uint64(math.MaxInt)/edgeBytes {
		return nil, fmt.Errorf("gen: %s: %d edges cannot be held in memory", what, s.edges)
	}
	need := s.edges * edgeBytes
	if limit, src := osmem.Available(); limit > 0 && need > limit {
		return nil, fmt.Errorf("gen: %s: %d edges need %.1f GiB, more than the %.1f GiB %s",
			what, s.edges, float64(need)/(1<<30), float64(limit)/(1<<30), src)
	}
	out := make([]graph.Edge, s.edges)
	parallel.Dynamic(len(out), chunkEdges, workers, func(lo, hi int) {
		s.fill(lo/chunkEdges, out[lo:hi])
	})
	return out, nil
}
