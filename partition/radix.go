package partition

import "slices"

// LSD radix sort for the external partitioner's packed uint64 keys
// (u<<32|v, or local row<<32|col). Keys of one run share their high bits
// (ids are compact, below 2^32 and usually far below), so digits on which
// every key agrees are skipped: a graph with 4M vertices sorts in 4
// scatter passes instead of a comparison sort's ~log2(n) passes over
// mispredicted branches.

const (
	radixBits   = 11 // 2048 buckets: counts stay in L1, scatter targets in L2
	radixDigits = (64 + radixBits - 1) / radixBits
	radixMask   = 1<<radixBits - 1
	// radixMin is the size below which a comparison sort wins.
	radixMin = 1 << 8
)

// radixSort sorts a ascending, using tmp (len(tmp) >= len(a)) as scratch,
// and returns the slice that holds the result: a or tmp[:len(a)].
func radixSort(a, tmp []uint64) []uint64 {
	n := len(a)
	if n < radixMin {
		slices.Sort(a)
		return a
	}
	var cnt [radixDigits][1 << radixBits]int
	for _, x := range a {
		cnt[0][x&radixMask]++
		cnt[1][(x>>radixBits)&radixMask]++
		cnt[2][(x>>(2*radixBits))&radixMask]++
		cnt[3][(x>>(3*radixBits))&radixMask]++
		cnt[4][(x>>(4*radixBits))&radixMask]++
		cnt[5][(x>>(5*radixBits))&radixMask]++
	}
	src, dst := a, tmp[:n]
	for d := range radixDigits {
		sh := uint(d * radixBits)
		c := &cnt[d]
		if c[(src[0]>>sh)&radixMask] == n {
			continue // every key has the same digit: the pass is the identity
		}
		sum := 0
		for k := range c {
			c[k], sum = sum, sum+c[k]
		}
		for _, x := range src {
			k := (x >> sh) & radixMask
			dst[c[k]] = x
			c[k]++
		}
		src, dst = dst, src
	}
	return src
}
