// Package parallel holds the one loop shape the graph-building code shares:
// a range cut into fixed chunks that goroutines take from an atomic cursor.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Dynamic runs fn(lo, hi) over [0, n) in chunks of chunk items handed out
// from an atomic cursor to workers goroutines (0 or less means GOMAXPROCS).
// Dynamic scheduling absorbs the skew of power-law rows and the noise of a
// shared machine; fn must not depend on which goroutine runs a chunk.
// Chunk boundaries depend only on n and chunk, so work keyed by chunk
// (lo / chunk) is the same whatever the number of workers.
func Dynamic(n, chunk, workers int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if chunk < 1 {
		chunk = 1
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunks := (n + chunk - 1) / chunk
	workers = min(workers, chunks)
	if workers <= 1 {
		for lo := 0; lo < n; lo += chunk {
			fn(lo, min(lo+chunk, n))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo := c * chunk
				fn(lo, min(lo+chunk, n))
			}
		}()
	}
	wg.Wait()
}
