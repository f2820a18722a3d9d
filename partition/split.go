package partition

import (
	"context"
	"fmt"
	"sync"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/storage"
)

// Partition is a forward graph cut into P x P blocks held in memory.
type Partition struct {
	Layout *Layout
	// Blocks[i*P+j] is B[i][j]; never nil (empty blocks have all-zero
	// offsets over their rows).
	Blocks []*graph.CSR
}

// P returns the number of groups.
func (p *Partition) P() int { return p.Layout.P }

// Block returns B[i][j].
func (p *Partition) Block(i, j int) *graph.CSR { return p.Blocks[i*p.Layout.P+j] }

// NewLayout builds the layout of scheme for fwd: group sizes for hash,
// balanced boundaries for range.
func NewLayout(fwd *graph.CSR, scheme storage.Scheme, p, workers int) (*Layout, error) {
	switch scheme {
	case storage.SchemeHash:
		return NewHashLayout(fwd.NumRows(), p)
	case storage.SchemeRange:
		b, fold, err := RangeBounds(fwd, p, workers)
		if err != nil {
			return nil, err
		}
		return NewFoldedLayout(fwd.NumRows(), p, fold, b)
	}
	return nil, fmt.Errorf("partition: unknown scheme %v", scheme)
}

// Split cuts the forward graph fwd into P x P blocks with the given scheme,
// using workers goroutines (<= 0: GOMAXPROCS).
func Split(fwd *graph.CSR, scheme storage.Scheme, p, workers int) (*Partition, error) {
	l, err := NewLayout(fwd, scheme, p, workers)
	if err != nil {
		return nil, err
	}
	return SplitLayout(context.Background(), fwd, l, workers)
}

// SplitLayout cuts fwd into the blocks of layout l.
//
// Two passes over the rows, parallel over row chunks: the first counts each
// row's entries per column group straight into the blocks' offset arrays
// (a row of group I belongs to exactly one chunk, so writes never collide),
// prefix sums turn counts into offsets, the second pass copies local column
// ids. Sorted rows stay sorted: local ids are monotone in global ids within
// a group under both schemes (a folded range group concatenates its ranges
// in id order).
func SplitLayout(ctx context.Context, fwd *graph.CSR, l *Layout, workers int) (*Partition, error) {
	n := fwd.NumRows()
	if n != l.N {
		return nil, fmt.Errorf("partition: layout is for %d vertices, graph has %d", l.N, n)
	}
	if fwd.NCols != n {
		return nil, fmt.Errorf("partition: forward graph must be square, has %d rows and %d columns", n, fwd.NCols)
	}
	p := l.P
	part := &Partition{Layout: l, Blocks: make([]*graph.CSR, p*p)}
	for i := range p {
		for j := range p {
			part.Blocks[i*p+j] = &graph.CSR{
				Offsets: make([]uint64, l.GroupSize(i)+1),
				NCols:   l.GroupSize(j),
			}
		}
	}
	workers = clampWorkers(workers)
	chunks := rowChunks(fwd, workers*8)
	run := func(fn func(u int64, gi int, lu uint32)) error {
		return parallelChunks(ctx, chunks, workers, func(c [2]int64) {
			for u := c[0]; u < c[1]; u++ {
				gi, lu := l.Locate(uint32(u))
				fn(u, gi, lu)
			}
		})
	}
	// Pass 1: per-row counts, stored at Offsets[local+1].
	err := run(func(u int64, gi int, lu uint32) {
		row := fwd.Cols[fwd.Offsets[u]:fwd.Offsets[u+1]]
		blocks := part.Blocks[gi*p : gi*p+p]
		for _, v := range row {
			blocks[l.Group(v)].Offsets[lu+1]++
		}
	})
	if err != nil {
		return nil, err
	}
	err = parallelFor(ctx, p*p, workers, func(b int) {
		off := part.Blocks[b].Offsets
		for r := 1; r < len(off); r++ {
			off[r] += off[r-1]
		}
		part.Blocks[b].Cols = make([]uint32, off[len(off)-1])
	})
	if err != nil {
		return nil, err
	}
	// Pass 2: copy local column ids.
	err = run(func(u int64, gi int, lu uint32) {
		row := fwd.Cols[fwd.Offsets[u]:fwd.Offsets[u+1]]
		blocks := part.Blocks[gi*p : gi*p+p]
		var cur [16]uint64
		var curs []uint64
		if p <= len(cur) {
			curs = cur[:p]
		} else {
			curs = make([]uint64, p)
		}
		for j := range p {
			curs[j] = blocks[j].Offsets[lu]
		}
		for _, v := range row {
			gj, lv := l.Locate(v)
			blocks[gj].Cols[curs[gj]] = lv
			curs[gj]++
		}
	})
	if err != nil {
		return nil, err
	}
	return part, nil
}

// parallelChunks runs fn over chunks on workers goroutines, checking ctx
// between chunks.
func parallelChunks(ctx context.Context, chunks [][2]int64, workers int, fn func([2]int64)) error {
	return parallelFor(ctx, len(chunks), workers, func(i int) { fn(chunks[i]) })
}

// parallelFor runs fn(0..n-1) on workers goroutines handing out indices
// dynamically; it stops early and returns ctx's error once ctx is done.
func parallelFor(ctx context.Context, n, workers int, fn func(i int)) error {
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for range min(clampWorkers(workers), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	return nil
}
