package graph

import (
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/trigrid/trigrid/internal/parallel"
)

// bucketScratch is one worker's reusable memory for building buckets.
type bucketScratch[E entry] struct {
	colBits uint
	tmp     []E
	hist    [maxDigits << maxDigitBits]uint32
}

// maxDigitBits is the widest radix digit: a 2^11-entry histogram stays
// in L1.
const maxDigitBits = 11

// maxDigits is the most digits a 64-bit key needs.
const maxDigits = (64 + maxDigitBits - 1) / maxDigitBits

// build turns a bucket's entries into its sorted, deduplicated rows,
// packed back into the front of ent, one column per slot, and sets
// deg[local row] to each row's length. Every entry's row must be below
// len(deg).
//
// It is an LSD radix sort of the whole key (row above column): one read
// counts every digit, then one stable scatter per digit on which the keys
// differ. All passes run over the bucket, which fits in L2.
func (s *bucketScratch[E]) build(ent []E, deg []uint64) {
	clear(deg)
	if len(ent) == 0 {
		return
	}
	colMask := E(1)<<s.colBits - 1
	sorted := ent
	if len(ent) > math.MaxUint32 {
		slices.Sort(ent) // beyond the 32-bit histograms: never in practice
	} else {
		sorted = s.radix(ent, s.colBits+uint(bits.Len(uint(len(deg)-1))))
	}
	// Duplicates are adjacent. Writes to ent never pass the reads of
	// sorted, which may be ent itself.
	at := 0
	prev := sorted[0]
	for i, x := range sorted {
		if i > 0 && x == prev {
			continue
		}
		prev = x
		ent[at] = x & colMask
		at++
		deg[x>>s.colBits]++
	}
}

// radix sorts ent, keys below 2^keyBits, and returns the sorted entries:
// ent itself or s.tmp.
func (s *bucketScratch[E]) radix(ent []E, keyBits uint) []E {
	if cap(s.tmp) < len(ent) {
		s.tmp = make([]E, len(ent))
	}
	keyBits = max(keyBits, 1)
	passes := (keyBits + maxDigitBits - 1) / maxDigitBits
	width := (keyBits + passes - 1) / passes
	nb := 1 << width
	mask := E(nb - 1)
	// One histogram of 1<<maxDigitBits counters per digit, whatever the
	// width, so that indexing them needs no bounds checks.
	const stride = 1 << maxDigitBits
	clear(s.hist[:int(passes)*stride])
	digit := func(p uint) *[stride]uint32 { return (*[stride]uint32)(s.hist[int(p)*stride:]) }
	switch passes {
	case 1:
		h0 := digit(0)
		for _, x := range ent {
			h0[x&mask&(stride-1)]++
		}
	case 2:
		h0, h1 := digit(0), digit(1)
		for _, x := range ent {
			h0[x&mask&(stride-1)]++
			h1[(x>>width)&mask&(stride-1)]++
		}
	case 3:
		h0, h1, h2 := digit(0), digit(1), digit(2)
		for _, x := range ent {
			h0[x&mask&(stride-1)]++
			h1[(x>>width)&mask&(stride-1)]++
			h2[(x>>(2*width))&mask&(stride-1)]++
		}
	default:
		for _, x := range ent {
			for p := range passes {
				digit(p)[(x>>(p*width))&mask&(stride-1)]++
			}
		}
	}
	src, dst := ent, s.tmp[:len(ent)]
	n := uint32(len(ent))
	for p := range passes {
		shift := p * width
		h := digit(p)
		if h[(src[0]>>shift)&mask&(stride-1)] == n {
			continue // every key has this digit
		}
		var pos uint32
		for d, c := range h[:nb] {
			h[d], pos = pos, pos+c
		}
		for _, x := range src {
			d := (x >> shift) & mask & (stride - 1)
			dst[h[d]] = x
			h[d]++
		}
		src, dst = dst, src
	}
	return src
}

// sortBuckets builds every bucket of ent (bucket b is
// ent[bstart[b]:bstart[b+1]], holding rows b<<sh.shift on) into its
// sorted, deduplicated rows packed at the bucket's front, and sets deg[r]
// to row r's length, for every r < n. Buckets go in groups, group g being
// buckets groups[g] to groups[g+1], each group on one goroutine; after
// each bucket, done (when not nil) gets the group, the bucket and its
// packed columns.
func sortBuckets[E entry](ent []E, bstart []uint64, groups []int, n int, sh bucketShape, deg []uint64, w int, done func(g, b int, cols []E)) {
	parallel.Dynamic(len(groups)-1, 1, w, func(lo, hi int) {
		sc := bucketScratch[E]{colBits: sh.colBits}
		for g := lo; g < hi; g++ {
			for b := groups[g]; b < groups[g+1]; b++ {
				r0 := b << sh.shift
				r1 := min(n, (b+1)<<sh.shift)
				es := ent[bstart[b]:bstart[b+1]]
				sc.build(es, deg[r0:r1])
				if done != nil {
					k := 0
					for _, d := range deg[r0:r1] {
						k += int(d)
					}
					done(g, b, es[:k])
				}
			}
		}
	})
}

// eachBucket is the grouping of nb buckets one to a group.
func eachBucket(nb int) []int {
	g := make([]int, nb+1)
	for b := range g {
		g[b] = b
	}
	return g
}

// balancedGroups cuts the buckets of bstart into at most count groups of
// consecutive buckets holding about as many entries each (a bucket larger
// than a group's share makes a group of its own). groups[g] is group g's
// first bucket; the last element is the number of buckets.
func balancedGroups(bstart []uint64, count int) []int {
	nb := len(bstart) - 1
	total := bstart[nb]
	groups := []int{0}
	for g := 1; g < count; g++ {
		target := total * uint64(g) / uint64(count)
		b := sort.Search(nb, func(b int) bool { return bstart[b] >= target })
		if b > groups[len(groups)-1] && b < nb {
			groups = append(groups, b)
		}
	}
	return append(groups, nb)
}
