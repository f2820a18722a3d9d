package gen

import (
	"github.com/trigrid/trigrid/graph"
	"runtime"
	"sync"
	"sync/atomic"
)

// chunkEdges is the fixed chunk size. It is part of the output's
// definition: changing it changes the edges a seed gives.
const chunkEdges = 1 << 16

// fillChunks calls fill(c, out[c*chunkEdges:...]) for every chunk, spread
// dynamically over workers goroutines (0 means GOMAXPROCS).
func fillChunks(out []graph.Edge, workers int, fill func(c int, dst []graph.Edge)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunks := (len(out) + chunkEdges - 1) / chunkEdges
	workers = min(workers, chunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo := c * chunkEdges
				fill(c, out[lo:min(lo+chunkEdges, len(out))])
			}
		}()
	}
	wg.Wait()
}
