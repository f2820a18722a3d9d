package kernels

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trigrid/trigrid/graph"
)

// rangeCounter counts the triangles closed by the edges with positions in
// [lo, hi) of the driving CSR's Cols (IJ, or its transpose). A chunk may start or end inside a row, so that one
// hub row cannot make one worker the straggler of a whole subtask.
// Each worker owns one rangeCounter (and its scratch); they are never shared.
type rangeCounter interface {
	countRange(lo, hi uint64) uint64
}

// progressInterval throttles CPUOptions.Progress.
const progressInterval = 250 * time.Millisecond

// Chunk sizes, in edges of the driving CSR. Chunks are carved from the edge space, not the
// row space: IJ.Offsets is already the prefix sum of edges per row, and rmat
// rows are so skewed that equal row counts make very unequal chunks. Many
// chunks per worker let the atomic cursor absorb the remaining skew (the
// work per edge also varies with the lengths of the two lists).
const (
	chunksPerWorker = 64
	minChunkEdges   = 1 << 10
	maxChunkEdges   = 1 << 16
)

// chunkEdges picks the chunk size for edges edges split over workers.
func chunkEdges(edges int64, workers int) uint64 {
	c := edges / int64(workers*chunksPerWorker)
	return uint64(min(max(c, minChunkEdges), maxChunkEdges))
}

// resolveWorkers maps the Workers option to a goroutine count.
func resolveWorkers(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// runParallel counts a subtask with dynamic scheduling: workers take chunks
// of an edge space of total edges (IJ's, or its transpose's) from an
// atomic cursor until none are left, ctx is cancelled or a worker failed,
// each summing into a local uint64 that is written once at the end (no
// shared cache line is written in the loop). newWorker is called once per
// worker goroutine, on that goroutine. A runtime fault in a worker
// (malformed CSR) becomes an error naming kernel.
func runParallel(ctx context.Context, kernel string, total int64, workers int,
	progress func(done, total int64), newWorker func() rangeCounter) (Result, error) {
	workers = resolveWorkers(workers)
	chunk := chunkEdges(total, workers)
	nchunks := (uint64(total) + chunk - 1) / chunk
	workers = int(min(uint64(workers), max(nchunks, 1)))

	var (
		cursor atomic.Uint64 // next chunk index
		done   atomic.Int64  // edges finished, for progress
		counts = make([]uint64, workers)
		faults = make([]error, workers)
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	stopProgress := startProgress(progress, &done, total)
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					faults[w] = fmt.Errorf("kernels: %s: malformed subtask: %v", kernel, r)
					failed.Store(true)
				}
			}()
			rc := newWorker()
			var n uint64
			for ctx.Err() == nil && !failed.Load() {
				c := cursor.Add(1) - 1
				if c >= nchunks {
					break
				}
				lo := c * chunk
				hi := min(lo+chunk, uint64(total))
				n += rc.countRange(lo, hi)
				done.Add(int64(hi - lo))
			}
			counts[w] = n
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	for _, err := range faults {
		if err != nil {
			return Result{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("kernels: %s: %w", kernel, err)
	}
	var sum uint64
	for _, n := range counts {
		sum += n
	}
	return Result{Triangles: sum, KernelTime: elapsed}, nil
}

// startProgress reports progress from one goroutine every progressInterval
// and once more, with the final figure, when the returned stop is called.
// Reporting from a single goroutine means callbacks need no locking.
func startProgress(progress func(done, total int64), done *atomic.Int64, total int64) (stop func()) {
	if progress == nil {
		return func() {}
	}
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(progressInterval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				progress(done.Load(), total)
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
		progress(done.Load(), total)
	}
}

// firstRow returns the row that holds edge position pos of c: the first row
// whose end offset is above pos.
func firstRow(c *graph.CSR, pos uint64) int64 { return int64(firstRowOf(c.Offsets, pos)) }

// firstRowOf is firstRow over bare offsets.
func firstRowOf(offsets []uint64, pos uint64) int {
	return sort.Search(len(offsets)-1, func(r int) bool { return offsets[r+1] > pos })
}
