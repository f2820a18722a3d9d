package graph

import (
	"sync/atomic"
)

// pairSource yields the non-loop edges of the input as pairs of compact ids,
// block by block. Items are indexed 0..len()-1 (input edges for the dense
// remap, translated non-loop edges for the sparse one); two passes over the
// same range yield the same pairs in the same order.
type pairSource interface {
	len() int
	// pairs returns the compact endpoints of the non-loop items in [lo, hi)
	// as u0, v0, u1, v1, ...; it may fill and return dst or alias its own
	// storage.
	pairs(lo, hi int, dst []uint32) []uint32
}

type denseSource struct {
	edges []Edge
	table []uint32
}

func (s *denseSource) len() int { return len(s.edges) }

func (s *denseSource) pairs(lo, hi int, dst []uint32) []uint32 {
	t := s.table
	for _, e := range s.edges[lo:hi] {
		if e.U != e.V {
			dst = append(dst, t[e.U], t[e.V])
		}
	}
	return dst
}

type pairsSource struct{ p []uint32 }

func (s *pairsSource) len() int { return len(s.p) / 2 }

func (s *pairsSource) pairs(lo, hi int, _ []uint32) []uint32 { return s.p[2*lo : 2*hi] }

// pairBlock is the number of items translated at a time: the block's pairs
// stay in L1 while they are counted or scattered.
const pairBlock = 4096

// buildSymmetric lays out both directions of every pair as a CSR over n
// rows (a counting sort by source), then sorts and deduplicates each row.
//
// When n is small next to the number of edges, each worker counts into its
// own array over a fixed range of the input, and the counts become private
// write cursors: no atomics, and the raw layout is deterministic. When
// per-worker arrays would outweigh the input, workers share one array with
// atomic increments instead. Either way the rows are sorted afterwards, so
// the result is the same.
func buildSymmetric(src pairSource, n int, w int, path int, pm *progressMeter) *CSR {
	items := src.len()
	off := make([]uint64, n+1)
	var cols []uint32
	parts := min(w, 2*items/max(n, 1))
	private := parts >= 2 || w == 1
	switch path {
	case pathPrivate:
		private, parts = true, w
	case pathShared:
		private = false
	}
	if private {
		cols = scatterPrivate(src, off, max(parts, 1), pm)
	} else {
		cols = scatterShared(src, off, w, pm)
	}
	deg := make([]uint32, n)
	sortRows(off, cols, deg, w, pm)
	cols = compactRows(off, cols, deg)
	return &CSR{Offsets: off, Cols: cols, NCols: int64(n)}
}

// scatterPrivate fills off with row starts (off[n] = total) and returns the
// raw directed entries, grouped by row, using per-part counts.
func scatterPrivate(src pairSource, off []uint64, parts int, pm *progressMeter) []uint32 {
	n := len(off) - 1
	cnt := make([][]uint64, parts)
	forEachStatic(src.len(), parts, func(p, lo, hi int) {
		c := make([]uint64, n)
		buf := make([]uint32, 0, 2*pairBlock)
		for b := lo; b < hi; b += pairBlock {
			e := min(b+pairBlock, hi)
			ps := src.pairs(b, e, buf[:0])
			for i := 0; i+1 < len(ps); i += 2 {
				c[ps[i]]++
				c[ps[i+1]]++
			}
			pm.add(int64(e - b))
		}
		cnt[p] = c
	})
	// Row r's entries from part p start after those of parts < p.
	forEachStatic(n, parts, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			var s uint64
			for _, c := range cnt {
				s += c[r]
			}
			off[r] = s
		}
	})
	total := exclusiveScan(off[:n], parts)
	off[n] = total
	forEachStatic(n, parts, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			s := off[r]
			for _, c := range cnt {
				c[r], s = s, s+c[r]
			}
		}
	})
	cols := make([]uint32, total)
	forEachStatic(src.len(), parts, func(p, lo, hi int) {
		c := cnt[p]
		buf := make([]uint32, 0, 2*pairBlock)
		for b := lo; b < hi; b += pairBlock {
			e := min(b+pairBlock, hi)
			ps := src.pairs(b, e, buf[:0])
			for i := 0; i+1 < len(ps); i += 2 {
				u, v := ps[i], ps[i+1]
				cols[c[u]] = v
				c[u]++
				cols[c[v]] = u
				c[v]++
			}
			pm.add(int64(e - b))
		}
		cnt[p] = nil
	})
	return cols
}

// scatterShared is scatterPrivate with one shared array of atomic counters,
// for graphs whose vertex count is large next to their edge count. The
// order within a row depends on scheduling; sortRows removes it.
func scatterShared(src pairSource, off []uint64, w int, pm *progressMeter) []uint32 {
	n := len(off) - 1
	const chunk = 16 * pairBlock
	forEachDynamic(src.len(), chunk, w, func(lo, hi int) {
		buf := make([]uint32, 0, 2*pairBlock)
		for b := lo; b < hi; b += pairBlock {
			ps := src.pairs(b, min(b+pairBlock, hi), buf[:0])
			for i := 0; i+1 < len(ps); i += 2 {
				atomic.AddUint64(&off[ps[i]], 1)
				atomic.AddUint64(&off[ps[i+1]], 1)
			}
		}
		pm.add(int64(hi - lo))
	})
	total := exclusiveScan(off[:n], w)
	off[n] = total
	cols := make([]uint32, total)
	// Each slot is claimed by bumping the row's start; afterwards off[r]
	// holds row r's end, i.e. row r+1's start, and one shift restores it.
	forEachDynamic(src.len(), chunk, w, func(lo, hi int) {
		buf := make([]uint32, 0, 2*pairBlock)
		for b := lo; b < hi; b += pairBlock {
			ps := src.pairs(b, min(b+pairBlock, hi), buf[:0])
			for i := 0; i+1 < len(ps); i += 2 {
				u, v := ps[i], ps[i+1]
				cols[atomic.AddUint64(&off[u], 1)-1] = v
				cols[atomic.AddUint64(&off[v], 1)-1] = u
			}
		}
		pm.add(int64(hi - lo))
	})
	copy(off[1:n+1], off[:n])
	off[0] = 0
	return cols
}

// compactRows moves each deduplicated row (its first deg[r] entries) to its
// final place and rewrites off accordingly. It runs serially: rows only
// move left, so one in-place sweep is safe, and it is a single memmove of
// the edge array. A large leftover is released by copying out.
func compactRows(off []uint64, cols []uint32, deg []uint32) []uint32 {
	n := len(deg)
	var at uint64
	for r := 0; r < n; r++ {
		start, d := off[r], uint64(deg[r])
		if start != at {
			copy(cols[at:at+d], cols[start:start+d])
		}
		off[r] = at
		at += d
	}
	off[n] = at
	if slack := uint64(len(cols)) - at; slack > at/8 {
		out := make([]uint32, at)
		copy(out, cols[:at])
		return out
	}
	return cols[:at:at]
}
