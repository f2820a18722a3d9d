package graph

import (
	"slices"
)

// insertionMax is the longest row sorted by plain insertion: most rows of
// sparse graphs are this short, and the generic sort's dispatch costs more
// than the sort itself there.
const insertionMax = 24

func insertionSort(s []uint32) {
	for i := 1; i < len(s); i++ {
		x := s[i]
		j := i
		for j > 0 && s[j-1] > x {
			s[j] = s[j-1]
			j--
		}
		s[j] = x
	}
}

// radixBelow is the row length under which pdqsort beats the radix sort.
const radixBelow = 256

// sortUint32 sorts s ascending. Long rows (hubs of power-law graphs) use an
// LSD radix sort on 8-bit digits, skipping digits where every key agrees;
// scratch is reused between calls and returned.
func sortUint32(s, scratch []uint32) []uint32 {
	if len(s) <= insertionMax {
		insertionSort(s)
		return scratch
	}
	if len(s) < radixBelow {
		slices.Sort(s)
		return scratch
	}
	if cap(scratch) < len(s) {
		scratch = make([]uint32, len(s))
	}
	tmp := scratch[:len(s)]
	var or, and uint32 = 0, ^uint32(0)
	for _, x := range s {
		or |= x
		and &= x
	}
	diff := or ^ and // bits that vary between keys
	src, dst := s, tmp
	for shift := uint(0); shift < 32; shift += 8 {
		if (diff>>shift)&0xff == 0 {
			continue
		}
		var count [256]int
		for _, x := range src {
			count[(x>>shift)&0xff]++
		}
		pos := 0
		for d := range count {
			count[d], pos = pos, pos+count[d]
		}
		for _, x := range src {
			d := (x >> shift) & 0xff
			dst[count[d]] = x
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
	return scratch
}
