package graph

import (
	"unsafe"

	"github.com/trigrid/trigrid/internal/hugepage"
	"github.com/trigrid/trigrid/internal/parallel"
)

// colRangeBits is the fewest bits of a column range when degrees are
// counted by range: the range's counters (4 bytes a vertex) stay in L2.
const colRangeBits = 16

// maxColRangeBits bounds the number of column ranges to 1<<maxColRangeBits,
// so that each group's streams stay few.
const maxColRangeBits = 8

// groupsPerWorker is how many groups of buckets each worker gets on
// average in the passes over the upper triangle: enough to balance the
// skew of power-law rows, few enough for per-group counters.
const groupsPerWorker = 4

// forwardRows builds the degree-order forward graph of the pairs (compact
// ids, non-loop) for first-build entries of type E1 (the upper triangle by
// compact id) and returns it with the ranks, the degree statistics (all
// but MaxOutDegree) and the number of distinct edges. pairs is consumed:
// its memory holds the column streams, then the second build's entries.
//
// The passes: partition the pairs by bucket of their smaller endpoint;
// sort and deduplicate each bucket (the upper rows), counting its columns
// per column range; copy the columns into one stream per column range;
// count each range's columns in cache (degree = upper row length plus
// column count, no atomics); rank; relabel the upper rows by rank in place,
// counting the second build's buckets; partition by bucket of the smaller
// rank; sort each bucket into the forward rows.
func forwardRows[E1 entry](pairs []uint32, n int, sh1 bucketShape, paths cleanPaths, w int, pm *progressMeter) (fwd *CSR, rank []uint32, os OrientStats, m int64) {
	ent1, bstart1 := partitionEntries[E1](&pairsSource{p: pairs}, n, sh1, true, w, pm)
	nb1 := len(bstart1) - 1
	groups := balancedGroups(bstart1, groupsPerWorker*w)
	ng := len(groups) - 1

	least := uint(colRangeBits)
	if paths.colRangeBits > 0 {
		least = paths.colRangeBits
	}
	cs := max(least, sh1.colBits-min(sh1.colBits, maxColRangeBits))
	nr := (n-1)>>cs + 1
	upLen := make([]uint64, n+1) // upper row lengths, then the forward rows' offsets
	hugepage.Advise(upLen)
	blen := make([]uint64, nb1) // entries each bucket keeps
	ccnt := make([]uint64, ng*nr)
	sortBuckets(ent1, bstart1, groups, n, sh1, upLen, w, func(g, b int, cols []E1) {
		c := ccnt[g*nr : (g+1)*nr]
		for _, x := range cols {
			c[x>>cs]++
		}
		blen[b] = uint64(len(cols))
		pm.add(int64(bstart1[b+1] - bstart1[b]))
	})
	var total uint64
	for _, l := range blen {
		total += l
	}
	m = int64(total)

	deg := degrees(pairs, ent1, bstart1, blen, upLen, groups, ccnt, nr, cs, w)
	os.Wedges, os.MaxDegree = countDegreeStats(deg, w)
	rank = degreeRankCounts(deg, os.MaxDegree, w)
	deg = nil

	sh2 := shapeBuckets(n, int(m), cleanPaths{perBucket: paths.perBucket, wide: paths.wide2})
	up := upperRows[E1]{ent: ent1, bstart: bstart1, len: upLen, groups: groups, shift: sh1.shift, n: n}
	if sh2.wide {
		fwd = forwardSecond[E1, uint64](pairs, &up, rank, sh2, int(m), w, pm)
	} else {
		fwd = forwardSecond[E1, uint32](pairs, &up, rank, sh2, int(m), w, pm)
	}
	return fwd, rank, os, m
}

