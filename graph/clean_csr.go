package graph

import (
	"math/bits"

	"github.com/trigrid/trigrid/internal/parallel"
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

// bucketEntries is the target number of directed entries per row bucket:
// a bucket's rows are built in a scratch array that stays in L2.
const bucketEntries = 1 << 16

// buildSymmetric lays out both directions of every pair as a CSR over n
// rows with sorted, duplicate-free rows.
//
// A direct counting sort by row scatters every entry to a random place in
// a 4-bytes-per-entry array far larger than the caches, and that scatter
// dominated the cost. Instead entries are first partitioned by row bucket
// (a few thousand consecutive rows each): a radix-partition pass whose
// writes go to few, sequentially filled streams. Each bucket is then
// counted, sorted by row and deduplicated in cache, and finally copied to
// its place in the exact-size column array.
//
// An entry packs (row within its bucket, column). When both fit in 32 bits
// (up to tens of millions of vertices) entries are uint32, which halves the
// largest temporary buffer; otherwise they are uint64.
//
// The partition pass uses static ranges of the input with per-range
// cursors, so the layout (and thus everything after) is deterministic;
// rows are sorted anyway, so the result does not depend on it.
func buildSymmetric(src pairSource, n int, w int, paths cleanPaths, pm *progressMeter) *CSR {
	items := src.len()
	perBucket := paths.perBucket
	if perBucket <= 0 {
		perBucket = bucketEntries
	}
	if n == 0 || items == 0 {
		return &CSR{Offsets: make([]uint64, n+1), Cols: []uint32{}, NCols: int64(n)}
	}
	// Buckets of 1<<shift rows; aim at perBucket entries each.
	colBits := uint(bits.Len(uint(n - 1)))
	entries := 2 * items
	if paths.upper {
		entries = items
	}
	want := max(1, entries/perBucket)
	shift := uint(max(0, int(colBits)-bits.Len(uint(want-1))))
	up := paths.upper
	if paths.wide {
		return buildRows[uint64](src, n, colBits, shift, up, w, pm)
	}
	if shift+colBits <= 32 {
		return buildRows[uint32](src, n, colBits, shift, up, w, pm)
	}
	// Narrower buckets keep 32-bit entries, up to 16 times as many
	// buckets as wanted (beyond that the partition pass loses locality).
	if colBits < 32 && shift-(32-colBits) <= 4 {
		return buildRows[uint32](src, n, colBits, 32-colBits, up, w, pm)
	}
	return buildRows[uint64](src, n, colBits, shift, up, w, pm)
}

// entry is a packed (row within bucket, column) pair.
type entry interface{ ~uint32 | ~uint64 }

// buildRows is buildSymmetric for entries of type E: rows in buckets of
// 1<<shift, columns in the low colBits bits; with upper, each pair only in
// the row of its smaller endpoint.
func buildRows[E entry](src pairSource, n int, colBits, shift uint, upper bool, w int, pm *progressMeter) *CSR {
	items := src.len()
	nb := (n-1)>>shift + 1
	parts := min(w, max(1, items/(1<<14)))

	// Count entries per (part, bucket); turn counts into cursors laid out
	// bucket-major so that each bucket is one contiguous range.
	cnt := make([]uint64, parts*nb)
	forEachStatic(items, parts, func(p, lo, hi int) {
		c := cnt[p*nb : (p+1)*nb]
		buf := make([]uint32, 0, 2*pairBlock)
		for b := lo; b < hi; b += pairBlock {
			e := min(b+pairBlock, hi)
			ps := src.pairs(b, e, buf[:0])
			if upper {
				for i := 0; i+1 < len(ps); i += 2 {
					c[min(ps[i], ps[i+1])>>shift]++
				}
			} else {
				for _, x := range ps {
					c[x>>shift]++
				}
			}
			pm.add(int64(e - b))
		}
	})
	bstart := make([]uint64, nb+1)
	var total uint64
	for b := 0; b < nb; b++ {
		bstart[b] = total
		for p := 0; p < parts; p++ {
			c := cnt[p*nb+b]
			cnt[p*nb+b] = total
			total += c
		}
	}
	bstart[nb] = total

	// Partition: entry = local row << colBits | column.
	mask := uint32(1)<<shift - 1
	ent := make([]E, total)
	forEachStatic(items, parts, func(p, lo, hi int) {
		c := cnt[p*nb : (p+1)*nb]
		buf := make([]uint32, 0, 2*pairBlock)
		for b := lo; b < hi; b += pairBlock {
			e := min(b+pairBlock, hi)
			ps := src.pairs(b, e, buf[:0])
			if upper {
				for i := 0; i+1 < len(ps); i += 2 {
					u, v := min(ps[i], ps[i+1]), max(ps[i], ps[i+1])
					ent[c[u>>shift]] = E(u&mask)<<colBits | E(v)
					c[u>>shift]++
				}
			} else {
				for i := 0; i+1 < len(ps); i += 2 {
					u, v := ps[i], ps[i+1]
					ent[c[u>>shift]] = E(u&mask)<<colBits | E(v)
					c[u>>shift]++
					ent[c[v>>shift]] = E(v&mask)<<colBits | E(u)
					c[v>>shift]++
				}
			}
			pm.add(int64(e - b))
		}
	})
	cnt = nil

	// Per bucket: sort by (row, column), deduplicate, and pack the
	// bucket's rows back at the front of its range of ent. deg[r] is row
	// r's final length.
	deg := make([]uint64, n+1)
	perItem := int64(2) // entries per item, for progress
	if upper {
		perItem = 1
	}
	parallel.Dynamic(nb, 1, w, func(lo, hi int) {
		sc := bucketScratch[E]{colBits: colBits}
		for b := lo; b < hi; b++ {
			r0 := b << shift
			r1 := min(n, (b+1)<<shift)
			sc.build(ent[bstart[b]:bstart[b+1]], deg[r0:r1])
			pm.add(int64(bstart[b+1]-bstart[b]) / perItem)
		}
	})

	off := deg
	m := exclusiveScan(off[:n], w)
	off[n] = m
	cols := make([]uint32, m)
	parallel.Dynamic(nb, 1, w, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			r0 := b << shift
			r1 := min(n, (b+1)<<shift)
			dst := cols[off[r0]:off[r1]]
			for i, x := range ent[bstart[b] : bstart[b]+uint64(len(dst))] {
				dst[i] = uint32(x)
			}
		}
	})
	return &CSR{Offsets: off, Cols: cols, NCols: int64(n)}
}

