package graph

import (
	"math/bits"

	"github.com/trigrid/trigrid/internal/hugepage"
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
	if n == 0 || items == 0 {
		return &CSR{Offsets: make([]uint64, n+1), Cols: []uint32{}, NCols: int64(n)}
	}
	entries := 2 * items
	if paths.upper {
		entries = items
	}
	sh := shapeBuckets(n, entries, paths)
	if sh.wide {
		return buildRows[uint64](src, n, sh, paths.upper, w, pm)
	}
	return buildRows[uint32](src, n, sh, paths.upper, w, pm)
}

// bucketShape is how rows are cut into buckets: 1<<shift rows each,
// entries packing (row within bucket) << colBits | column, 64-bit when
// wide.
type bucketShape struct {
	colBits, shift uint
	wide           bool
}

// shapeBuckets picks the bucket shape for entries entries over n > 0
// rows: about paths.perBucket (default bucketEntries) entries a bucket,
// 32-bit entries where they fit.
func shapeBuckets(n, entries int, paths cleanPaths) bucketShape {
	perBucket := paths.perBucket
	if perBucket <= 0 {
		perBucket = bucketEntries
	}
	colBits := uint(bits.Len(uint(n - 1)))
	want := max(1, entries/perBucket)
	shift := uint(max(0, int(colBits)-bits.Len(uint(want-1))))
	switch {
	case paths.wide:
		return bucketShape{colBits, shift, true}
	case shift+colBits <= 32:
		return bucketShape{colBits, shift, false}
	case colBits < 32 && shift-(32-colBits) <= 4:
		// Narrower buckets keep 32-bit entries, up to 16 times as many
		// buckets as wanted (beyond that the partition pass loses
		// locality).
		return bucketShape{colBits, 32 - colBits, false}
	}
	return bucketShape{colBits, shift, true}
}

// entry is a packed (row within bucket, column) pair.
type entry interface{ ~uint32 | ~uint64 }

// buildRows is buildSymmetric for entries of type E: rows in buckets of
// sh's shape; with upper, each pair only in the row of its smaller
// endpoint.
func buildRows[E entry](src pairSource, n int, sh bucketShape, upper bool, w int, pm *progressMeter) *CSR {
	ent, bstart := partitionEntries[E](src, n, sh, upper, w, pm)
	perItem := int64(2) // entries per item, for progress
	if upper {
		perItem = 1
	}
	// deg[r] is row r's final length, then its offset.
	deg := make([]uint64, n+1)
	sortBuckets(ent, bstart, eachBucket(len(bstart)-1), n, sh, deg, w, func(_, b int, cols []E) {
		pm.add(int64(bstart[b+1]-bstart[b]) / perItem)
	})
	off := deg
	m := exclusiveScan(off[:n], w)
	off[n] = m
	cols := make([]uint32, m)
	copyRows(cols, off, ent, bstart, n, sh.shift, w)
	return &CSR{Offsets: off, Cols: cols, NCols: int64(n)}
}

// partitionEntries lays out the entries of src's pairs (both directions,
// or with upper only the row of the smaller endpoint) by row bucket:
// bucket b is ent[bstart[b]:bstart[b+1]], in no particular order within.
//
// The partition pass uses static ranges of the input with per-range
// cursors, so the layout (and thus everything after) is deterministic.
func partitionEntries[E entry](src pairSource, n int, sh bucketShape, upper bool, w int, pm *progressMeter) (ent []E, bstart []uint64) {
	items := src.len()
	colBits, shift := sh.colBits, sh.shift
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
	bstart = bucketCursors(cnt, parts, nb, w)
	total := bstart[nb]

	// Partition: entry = local row << colBits | column.
	mask := uint32(1)<<shift - 1
	ent = make([]E, total)
	hugepage.Advise(ent) // before its first write: faulted in 2 MiB at a time, and cheaper to page-lock
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
	return ent, bstart
}

// bucketCursors turns the counts of entries per part and bucket (cnt,
// part-major, parts by nb) into each part's first position in each
// bucket, laid out bucket-major (bucket b's entries of part p follow those
// of parts < p), and returns where each bucket starts, with the total
// last. The buckets' totals and cursors are made in parallel over ranges
// of buckets: cnt is read across parts, a stride apart.
func bucketCursors(cnt []uint64, parts, nb, w int) []uint64 {
	bstart := make([]uint64, nb+1)
	ranges := min(w, max(1, nb*parts/(1<<15)))
	forEachStatic(nb, ranges, func(_, lo, hi int) {
		for p := 0; p < parts; p++ {
			for b, c := range cnt[p*nb+lo : p*nb+hi] {
				bstart[lo+b] += c
			}
		}
	})
	total := exclusiveScan(bstart[:nb], w)
	bstart[nb] = total
	forEachStatic(nb, ranges, func(_, lo, hi int) {
		pos := append([]uint64(nil), bstart[lo:hi]...)
		for p := 0; p < parts; p++ {
			for b, c := range cnt[p*nb+lo : p*nb+hi] {
				cnt[p*nb+lo+b] = pos[b]
				pos[b] += c
			}
		}
	})
	return bstart
}

// copyRows copies the rows that sortBuckets packed at the front of each
// bucket of ent to their places in cols, given the rows' offsets.
func copyRows[E entry](cols []uint32, off []uint64, ent []E, bstart []uint64, n int, shift uint, w int) {
	nb := len(bstart) - 1
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
}