// degrees returns each vertex's degree: its upper row's length (upLen)
// plus how often it is a column of the upper rows (bucket b's columns
// being ent[bstart[b]:bstart[b]+blen[b]]), given the count of each group's
// columns in each column range of 1<<cs vertices (ccnt, group-major, which
// it turns into cursors). The columns are first copied into one stream per
// range, over the memory of scratch; each range's counters then stay in
// cache.
func degrees[E entry](scratch []uint32, ent []E, bstart, blen, upLen []uint64, groups []int, ccnt []uint64, nr int, cs uint, w int) []uint32 {
	n := len(upLen) - 1
	ng := len(groups) - 1
	rstart := make([]uint64, nr+1)
	var pos uint64
	for r := 0; r < nr; r++ {
		rstart[r] = pos
		for g := 0; g < ng; g++ {
			c := ccnt[g*nr+r]
			ccnt[g*nr+r] = pos
			pos += c
		}
	}
	rstart[nr] = pos
	stream := reuseOrMake[uint32](scratch, int(pos))
	parallel.Dynamic(ng, 1, w, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			c := ccnt[g*nr : (g+1)*nr]
			for b := groups[g]; b < groups[g+1]; b++ {
				for _, x := range ent[bstart[b] : bstart[b]+blen[b]] {
					r := x >> cs
					stream[c[r]] = uint32(x)
					c[r]++
				}
			}
		}
	})
	deg := make([]uint32, n)
	parallel.Dynamic(nr, 1, w, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for _, x := range stream[rstart[r]:rstart[r+1]] {
				deg[x]++
			}
			for v := r << cs; v < min(n, (r+1)<<cs); v++ {
				deg[v] += uint32(upLen[v])
			}
		}
	})
	return deg
}

// upperRows is the first build's result: the upper rows of bucket b, rows
// b<<shift on, packed from ent[bstart[b]], row r holding len[r] columns;
// the buckets go in groups as sortBuckets took them.
type upperRows[E entry] struct {
	ent    []E
	bstart []uint64
	len    []uint64
	groups []int
	shift  uint
	n      int
}

// forwardSecond lays out the upper rows again, relabelled by rank, in the
// row of the smaller rank: one pass relabels the columns in place and
// counts each group's entries per bucket of the second build, the next
// partitions them into entries of type E2 over the memory of scratch,
// then each bucket is sorted into the forward rows. m is the number of
// upper entries.
func forwardSecond[E1, E2 entry](scratch []uint32, up *upperRows[E1], rank []uint32, sh2 bucketShape, m, w int, pm *progressMeter) *CSR {
	n := up.n
	nb2 := (n-1)>>sh2.shift + 1
	ng := len(up.groups) - 1
	s2 := sh2.shift
	cnt := make([]uint64, ng*nb2)
	up.eachGroup(w, func(g int, row uint32, cols []E1) {
		c := cnt[g*nb2 : (g+1)*nb2]
		ru := rank[row]
		for i, x := range cols {
			rv := rank[x]
			cols[i] = E1(rv)
			c[min(ru, rv)>>s2]++
		}
	})
	pm.add(int64(m))
	bstart := bucketCursors(cnt, ng, nb2, w)

	ent := reuseOrMake[E2](scratch, m)
	mask := uint32(1)<<s2 - 1
	colBits := sh2.colBits
	up.eachGroup(w, func(g int, row uint32, cols []E1) {
		c := cnt[g*nb2 : (g+1)*nb2]
		ru := rank[row]
		for _, x := range cols {
			rv := uint32(x)
			lo, hi := min(ru, rv), max(ru, rv)
			ent[c[lo>>s2]] = E2(lo&mask)<<colBits | E2(hi)
			c[lo>>s2]++
		}
	})
	pm.add(int64(m))
	cnt = nil

	// The upper rows are spent: their lengths' memory takes the forward
	// rows' lengths, then offsets, and their entries' the columns.
	off := up.len
	sortBuckets(ent, bstart, eachBucket(nb2), n, sh2, off, w, nil)
	fm := exclusiveScan(off[:n], w)
	off[n] = fm
	var cols []uint32
	if unsafe.Sizeof(E1(0)) == 4 && uint64(len(up.ent)) <= fm+fm/8 {
		cols = reuse[uint32](up.ent, int(fm))
	}
	if cols == nil {
		cols = make([]uint32, fm)
		hugepage.Advise(cols)
	}
	copyRows(cols, off, ent, bstart, n, s2, w)
	return &CSR{Offsets: off, Cols: cols, NCols: int64(n)}
}

// eachGroup calls fn for every upper row, the groups in parallel: with
// the group, the row and its columns.
func (u *upperRows[E]) eachGroup(w int, fn func(g int, row uint32, cols []E)) {
	parallel.Dynamic(len(u.groups)-1, 1, w, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			for b := u.groups[g]; b < u.groups[g+1]; b++ {
				r0 := b << u.shift
				r1 := min(u.n, (b+1)<<u.shift)
				i := u.bstart[b]
				for r := r0; r < r1; r++ {
					end := i + u.len[r]
					fn(g, uint32(r), u.ent[i:end])
					i = end
				}
			}
		}
	})
}
