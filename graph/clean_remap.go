package graph

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// Marks in the dense table before numbering. Loop-only ids are remembered
// only to be counted (CleanStats.IsolatedIDs).
const (
	markNone   = 0
	markActive = 1
	markLoop   = 2
)

// remapChunk is the number of edges a worker takes at a time in the remap
// passes: large enough to amortise the scheduler, small enough to balance.
const remapChunk = 1 << 15

// denseRemap marks every id in a table indexed by original id, then numbers
// the active ids in ascending order. table[id] is the compact id of every
// id with a non-loop edge (other entries are meaningless afterwards).
func denseRemap(edges []Edge, maxID uint64, w int, pm *progressMeter) (table []uint32, origID []uint64, isolated uint64, err error) {
	table = make([]uint32, maxID+1)
	forEachDynamic(len(edges), remapChunk, w, func(lo, hi int) {
		for _, e := range edges[lo:hi] {
			if e.U == e.V {
				// A loop marks its id only if nothing else did; a
				// later active mark overwrites it.
				if atomic.LoadUint32(&table[e.U]) == markNone {
					atomic.CompareAndSwapUint32(&table[e.U], markNone, markLoop)
				}
				continue
			}
			// Load first: most ids repeat, and a plain load keeps the
			// cache line shared between cores.
			if atomic.LoadUint32(&table[e.U]) != markActive {
				atomic.StoreUint32(&table[e.U], markActive)
			}
			if atomic.LoadUint32(&table[e.V]) != markActive {
				atomic.StoreUint32(&table[e.V], markActive)
			}
		}
		pm.add(int64(hi - lo))
	})

	parts := min(w, max(1, len(table)/(1<<16)))
	active := make([]uint64, parts)
	loops := make([]uint64, parts)
	forEachStatic(len(table), parts, func(p, lo, hi int) {
		for _, m := range table[lo:hi] {
			switch m {
			case markActive:
				active[p]++
			case markLoop:
				loops[p]++
			}
		}
	})
	n := uint64(0)
	for p := range active {
		isolated += loops[p]
		active[p], n = n, n+active[p]
	}
	if n > maxVertices {
		return nil, nil, 0, fmt.Errorf("%d vertices: %w", n, ErrTooManyVertices)
	}
	origID = make([]uint64, n)
	forEachStatic(len(table), parts, func(p, lo, hi int) {
		next := active[p]
		for i := lo; i < hi; i++ {
			if table[i] == markActive {
				table[i] = uint32(next)
				origID[next] = uint64(i)
				next++
			}
		}
	})
	return table, origID, isolated, nil
}

