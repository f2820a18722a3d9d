package kernels

import (
	"sync"

	"github.com/trigrid/trigrid/graph"
)

// transpose returns c's transpose: c.NCols rows, c.NumRows() columns, each
// row sorted. It is a counting sort; with several workers each one counts
// and scatters a contiguous, edge-balanced range of c's rows, so the rows it
// writes stay sorted and the workers never write the same slot.
//
// Per-worker histograms cost 8 bytes per column each; when they would
// outweigh the transposed columns themselves the sort runs on fewer workers.
// Preconditions: c passed checkEnds and its columns are below c.NCols (a
// column out of range faults, which the caller's recover turns into an
// error).
func transpose(c *graph.CSR, workers int) *graph.CSR {
	offsets, cols := transposeWith(c, workers, func() func(u int64, _ uint64) uint32 {
		return func(u int64, _ uint64) uint32 { return uint32(u) }
	})
	return &graph.CSR{Offsets: offsets, Cols: cols, NCols: c.NumRows()}
}

// transposeWith is transpose with a chosen entry: entry(u, p) is stored for
// the edge of row u at position p of c.Cols. Each worker makes its own
// entry with newEntry and calls it for its rows in ascending order, edges
// in row order, so an entry may keep state along a row.
func transposeWith[T any](c *graph.CSR, workers int, newEntry func() func(u int64, p uint64) T) ([]uint64, []T) {
	rows, cols := c.NumRows(), int(c.NCols)
	workers = max(1, min(workers, int(c.NumEdges()/(1<<16)), int(c.NumEdges()/max(int64(cols), 1)/2)))
	bounds := make([]int64, workers+1)
	for w := 1; w < workers; w++ {
		bounds[w] = firstRow(c, uint64(c.NumEdges())*uint64(w)/uint64(workers))
	}
	bounds[workers] = rows

	hist := make([][]uint64, workers)
	parallel(workers, func(w int) {
		h := make([]uint64, cols)
		for _, v := range c.Cols[c.Offsets[bounds[w]]:c.Offsets[bounds[w+1]]] {
			h[v]++
		}
		hist[w] = h
	})
	offsets, entries := make([]uint64, cols+1), make([]T, c.NumEdges())
	var pos uint64
	for v := range cols {
		offsets[v] = pos
		for w := range workers {
			n := hist[w][v]
			hist[w][v] = pos // from here on: worker w's next slot in row v
			pos += n
		}
	}
	offsets[cols] = pos
	parallel(workers, func(w int) {
		next, entry := hist[w], newEntry()
		for u := bounds[w]; u < bounds[w+1]; u++ {
			for p := c.Offsets[u]; p < c.Offsets[u+1]; p++ {
				v := c.Cols[p]
				entries[next[v]] = entry(u, p)
				next[v]++
			}
		}
	})
	return offsets, entries
}

// parallel runs f(0..n-1) on n goroutines and waits. A panic in f is
// re-raised on the caller's goroutine, so the caller's recover sees it.
func parallel(n int, f func(w int)) {
	if n == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	faults := make([]any, n)
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { faults[w] = recover() }()
			f(w)
		}()
	}
	wg.Wait()
	for _, r := range faults {
		if r != nil {
			panic(r)
		}
	}
}
