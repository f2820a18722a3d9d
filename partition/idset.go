package partition

import (
	"math/bits"
	"slices"
)

// idSet is the set of distinct non-loop input ids of the external
// partitioner; an id's compact id is its position in ascending order
// (graph.Clean's contract).
//
// Ids that stay below a bound the memory limit allows live in a bitmap:
// adding is a bit set, and after freeze the compact id is a per-word
// prefix count plus a popcount, with no search. That is the usual case
// (generators and converters number vertices densely). A larger id turns
// the set into a sorted slice, grown by radix-sorting each spill buffer's
// ids and merging, with compact ids found by idIndex.
type idSet struct {
	maxDense uint64   // the bitmap holds ids < maxDense
	dense    bool     // bitmap mode
	bits     []uint64 // bitmap: bit id%64 of word id/64
	prefix   []uint32 // after freeze: set bits in words before k
	sorted   []uint64 // sorted mode: ascending distinct ids
	idx      *idIndex
	n        int64
}

// newIDSet allows the bitmap up to budget bytes at its peak (peakBytes):
// the bitmap as it grows, the copy a growth makes and the prefix counts,
// at most 20/64 bytes per id value.
func newIDSet(budget int64) *idSet {
	return &idSet{dense: true, maxDense: uint64(max(budget, 0)) * 32 / 11 &^ 63}
}

// peakBytes bounds what the set holds while it takes batch more ids: the
// bitmap with a copy as large (a growth) and its prefix counts, or the
// sorted ids with the merge that the batch makes.
func (s *idSet) peakBytes(batch int) int64 {
	if s.dense {
		maxW, c := int64(s.maxWords()), int64(cap(s.bits))
		if c < maxW {
			c += maxW
		}
		return 8*c + 4*(maxW+1)
	}
	return 8*int64(cap(s.sorted)) + 8*int64(len(s.sorted)+batch)
}

// maxWords is the most words of the bitmap.
func (s *idSet) maxWords() int { return int((s.maxDense + 63) >> 6) }

// maxID bounds the largest id (after freeze).
func (s *idSet) maxID() uint64 {
	if !s.dense {
		if len(s.sorted) == 0 {
			return 0
		}
		return s.sorted[len(s.sorted)-1]
	}
	return 64 * uint64(len(s.bits))
}

// add inserts ids; a and b are scratch of len(ids) for the sorted mode.
func (s *idSet) add(ids, a, b []uint64) {
	if s.dense {
		for k, id := range ids {
			if id >= s.maxDense {
				s.toSorted()
				s.add(ids[k:], a, b)
				return
			}
			w := int(id >> 6)
			if w >= len(s.bits) {
				// Grown by a quarter at a time, never past maxDense.
				nb := make([]uint64, min(max(w+1, cap(s.bits)*5/4+64), s.maxWords()))
				copy(nb, s.bits)
				s.bits = nb
			}
			s.bits[w] |= 1 << (id & 63)
		}
		return
	}
	c := a[:len(ids)]
	copy(c, ids)
	c = slices.Compact(radixSort(c, b))
	s.sorted = mergeSorted(s.sorted, c)
}

func (s *idSet) toSorted() {
	s.sorted = s.appendAll(nil)
	s.dense, s.bits = false, nil
}

// appendAll appends the ids in ascending order.
func (s *idSet) appendAll(dst []uint64) []uint64 {
	if !s.dense {
		return append(dst, s.sorted...)
	}
	for w, word := range s.bits {
		for word != 0 {
			dst = append(dst, uint64(w)<<6|uint64(bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return dst
}

// freeze ends adding and prepares find.
func (s *idSet) freeze() {
	if !s.dense {
		s.idx = newIDIndex(s.sorted)
		s.n = int64(len(s.sorted))
		return
	}
	s.prefix = make([]uint32, len(s.bits)+1)
	var c int
	for w, word := range s.bits {
		s.prefix[w] = uint32(c)
		c += bits.OnesCount64(word)
	}
	s.prefix[len(s.bits)] = uint32(c)
	s.n = int64(c)
}

// len is the number of ids (after freeze).
func (s *idSet) len() int64 { return s.n }

// bytes is the memory the set holds.
func (s *idSet) bytes() int64 {
	return int64(8*cap(s.bits) + 4*cap(s.prefix) + 8*cap(s.sorted))
}

// find returns the compact id of id, which must be present.
func (s *idSet) find(id uint64) uint32 {
	if s.dense {
		w := id >> 6
		return s.prefix[w] + uint32(bits.OnesCount64(s.bits[w]&(1<<(id&63)-1)))
	}
	return s.idx.find(id)
}

// contains reports whether id is in the set.
func (s *idSet) contains(id uint64) bool {
	if s.dense {
		return id>>6 < uint64(len(s.bits)) && s.bits[id>>6]&(1<<(id&63)) != 0
	}
	_, ok := slices.BinarySearch(s.sorted, id)
	return ok
}

// forEach calls fn with every id in ascending order and its compact id.
func (s *idSet) forEach(fn func(c uint32, id uint64)) {
	if !s.dense {
		for c, id := range s.sorted {
			fn(uint32(c), id)
		}
		return
	}
	var c uint32
	for w, word := range s.bits {
		for word != 0 {
			fn(c, uint64(w)<<6|uint64(bits.TrailingZeros64(word)))
			c++
			word &= word - 1
		}
	}
}
