package gen

import (
	"github.com/trigrid/trigrid/graph"
)

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

// materialize fills the whole list in memory, after checking that it fits.
func (s *Source) materialize(what string, workers int) ([]graph.Edge, error) {
	if err := checkEdgeCount(what, s.edges); err != nil {
		return nil, err
	}
	out := make([]graph.Edge, s.edges)
	fillChunks(out, workers, s.fill)
	return out, nil
}
