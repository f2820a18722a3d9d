package gen

import (
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/parallel"
)

// chunkEdges is the fixed chunk size. It is part of the output's
// definition: changing it changes the edges a seed gives.
const chunkEdges = 1 << 16

// fillChunks calls fill(c, out[c*chunkEdges:...]) for every chunk, spread
// dynamically over workers goroutines (0 means GOMAXPROCS).
func fillChunks(out []graph.Edge, workers int, fill func(c int, dst []graph.Edge)) {
	parallel.Dynamic(len(out), chunkEdges, workers, func(lo, hi int) {
		fill(lo/chunkEdges, out[lo:hi])
	})
}
