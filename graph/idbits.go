package graph

import (
	"fmt"
	"math/bits"
)

// idBitsMax is the largest max id for which the compaction of 32-bit
// pairs marks ids in per-part bitmaps (maxID/8 bytes a part, in cache for
// the graphs that fit one machine's memory) instead of one shared table
// of 4 bytes an id. Tests lower it to reach the table's path.
var idBitsMax uint64 = 1<<26 - 1

// idMap maps an input id with a non-loop edge to its compact id: through
// rank bits (rk[2i] holds the marks of ids 64i to 64i+63, rk[2i+1] the
// number of marked ids below 64i), which take 2 bits an id and so stay in
// cache, or through a table indexed by id; with neither, compact ids are
// the input's own.
type idMap struct {
	table []uint32
	rk    []uint64
}

func (m *idMap) id(u uint32) uint32 {
	if m.rk != nil {
		i := 2 * uint(u>>6)
		return uint32(m.rk[i+1]) + uint32(bits.OnesCount64(m.rk[i]&(1<<(u&63)-1)))
	}
	if m.table != nil {
		return m.table[u]
	}
	return u
}

// markIDBits marks the ids of pairs, ids at most maxID, in one bitmap per
// part of the static split into len(loops) parts (loops[p] being part
// p's loops), and numbers the ids with a non-loop edge in ascending
// order: the result's rank bits, the compact ids' input ids and the
// number of ids seen only in loops.
func markIDBits(pairs []uint32, maxID uint64, loops []uint64, w int) (m idMap, origID []uint64, isolated uint64, err error) {
	n := len(pairs) / 2
	parts := len(loops)
	nw := int(maxID>>6) + 1
	act := make([][]uint64, parts)
	loop := make([][]uint64, parts)
	forEachStatic(n, parts, func(p, lo, hi int) {
		a := make([]uint64, nw)
		var l []uint64
		if loops[p] > 0 {
			l = make([]uint64, nw)
		}
		for i := lo; i < hi; i++ {
			u, v := pairs[2*i], pairs[2*i+1]
			if u == v {
				l[u>>6] |= 1 << (u & 63)
				continue
			}
			a[u>>6] |= 1 << (u & 63)
			a[v>>6] |= 1 << (v & 63)
		}
		act[p], loop[p] = a, l
	})

	// Merge into part 0's bitmaps, count by range, then number.
	rparts := min(w, max(1, nw/(1<<12)))
	counts := make([]uint64, rparts)
	loneIDs := make([]uint64, rparts)
	a0 := act[0]
	forEachStatic(nw, rparts, func(r, lo, hi int) {
		for _, a := range act[1:] {
			for i := lo; i < hi; i++ {
				a0[i] |= a[i]
			}
		}
		var c, lone uint64
		for i := lo; i < hi; i++ {
			c += uint64(bits.OnesCount64(a0[i]))
			var l uint64
			for _, lp := range loop {
				if lp != nil {
					l |= lp[i]
				}
			}
			lone += uint64(bits.OnesCount64(l &^ a0[i]))
		}
		counts[r], loneIDs[r] = c, lone
	})
	var total uint64
	for r := range counts {
		isolated += loneIDs[r]
		counts[r], total = total, total+counts[r]
	}
	if total > vertexLimit {
		return idMap{}, nil, 0, fmt.Errorf("%d vertices: %w", total, ErrTooManyVertices)
	}
	origID = make([]uint64, total)
	rk := make([]uint64, 2*nw)
	forEachStatic(nw, rparts, func(r, lo, hi int) {
		k := counts[r]
		for i := lo; i < hi; i++ {
			b := a0[i]
			rk[2*i], rk[2*i+1] = b, k
			for ; b != 0; b &= b - 1 {
				origID[k] = uint64(i)<<6 | uint64(bits.TrailingZeros64(b))
				k++
			}
		}
	})
	return idMap{rk: rk}, origID, isolated, nil
}