// bucketScratch is one worker's reusable memory for building buckets.
type bucketScratch[E entry] struct {
	colBits uint
	start   []uint64
	tmp     []E
	rows    []uint32
	count   [1 << maxDigitBits]uint64
}

// maxDigitBits is the widest radix digit: a 2^11-entry histogram stays
// in L1.
const maxDigitBits = 11

// build turns a bucket's entries into its sorted, deduplicated rows,
// packed back into the front of ent, one column per slot, and sets
// deg[local row] to each row's length.
//
// It is an LSD radix sort: stable passes on the column digits (only the
// bits that vary), then a stable counting pass by row, which leaves every
// row sorted by column. All passes run over the bucket, which fits in L2.
func (s *bucketScratch[E]) build(ent []E, deg []uint64) {
	if cap(s.tmp) < len(ent) {
		s.tmp = make([]E, len(ent))
		s.rows = make([]uint32, len(ent))
	}
	colMask := E(1)<<s.colBits - 1
	src, dst := ent, s.tmp[:len(ent)]
	var or, and E = 0, colMask
	for _, x := range ent {
		or |= x & colMask
		and &= x
	}
	if vary := bits.Len64(uint64(or ^ and)); vary > 0 {
		passes := (vary + maxDigitBits - 1) / maxDigitBits
		width := uint((vary + passes - 1) / passes)
		digitMask := E(1)<<width - 1
		for shift := uint(0); shift < uint(vary); shift += width {
			count := s.count[:1<<width]
			clear(count)
			for _, x := range src {
				count[(x>>shift)&digitMask]++
			}
			var pos uint64
			for d, c := range count {
				count[d], pos = pos, pos+c
			}
			for _, x := range src {
				d := (x >> shift) & digitMask
				dst[count[d]] = x
				count[d]++
			}
			src, dst = dst, src
		}
	}

	nr := len(deg)
	if cap(s.start) < nr+1 {
		s.start = make([]uint64, nr+1)
	}
	start := s.start[:nr+1]
	clear(start)
	for _, x := range src {
		start[(x>>s.colBits)+1]++
	}
	for r := 1; r <= nr; r++ {
		start[r] += start[r-1]
	}
	rows := s.rows[:len(ent)]
	for _, x := range src {
		r := x >> s.colBits
		rows[start[r]] = uint32(x & colMask)
		start[r]++
	}
	// start[r] is now row r's end; rows are sorted, so duplicates are
	// adjacent.
	at := 0
	var lo uint64
	for r := 0; r < nr; r++ {
		hi := start[r]
		d := 0
		for i, x := range rows[lo:hi] {
			if i == 0 || x != rows[lo+uint64(i)-1] {
				ent[at+d] = E(x)
				d++
			}
		}
		deg[r] = uint64(d)
		at += d
		lo = hi
	}
}
