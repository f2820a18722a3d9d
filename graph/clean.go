package graph

import (
	"errors"
	"fmt"
	"math"
)

// CleanOptions tunes Clean. The zero value is ready to use.
type CleanOptions struct {
	// Workers is the number of goroutines; 0 means GOMAXPROCS. The result
	// does not depend on it.
	Workers int
	// Progress, when not nil, is called with work done out of a fixed total
	// (abstract units, about one per input edge per pass). Calls are
	// serialised and throttled; the last one has done == total.
	Progress func(done, total int64)
}

// CleanStats says what Clean removed and what is left. Every count refers to
// the input as given, so the figures of two tools that read the same file
// can be compared one to one.
type CleanStats struct {
	InputEdges uint64 // edges given
	SelfLoops  uint64 // (u,u) edges dropped
	// Duplicates counts the non-loop input edges beyond the first listing of
	// each undirected edge: {u,v} listed as (u,v) and (v,u) counts 1.
	Duplicates  uint64
	IsolatedIDs uint64 // distinct ids that appear only in self-loops (dropped)
	Vertices    int64  // n after cleaning
	Edges       int64  // undirected edges after cleaning
}

// Undirected is a simple undirected graph over compact ids.
type Undirected struct {
	// Adj is the symmetric adjacency over compact ids 0..n-1: each row
	// sorted, no self-loops, no duplicates; NCols == n.
	Adj *CSR
	// OrigID maps a compact id to the id it had in the input.
	OrigID []uint64
}

// ErrTooManyVertices is returned when the cleaned graph would need compact
// ids of 2^32 or more, which CSR column ids (uint32) cannot hold.
var ErrTooManyVertices = errors.New("graph: too many vertices for 32-bit compact ids")

// maxVertices is the largest n Clean accepts: compact ids are uint32.
const maxVertices = math.MaxUint32

// vertexLimit is maxVertices, lowered by tests to reach the error path
// without 2^32 vertices.
var vertexLimit uint64 = maxVertices

// Clean symmetrises edges, drops self-loops and duplicates, and compacts the
// ids that have at least one non-loop edge to 0..n-1.
//
// Contract (external-memory tools reproduce it bit for bit): compact ids
// are assigned in ascending order of original id among the ids with at least
// one non-loop edge. The result therefore depends only on the set of
// undirected edges, never on their order, direction or multiplicity, nor on
// Workers.
//
// Memory: besides the input (16 bytes per edge) and the result, Clean
// holds 8 bytes per non-loop input edge while it builds rows (both
// directions, partitioned by row bucket; 16 bytes beyond about 2^26
// vertices), and a remap table: dense (4 bytes per id up to the max id,
// used when ids are small) or, for sparse ids, 16 bytes per non-loop edge
// while the endpoints are sorted, then 8 bytes per non-loop edge of
// translated pairs and a hash table of about 24 bytes per vertex.
func Clean(edges []Edge, opts CleanOptions) (*Undirected, CleanStats, error) {
	return clean(edges, opts, cleanPaths{})
}

// Choices Clean makes from the input's shape; tests force each one so that
// every path is compared with the naive cleaner on small inputs.
const (
	pathAuto = iota
	pathDense
	pathSparse
)

type cleanPaths struct {
	remap     int  // pathAuto, pathDense or pathSparse
	perBucket int  // target entries per row bucket; 0 = bucketEntries
	wide      bool // 64-bit bucket entries whatever the size
	// upper lays out each pair once, in the row of its smaller endpoint
	// (the upper triangle), instead of in both directions.
	upper bool
	// wide2 forces 64-bit entries in the forward graph's second build
	// (wide forces them in the first).
	wide2 bool
	// colRangeBits sets the forward graph's column ranges to 1<<bits
	// vertices; 0 = chosen from the size.
	colRangeBits uint
}

func clean(edges []Edge, opts CleanOptions, paths cleanPaths) (*Undirected, CleanStats, error) {
	w := resolveWorkers(opts.Workers)
	st := CleanStats{InputEdges: uint64(len(edges))}
	pm := newProgressMeter(opts.Progress, cleanPasses*int64(len(edges)))

	sc := scanEdges(edges, w)
	pm.set(int64(len(edges)))
	st.SelfLoops = sc.loops
	nonLoop := uint64(len(edges)) - sc.loops

	var (
		src     pairSource
		origID  []uint64
		isolate uint64
		err     error
	)
	dense := useDense(sc.maxID, len(edges))
	switch paths.remap {
	case pathDense:
		dense = sc.maxID < maxVertices
	case pathSparse:
		dense = false
	}
	if dense {
		var table []uint32
		table, origID, isolate, err = denseRemap(edges, sc.maxID, w, pm)
		if err != nil {
			return nil, CleanStats{}, fmt.Errorf("graph: clean: %w", err)
		}
		src = &denseSource{edges: edges, table: table}
	} else {
		var pairs []uint32
		origID, pairs, isolate, err = sparseRemap(edges, sc, w, pm)
		if err != nil {
			return nil, CleanStats{}, fmt.Errorf("graph: clean: %w", err)
		}
		src = &pairsSource{p: pairs}
	}
	pm.set(2 * int64(len(edges)))
	st.IsolatedIDs = isolate

	adj := buildSymmetric(src, len(origID), w, paths, pm)
	src = nil
	st.Vertices = int64(len(origID))
	st.Edges = adj.NumEdges() / 2
	st.Duplicates = nonLoop - uint64(st.Edges)
	pm.set(pm.total)
	return &Undirected{Adj: adj, OrigID: origID}, st, nil
}

// cleanPasses is the progress total in units of input edges: the scan, the
// remap and the three passes of buildSymmetric (count, partition, rows).
const cleanPasses = 5

// scan holds what one read of the input tells: it decides the remap
// strategy and sizes every later allocation.
type scan struct {
	minID, maxID uint64
	loops        uint64
}

func scanEdges(edges []Edge, w int) scan {
	parts := min(w, max(1, len(edges)/(1<<16)))
	res := make([]scan, parts)
	forEachStatic(len(edges), parts, func(p, lo, hi int) {
		s := scan{minID: ^uint64(0)}
		for _, e := range edges[lo:hi] {
			s.minID = min(s.minID, e.U, e.V)
			s.maxID = max(s.maxID, e.U, e.V)
			if e.U == e.V {
				s.loops++
			}
		}
		res[p] = s
	})
	s := scan{minID: ^uint64(0)}
	for _, r := range res {
		s.minID = min(s.minID, r.minID)
		s.maxID = max(s.maxID, r.maxID)
		s.loops += r.loops
	}
	return s
}

// useDense says whether a 4-byte-per-id table up to maxID is cheap next to
// the input (16 bytes per edge): then remapping is one array load per
// endpoint. Larger or sparser id spaces go through a sort of the endpoints.
func useDense(maxID uint64, nEdges int) bool {
	const floor = 1 << 16 // tiny inputs: a 256 KiB table is always fine
	if maxID >= math.MaxUint32 {
		return false
	}
	return maxID < max(4*uint64(nEdges), floor)
}
