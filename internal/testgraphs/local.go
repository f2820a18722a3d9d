package testgraphs

import (
	"slices"
)

// Local is the per-vertex and per-edge truth of an edge list over
// original ids, computed the slow, obvious way: sorted neighbour sets and
// one intersection per edge. It shares no code with trigrid's cleaning or
// kernels.
type Local struct {
	// Degree and Triangles per vertex (ids with at least one edge that is
	// not a self-loop).
	Degree, Triangles map[uint64]uint64
	// Support per undirected edge {u, v}, keyed [min, max].
	Support map[[2]uint64]uint64
	Total   uint64
	Wedges  uint64
}

// LocalCounts computes Local for edges (self-loops and duplicates in any
// direction are ignored).
func LocalCounts(edges [][2]uint64) *Local {
	nb := map[uint64][]uint64{}
	for _, e := range edges {
		if e[0] != e[1] {
			nb[e[0]] = append(nb[e[0]], e[1])
			nb[e[1]] = append(nb[e[1]], e[0])
		}
	}
	for x, s := range nb {
		slices.Sort(s)
		nb[x] = slices.Compact(s)
	}
	l := &Local{Degree: map[uint64]uint64{}, Triangles: map[uint64]uint64{}, Support: map[[2]uint64]uint64{}}
	for x, s := range nb {
		d := uint64(len(s))
		l.Degree[x] = d
		l.Triangles[x] = 0
		l.Wedges += d * (d - 1) / 2
	}
	var supSum uint64
	for u, s := range nb {
		for _, v := range s {
			if v < u {
				continue
			}
			a, b := s, nb[v]
			var c uint64
			for i, j := 0, 0; i < len(a) && j < len(b); {
				switch {
				case a[i] < b[j]:
					i++
				case a[i] > b[j]:
					j++
				default:
					c++
					i++
					j++
				}
			}
			l.Support[[2]uint64{u, v}] = c
			// Each triangle at u is seen from both of u's edges in it.
			l.Triangles[u] += c
			l.Triangles[v] += c
			supSum += c
		}
	}
	for x := range l.Triangles {
		l.Triangles[x] /= 2
	}
	l.Total = supSum / 3
	return l
}
