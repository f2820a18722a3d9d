package graph

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/trigrid/trigrid/internal/parallel"
)

// sparseRemap handles ids too large or too spread for a dense table. The
// endpoints are range-partitioned into buckets by sampled splitters; each
// bucket is deduplicated and sorted on its own (equal ids always meet in
// one bucket, and the concatenation of the buckets is globally sorted);
// then every edge is translated once into a pair of compact ids through a
// hash table.
func sparseRemap(edges []Edge, sc scan, w int, pm *progressMeter) (origID []uint64, pairs []uint32, isolated uint64, err error) {
	nonLoop := len(edges) - int(sc.loops)
	bk := newBucketer(sampleSplitters(edges, nonLoop, w), sc.minID, sc.maxID)
	nb := len(bk.split) + 1
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
			c[bk.of(e.U)]++
			c[bk.of(e.V)]++
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
			b := bk.of(e.U)
			buf[c[b]] = e.U
			c[b]++
			b = bk.of(e.V)
			buf[c[b]] = e.V
			c[b]++
		}
	})

	// Deduplicate then sort each bucket in place: real graphs repeat each
	// id about as often as its degree, so hashing first leaves far fewer
	// keys to sort. ulen[b] is the bucket's number of distinct ids, which
	// end up sorted at its front.
	ulen := make([]uint64, nb+1)
	parallel.Dynamic(nb, 1, w, func(lo, hi int) {
		var set idSet
		for b := lo; b < hi; b++ {
			s := buf[bstart[b]:bstart[b+1]]
			k := set.dedupe(s)
			slices.Sort(s[:k])
			ulen[b] = uint64(k)
		}
	})
	n := exclusiveScan(ulen[:nb], w)
	ulen[nb] = n
	if n > vertexLimit {
		return nil, nil, 0, fmt.Errorf("%d vertices: %w", n, ErrTooManyVertices)
	}
	origID = make([]uint64, n)
	parallel.Dynamic(nb, 1, w, func(lo, hi int) {
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
	if nonLoop < 1<<16 {
		return nil
	}
	// Enough buckets for dynamic balance, and small enough that a
	// bucket's hash set stays in cache.
	nb := min(max(64*w, nonLoop/(1<<14)), 1<<14)
	const perBucket = 16
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
// The search has no data-dependent branch: the comparisons are
// unpredictable, and mispredictions made a branchy search the most
// expensive step of the sparse path.
func bucketOf(split []uint64, x uint64) int {
	if len(split) == 0 {
		return 0
	}
	base, n := 0, len(split)
	for n > 1 {
		half := n / 2
		// borrow is 1 when x < split[...]; bits.Sub64 compiles to SBB.
		_, borrow := bits.Sub64(x, split[base+half-1], 0)
		base += half & (int(borrow) - 1)
		n -= half
	}
	if split[base] <= x {
		base++
	}
	return base
}

// prefixBits sizes bucketer's prefix index (2^12 entries, 32 KiB).
const prefixBits = 12

// bucketer is bucketOf with a shortcut: the top bits of (x - min) index
// the range of buckets that ids with those bits can fall in, which is a
// single bucket for almost every id, so most lookups are one table load.
type bucketer struct {
	split  []uint64
	min    uint64
	shift  uint
	lo, hi []uint32 // per prefix, bucketOf of its smallest and largest id
}

func newBucketer(split []uint64, minID, maxID uint64) bucketer {
	b := bucketer{split: split, min: minID}
	if len(split) == 0 || maxID < minID {
		// One bucket: every prefix (x-min)>>64 is 0.
		b.shift = 64
		b.lo, b.hi = []uint32{0}, []uint32{0}
		return b
	}
	b.shift = uint(max(0, bits.Len64(maxID-minID)-prefixBits))
	np := int((maxID-minID)>>b.shift) + 1
	b.lo = make([]uint32, np)
	b.hi = make([]uint32, np)
	for p := range np {
		first := minID + uint64(p)<<b.shift
		last := maxID
		if p+1 < np {
			last = first + (uint64(1)<<b.shift - 1)
		}
		b.lo[p] = uint32(bucketOf(split, first))
		b.hi[p] = uint32(bucketOf(split, last))
	}
	return b
}

// of returns bucketOf(b.split, x) for minID <= x <= maxID.
func (b *bucketer) of(x uint64) int {
	p := (x - b.min) >> b.shift
	lo, hi := b.lo[p], b.hi[p]
	if lo == hi {
		return int(lo)
	}
	return int(lo) + bucketOf(b.split[lo:hi], x)
}

// idSet is a reusable open-addressing set of uint64 used to deduplicate
// one bucket. Slots hold id+1 so that 0 can mark an empty slot; the one id
// that has no successor, 2^64-1, is tracked by a flag.
type idSet struct {
	slots []uint64
}

// dedupe moves the distinct values of s to its front, in order of first
// appearance, and returns how many there are.
func (t *idSet) dedupe(s []uint64) int {
	size := 64
	for size < 2*min(len(s), 1<<10) {
		size *= 2
	}
	t.reset(size)
	mask := uint64(len(t.slots) - 1)
	shift := uint(64 - bits.Len64(mask))
	k, used := 0, 0
	hasMax := false
	for _, x := range s {
		if x == ^uint64(0) {
			if !hasMax {
				hasMax = true
				s[k] = x
				k++
			}
			continue
		}
		key := x + 1
		for i := (key * 0x9e3779b97f4a7c15) >> shift; ; i = (i + 1) & mask {
			v := t.slots[i]
			if v == key {
				break
			}
			if v == 0 {
				t.slots[i] = key
				s[k] = x
				k++
				used++
				break
			}
		}
		if 2*used > len(t.slots) {
			t.grow()
			mask = uint64(len(t.slots) - 1)
			shift = uint(64 - bits.Len64(mask))
		}
	}
	return k
}

func (t *idSet) reset(size int) {
	if cap(t.slots) >= size {
		t.slots = t.slots[:size]
		clear(t.slots)
		return
	}
	t.slots = make([]uint64, size)
}

func (t *idSet) grow() {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	shift := uint(64 - bits.Len64(mask))
	for _, key := range old {
		if key == 0 {
			continue
		}
		i := (key * 0x9e3779b97f4a7c15) >> shift
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = key
	}
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