// sparseRemap handles ids too large or too spread for a dense table. The
// endpoints are range-partitioned into buckets by sampled splitters, each
// bucket is sorted and deduplicated on its own (so equal ids always meet in
// one bucket and the concatenation is globally sorted), and every edge is
// then translated once into a pair of compact ids through a hash table.
func sparseRemap(edges []Edge, sc scan, w int, pm *progressMeter) (origID []uint64, pairs []uint32, isolated uint64, err error) {
	nonLoop := len(edges) - int(sc.loops)
	split := sampleSplitters(edges, nonLoop, w)
	nb := len(split) + 1
	parts := w
	if nonLoop < 1<<16 {
		parts = 1
	}

	// Count endpoints per (part, bucket), then turn the counts into write
	// cursors laid out bucket-major, so that each bucket is contiguous.
	cnt := make([]uint64, parts*nb)
	partNonLoop := make([]uint64, parts)
	forEachStatic(len(edges), parts, func(p, lo, hi int) {
		c := cnt[p*nb : (p+1)*nb]
		var k uint64
		for _, e := range edges[lo:hi] {
			if e.U == e.V {
				continue
			}
			k++
			c[bucketOf(split, e.U)]++
			c[bucketOf(split, e.V)]++
		}
		partNonLoop[p] = k
	})
	bstart := make([]uint64, nb+1)
	var pos uint64
	for b := 0; b < nb; b++ {
		bstart[b] = pos
		for p := 0; p < parts; p++ {
			c := cnt[p*nb+b]
			cnt[p*nb+b] = pos
			pos += c
		}
	}
	bstart[nb] = pos

	buf := make([]uint64, pos)
	forEachStatic(len(edges), parts, func(p, lo, hi int) {
		c := cnt[p*nb : (p+1)*nb]
		for _, e := range edges[lo:hi] {
			if e.U == e.V {
				continue
			}
			b := bucketOf(split, e.U)
			buf[c[b]] = e.U
			c[b]++
			b = bucketOf(split, e.V)
			buf[c[b]] = e.V
			c[b]++
		}
	})

	// Sort and deduplicate each bucket in place; ulen[b] is its number of
	// distinct ids, which stay at the front of the bucket.
	ulen := make([]uint64, nb+1)
	forEachDynamic(nb, 1, w, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			s := buf[bstart[b]:bstart[b+1]]
			slices.Sort(s)
			ulen[b] = uint64(len(slices.Compact(s)))
		}
	})
	n := exclusiveScan(ulen[:nb], w)
	ulen[nb] = n
	if n > maxVertices {
		return nil, nil, 0, fmt.Errorf("%d vertices: %w", n, ErrTooManyVertices)
	}
	origID = make([]uint64, n)
	forEachDynamic(nb, 1, w, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			copy(origID[ulen[b]:ulen[b+1]], buf[bstart[b]:])
		}
	})
	buf = nil
	pm.add(int64(len(edges)) / 2)

	// Translate each non-loop edge once; the CSR builder then reads pairs
	// without further lookups.
	idx := newIDTable(origID, w)
	pairs = make([]uint32, 2*nonLoop)
	// partNonLoop becomes each part's first pair index.
	var at uint64
	for p, k := range partNonLoop {
		partNonLoop[p], at = at, at+k
	}
	forEachStatic(len(edges), parts, func(p, lo, hi int) {
		j := 2 * partNonLoop[p]
		for _, e := range edges[lo:hi] {
			if e.U == e.V {
				continue
			}
			cu, _ := idx.find(e.U)
			cv, _ := idx.find(e.V)
			pairs[j], pairs[j+1] = cu, cv
			j += 2
		}
	})
	pm.add(int64(len(edges)) / 2)

	isolated = countLoopOnly(edges, sc.loops, idx)
	return origID, pairs, isolated, nil
}

// sampleSplitters picks bucket boundaries from evenly spaced endpoints. The
// buckets only balance the work: the ids that come out are the same
// whichever splitters are chosen.
func sampleSplitters(edges []Edge, nonLoop, w int) []uint64 {
	if nonLoop < 1<<16 || w <= 1 && nonLoop < 1<<20 {
		return nil
	}
	nb := min(64*w, 1<<12)
	const perBucket = 32
	want := min(nb*perBucket, len(edges))
	sample := make([]uint64, 0, 2*want)
	for i := 0; i < want; i++ {
		e := edges[int(uint64(i)*uint64(len(edges))/uint64(want))]
		if e.U != e.V {
			sample = append(sample, e.U, e.V)
		}
	}
	if len(sample) == 0 {
		return nil
	}
	slices.Sort(sample)
	split := make([]uint64, 0, nb-1)
	for b := 1; b < nb; b++ {
		split = append(split, sample[b*len(sample)/nb])
	}
	return slices.Compact(split)
}

// bucketOf is the number of splitters <= x: ids equal to a splitter open
// its bucket, so equal ids always land in the same bucket.
//
// The search is written without a data-dependent branch (the compiler
// turns the conditional add into a conditional move): the comparisons are
// unpredictable, and mispredictions made the branchy search the most
// expensive step of the sparse path.
func bucketOf(split []uint64, x uint64) int {
	if len(split) == 0 {
		return 0
	}
	base, n := 0, len(split)
	for n > 1 {
		half := n / 2
		if split[base+half-1] <= x {
			base += half
		}
		n -= half
	}
	if split[base] <= x {
		base++
	}
	return base
}

// countLoopOnly counts the distinct ids of self-loops that have no non-loop
// edge. Loops are rare in practice, so this runs serially.
func countLoopOnly(edges []Edge, loops uint64, idx *idTable) uint64 {
	if loops == 0 {
		return 0
	}
	ids := make([]uint64, 0, loops)
	for _, e := range edges {
		if e.U == e.V {
			ids = append(ids, e.U)
		}
	}
	slices.Sort(ids)
	var n uint64
	for _, x := range slices.Compact(ids) {
		if _, ok := idx.find(x); !ok {
			n++
		}
	}
	return n
}
