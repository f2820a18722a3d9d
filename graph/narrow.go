package graph

import (
	"math"
	"unsafe"
)

// NarrowInPlace writes the ids of edges as 32-bit pairs (u0, v0, u1, v1,
// ... in input order, self-loops and duplicates kept) over the memory of
// edges itself, when every id is below 2^32, on workers goroutines (0 =
// all cores), and returns them; edges must not be used afterwards. ok is
// false, and edges untouched, when some id needs 64 bits.
func NarrowInPlace(edges []Edge, workers int) (pairs []uint32, ok bool) {
	w := resolveWorkers(workers)
	if len(edges) == 0 {
		return []uint32{}, true
	}
	if scanEdges(edges, w).maxID > math.MaxUint32 {
		return nil, false
	}
	words := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(edges))), 4*len(edges))
	parts := min(w, max(1, len(edges)/(1<<16)))
	starts := make([]int, parts)
	counts := make([]int, parts)
	// Each part first narrows its edges to the start of its own range
	// (the k-th pair lands at or before the k-th edge's first word), then
	// the parts move left in ascending order, as translateInPlace does.
	forEachStatic(len(edges), parts, func(p, lo, hi int) {
		starts[p], counts[p] = lo, hi-lo
		out := 4 * lo
		for i := lo; i < hi; i++ {
			u, v := edges[i].U, edges[i].V
			words[out], words[out+1] = uint32(u), uint32(v)
			out += 2
		}
	})
	dst := 0
	for p := range parts {
		moveLeft(words, dst, 4*starts[p], 2*counts[p], w)
		dst += 2 * counts[p]
	}
	return words[:dst:dst], true
}

// WideIDs views edges as 64-bit ids, u0, v0, u1, v1, ... without copying:
// the layout the device takes for ids that need 64 bits. The result
// aliases edges.
func WideIDs(edges []Edge) []uint64 {
	if len(edges) == 0 {
		return []uint64{}
	}
	return unsafe.Slice(&edges[0].U, 2*len(edges))
}

// WidenPairs makes edges of 32-bit pairs (u0, v0, u1, v1, ...).
func WidenPairs(pairs []uint32, workers int) []Edge {
	edges := make([]Edge, len(pairs)/2)
	parts := min(resolveWorkers(workers), max(1, len(edges)/(1<<16)))
	forEachStatic(len(edges), parts, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			edges[i] = Edge{U: uint64(pairs[2*i]), V: uint64(pairs[2*i+1])}
		}
	})
	return edges
}
