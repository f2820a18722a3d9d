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
// row's entries per column group and stores the counts straight into the
// blocks' offset arrays (a row of group I belongs to exactly one chunk, so
// writes never collide), prefix sums turn counts into offsets, the second
// pass copies local column ids. Sorted rows stay sorted: local ids are
// monotone in global ids within a group under both schemes (a folded range
// group concatenates its ranges in id order). Every stage that grows with
// the vertices or the edges runs on the workers: the offset arrays are
// allocated (and so zeroed) by them too.
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
	workers = clampWorkers(workers)
	offs := make([][]uint64, p*p)
	cols := make([][]uint32, p*p)
	err := parallelFor(ctx, p*p, workers, func(b int) {
		offs[b] = make([]uint64, l.GroupSize(b/p)+1)
		part.Blocks[b] = &graph.CSR{Offsets: offs[b], NCols: l.GroupSize(b % p)}
	})
	if err != nil {
		return nil, err
	}
	chunks := rowChunks(fwd, workers*8)
	// Pass 1: per-row counts, stored at Offsets[local+1].
	err = parallelChunks(ctx, chunks, workers, func(c [2]int64) {
		var buf [16]uint64
		cnt := rowBuf(buf[:], p)
		for u := c[0]; u < c[1]; u++ {
			gi, lu := l.Locate(uint32(u))
			clear(cnt)
			l.countRow(fwd.Cols[fwd.Offsets[u]:fwd.Offsets[u+1]], cnt)
			o := offs[gi*p : gi*p+p]
			for j, x := range cnt {
				o[j][lu+1] = x
			}
		}
	})
	if err != nil {
		return nil, err
	}
	err = parallelFor(ctx, p*p, workers, func(b int) {
		off := offs[b]
		for r := 1; r < len(off); r++ {
			off[r] += off[r-1]
		}
		cols[b] = make([]uint32, off[len(off)-1])
		part.Blocks[b].Cols = cols[b]
	})
	if err != nil {
		return nil, err
	}
	// Pass 2: copy local column ids.
	err = parallelChunks(ctx, chunks, workers, func(c [2]int64) {
		var buf [16]uint64
		cur := rowBuf(buf[:], p)
		for u := c[0]; u < c[1]; u++ {
			gi, lu := l.Locate(uint32(u))
			for j := range p {
				cur[j] = offs[gi*p+j][lu]
			}
			l.scatterRow(fwd.Cols[fwd.Offsets[u]:fwd.Offsets[u+1]], cur, cols[gi*p:gi*p+p])
		}
	})
	if err != nil {
		return nil, err
	}
	return part, nil
}

// rowBuf returns buf[:p], or a new slice when p is larger.
func rowBuf(buf []uint64, p int) []uint64 {
	if p <= len(buf) {
		return buf[:p]
	}
	return make([]uint64, p)
}

// countRow adds the number of row's entries in each group to cnt (len P):
// a mask or a division for the hash scheme, rangeOf's table for the range
// scheme (a walk over the ranges along a sorted row mispredicts more).
func (l *Layout) countRow(row []uint32, cnt []uint64) {
	if l.Scheme == storage.SchemeHash {
		if l.shift >= 0 {
			mask := uint32(l.P - 1)
			for _, v := range row {
				cnt[v&mask]++
			}
			return
		}
		p := uint32(l.P)
		for _, v := range row {
			cnt[v%p]++
		}
		return
	}
	for _, v := range row {
		cnt[l.rgroup[l.rangeOf(v)]]++
	}
}

// scatterRow writes the local id of each of row's entries to
// dst[group][cur[group]], advancing cur; groups are found as in countRow.
func (l *Layout) scatterRow(row []uint32, cur []uint64, dst [][]uint32) {
	if l.Scheme == storage.SchemeHash {
		if l.shift >= 0 {
			mask, shift := uint32(l.P-1), uint(l.shift)
			for _, v := range row {
				g := v & mask
				dst[g][cur[g]] = v >> shift
				cur[g]++
			}
			return
		}
		p := uint32(l.P)
		for _, v := range row {
			g := v % p
			dst[g][cur[g]] = v / p
			cur[g]++
		}
		return
	}
	for _, v := range row {
		r := l.rangeOf(v)
		g := l.rgroup[r]
		dst[g][cur[g]] = v - l.rdelta[r]
		cur[g]++
	}
}

// sumInto adds every slice of srcs (nil ones skipped; each at least as
// long as dst) to dst element by element, in spans spread over workers
// goroutines, so that summing per-worker counts is no serial pass.
func sumInto[T uint32 | uint64](dst []T, srcs [][]T, workers int) {
	const span = 1 << 16
	_ = parallelFor(context.Background(), (len(dst)+span-1)/span, workers, func(k int) {
		lo, hi := k*span, min(len(dst), (k+1)*span)
		d := dst[lo:hi]
		for _, src := range srcs {
			if src == nil {
				continue
			}
			for i, x := range src[lo:hi] {
				d[i] += x
			}
		}
	})
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
