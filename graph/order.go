package graph

import (
	"fmt"
	"strings"
)

// Order selects how Orient ranks vertices.
type Order int

const (
	// OrderDegree ranks by (degree, compact id) ascending: the default,
	// the "rank by degree" of Polak and TriX. High-degree vertices get the
	// highest ranks, so their forward lists are short.
	OrderDegree Order = iota
	// OrderDegeneracy ranks by k-core peeling order: with a level L
	// starting at 0, repeatedly remove the vertex with the smallest
	// (max(remaining degree, L), compact id) and raise L to that key.
	// Every forward degree is then at most the degeneracy (the final L),
	// at the price of a serial O(n + m) pass.
	OrderDegeneracy
)

// ParseOrder reads an order name as written by Order.String.
func ParseOrder(s string) (Order, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "degree":
		return OrderDegree, nil
	case "degeneracy":
		return OrderDegeneracy, nil
	}
	return 0, fmt.Errorf("graph: unknown order %q (want degree or degeneracy)", s)
}

func (o Order) String() string {
	switch o {
	case OrderDegree:
		return "degree"
	case OrderDegeneracy:
		return "degeneracy"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// degreeRank returns rank[v] for the order (degree, id) ascending: a
// stable counting sort of the ids by degree. The histogram is split over
// ranges of vertices when one histogram per range is cheap next to n.
func degreeRank(adj *CSR, maxDeg int64, w int) []uint32 {
	n := int(adj.NumRows())
	rank := make([]uint32, n)
	nd := int(maxDeg) + 1
	parts := min(w, max(1, n/(4*nd)), max(1, n/(1<<14)))
	hist := make([]uint64, parts*nd)
	off := adj.Offsets
	forEachStatic(n, parts, func(p, lo, hi int) {
		h := hist[p*nd : (p+1)*nd]
		for v := lo; v < hi; v++ {
			h[off[v+1]-off[v]]++
		}
	})
	// Degree-major, part-minor: part p's vertices of degree d follow those
	// of parts < p, which hold smaller ids.
	var pos uint64
	for d := 0; d < nd; d++ {
		for p := 0; p < parts; p++ {
			c := hist[p*nd+d]
			hist[p*nd+d] = pos
			pos += c
		}
	}
	forEachStatic(n, parts, func(p, lo, hi int) {
		h := hist[p*nd : (p+1)*nd]
		for v := lo; v < hi; v++ {
			d := off[v+1] - off[v]
			rank[v] = uint32(h[d])
			h[d]++
		}
	})
	return rank
}

// degeneracyRank returns the k-core peeling order and the degeneracy.
//
// The order is defined so that a naive loop reproduces it: keep a level L
// (initially 0); repeatedly remove the remaining vertex v with the smallest
// key (max(remaining degree of v, L), compact id), and set L to that key.
// L ends as the degeneracy, and every vertex has at most L neighbours
// removed after it, so the forward degree is at most the degeneracy.
//
// The implementation is Batagelj–Zaversnik bucket peeling (Matula–Beck,
// O(n + m)): vertices sit in arrays bucketed by key, and a vertex whose key
// drops moves to the front of its bucket by one swap. Only the bucket at
// the current level needs id order, so only it is held in a min-heap of ids.
func degeneracyRank(adj *CSR) (rank []uint32, degeneracy int64) {
	n := int(adj.NumRows())
	rank = make([]uint32, n)
	if n == 0 {
		return rank, 0
	}
	off, cols := adj.Offsets, adj.Cols
	key := make([]uint32, n)
	var maxDeg uint32
	for v := 0; v < n; v++ {
		key[v] = uint32(off[v+1] - off[v])
		maxDeg = max(maxDeg, key[v])
	}
	// bin[d] is the first position of key d in vert; vert is sorted by key
	// and pos is its inverse.
	bin := make([]uint64, int(maxDeg)+2)
	for _, d := range key {
		bin[d+1]++
	}
	for d := 1; d < len(bin); d++ {
		bin[d] += bin[d-1]
	}
	vert := make([]uint32, n)
	pos := make([]uint64, n)
	{
		next := append([]uint64(nil), bin...)
		for v := 0; v < n; v++ {
			p := next[key[v]]
			next[key[v]]++
			vert[p] = uint32(v)
			pos[v] = p
		}
	}

	var (
		h     idHeap
		level uint32
		i     uint64 // positions < i hold removed vertices
	)
	for i < uint64(n) {
		if h.len() == 0 {
			// The lowest remaining key opens a new level; the whole
			// bucket enters the heap at once.
			level = key[vert[i]]
			h.reset(vert[i:bin[level+1]])
		}
		v := h.pop()
		// Move v to position i, the boundary of the removed prefix.
		pv, u := pos[v], vert[i]
		vert[pv], pos[u] = u, pv
		vert[i], pos[v] = v, i
		rank[v] = uint32(i)
		i++
		for _, x := range cols[off[v]:off[v+1]] {
			if pos[x] < i || key[x] <= level {
				continue
			}
			// Swap x with the first vertex of its bucket, then shrink the
			// bucket from the front: x now ends the bucket below.
			d := key[x]
			px, pw := pos[x], bin[d]
			wv := vert[pw]
			vert[px], pos[wv] = wv, px
			vert[pw], pos[x] = x, pw
			bin[d]++
			key[x] = d - 1
			if d-1 == level {
				h.push(x)
			}
		}
	}
	return rank, int64(level)
}

// idHeap is a binary min-heap of vertex ids.
type idHeap struct{ a []uint32 }

func (h *idHeap) len() int { return len(h.a) }

func (h *idHeap) reset(ids []uint32) {
	h.a = append(h.a[:0], ids...)
	for j := len(h.a)/2 - 1; j >= 0; j-- {
		h.down(j)
	}
}

func (h *idHeap) push(x uint32) {
	h.a = append(h.a, x)
	j := len(h.a) - 1
	for j > 0 {
		p := (j - 1) / 2
		if h.a[p] <= h.a[j] {
			break
		}
		h.a[p], h.a[j] = h.a[j], h.a[p]
		j = p
	}
}

func (h *idHeap) pop() uint32 {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	if last > 0 {
		h.down(0)
	}
	return top
}

func (h *idHeap) down(j int) {
	a := h.a
	for {
		l := 2*j + 1
		if l >= len(a) {
			return
		}
		m := l
		if r := l + 1; r < len(a) && a[r] < a[l] {
			m = r
		}
		if a[j] <= a[m] {
			return
		}
		a[j], a[m] = a[m], a[j]
		j = m
	}
}
