package gpu

import (
	"fmt"
	"sort"
	"sync"
)

// rope is a sequence of items that lies in parts of one host array (the
// base), in order: what an orientation in pieces writes back over the
// spans it read, without a second host array. segs holds, for each part,
// its first item's index in the base and its item count, as the spans of
// tg_pieces_* do; ends[i] is the number of items in parts 0..i.
type rope struct {
	segs []uint64
	ends []uint64
}

// span is the rope of count items of the base from first.
func span(first, count uint64) rope {
	var r rope
	r.add(first, count)
	return r
}

// add appends count items of the base from first (none: nothing).
func (r *rope) add(first, count uint64) {
	if count == 0 {
		return
	}
	if k := len(r.segs); k > 0 && r.segs[k-2]+r.segs[k-1] == first {
		r.segs[k-1] += count
		r.ends[len(r.ends)-1] += count
		return
	}
	r.segs = append(r.segs, first, count)
	r.ends = append(r.ends, r.len()+count)
}

// len is the rope's number of items.
func (r *rope) len() uint64 {
	if len(r.ends) == 0 {
		return 0
	}
	return r.ends[len(r.ends)-1]
}

// index is the base index of the rope's item i (i < len).
func (r *rope) index(i uint64) uint64 {
	k := sort.Search(len(r.ends), func(k int) bool { return r.ends[k] > i })
	return r.segs[2*k] + i - (r.ends[k] - r.segs[2*k+1])
}

// spans appends to dst the spans of the base that hold the rope's items
// from .. from+count-1, in order.
func (r *rope) spans(dst []uint64, from, count uint64) []uint64 {
	if count == 0 {
		return dst
	}
	k := sort.Search(len(r.ends), func(k int) bool { return r.ends[k] > from })
	for ; count > 0; k++ {
		start := r.ends[k] - r.segs[2*k+1]
		off := from - start
		n := min(r.segs[2*k+1]-off, count)
		dst = append(dst, r.segs[2*k]+off, n)
		from += n
		count -= n
	}
	return dst
}

// filled is the rope of the first n words (units of size words an item:
// 1 for items, 2 for 32-bit words) written back over spans, each span
// filled before the next, as tg_pieces_sort and tg_pieces_csr write back;
// its parts are in those units of the base.
func filled(spans []uint64, n, size uint64) rope {
	var r rope
	for i := 0; i+1 < len(spans) && n > 0; i += 2 {
		k := min(spans[i+1]*size, n)
		r.add(spans[i]*size, k)
		n -= k
	}
	return r
}

// compactWords moves the m words of the rope cols (parts in words of
// base, disjoint; m at most half of base) to base[:m], in the rope's order,
// and returns base[:m:m]. The parts inside base[:m] first move to the
// gaps of base[m:], which hold at least as many words (base[m:] has room
// for every part, and its parts fill no more of it than the other parts'
// words), then every part moves to its place in base[:m]; each step's
// copies are disjoint and go on workers goroutines.
func compactWords(base []uint32, cols rope, workers int) ([]uint32, error) {
	m := cols.len()
	if m > uint64(len(base))/2 {
		return nil, fmt.Errorf("%d columns, more than half the %d words they lie in", m, len(base))
	}
	// Parts in order, cut at m.
	type part struct{ at, n uint64 }
	var parts []part
	for i := 0; i < len(cols.segs); i += 2 {
		at, n := cols.segs[i], cols.segs[i+1]
		if at < m && at+n > m {
			parts = append(parts, part{at, m - at}, part{m, at + n - m})
			continue
		}
		parts = append(parts, part{at, n})
	}
	// The gaps of base[m:], in address order.
	above := make([]part, 0, len(parts))
	for _, p := range parts {
		if p.at >= m {
			above = append(above, p)
		}
	}
	sort.Slice(above, func(i, j int) bool { return above[i].at < above[j].at })
	var gaps []part
	at := m
	for _, p := range above {
		if p.at > at {
			gaps = append(gaps, part{at, p.at - at})
		}
		at = p.at + p.n
	}
	if top := uint64(len(base)); top > at {
		gaps = append(gaps, part{at, top - at})
	}
	var moves []move
	var placed []part
	g := 0
	for _, p := range parts {
		if p.at >= m {
			placed = append(placed, p)
			continue
		}
		for p.n > 0 {
			k := min(p.n, gaps[g].n)
			moves = append(moves, move{dst: gaps[g].at, src: p.at, n: k})
			placed = append(placed, part{gaps[g].at, k})
			gaps[g].at += k
			gaps[g].n -= k
			if gaps[g].n == 0 {
				g++
			}
			p.at += k
			p.n -= k
		}
	}
	copyAll(base, moves, workers)
	moves = moves[:0]
	var to uint64
	for _, p := range placed {
		moves = append(moves, move{dst: to, src: p.at, n: p.n})
		to += p.n
	}
	copyAll(base, moves, workers)
	return base[:m:m], nil
}

// move is a copy of n words of an array from src to dst.
type move struct{ dst, src, n uint64 }

// copyAll does the moves, which neither overlap each other's nor their
// own words, on workers goroutines in pieces of up to 8 MiB.
func copyAll(base []uint32, moves []move, workers int) {
	const piece = 2 << 20 // words
	work := make(chan move, 64)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for c := range work {
				copy(base[c.dst:c.dst+c.n], base[c.src:c.src+c.n])
			}
		})
	}
	for _, c := range moves {
		for off := uint64(0); off < c.n; off += piece {
			k := min(piece, c.n-off)
			work <- move{dst: c.dst + off, src: c.src + off, n: k}
		}
	}
	close(work)
	wg.Wait()
}
