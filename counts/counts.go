// Package counts holds a graph's per-vertex triangle counts and per-edge
// triangle support in the input's original ids, the clustering
// coefficients derived from them, and writes them as TSV (plain, gzip or
// zstd), trigrid's binary format or Parquet, streamed row by row.
//
// Definitions (the ones NetworkX and SNAP use):
//
//   - triangles(x): the triangles that contain vertex x.
//   - support(u, v): the triangles that contain the edge {u, v}.
//   - local clustering C(x) = 2 triangles(x) / (d(x) (d(x) - 1)) for a
//     vertex of degree d(x) >= 2, and 0 below degree 2.
//   - average clustering: the mean of C(x) over the vertices of the
//     cleaned graph (every id with at least one edge that is not a
//     self-loop; ids seen only in self-loops are not vertices).
//   - transitivity: 3 x triangles / wedges, where wedges is the sum over
//     vertices of d(d - 1) / 2; 0 when there is no wedge.
package counts

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
)

// Counts is the per-vertex and per-edge result of one graph, over its
// forward (rank) ids 0..n-1.
type Counts struct {
	// OrigID maps a rank id to the input's id.
	OrigID []uint64
	// Triangles holds the triangles of each vertex, by rank id.
	Triangles []uint64
	// Degree holds each vertex's undirected degree, by rank id.
	Degree []uint32
	// Edges yields every undirected edge once, as rank ids, with its
	// support (0 when PerEdge is false).
	Edges iter.Seq2[[2]uint32, uint64]
	// PerEdge says whether the support of Edges was counted.
	PerEdge bool
	// EdgeErr, when not nil, returns the error that ended the last pass
	// over Edges early (a block that could not be read), or nil.
	EdgeErr func() error
}

// edgeErr is the error of the last pass over Edges.
func (c *Counts) edgeErr() error {
	if c.EdgeErr == nil {
		return nil
	}
	return c.EdgeErr()
}

// Check verifies the invariants a writer relies on: equal lengths, and
// per-vertex counts that sum to 3 x total (and per-edge support too, when
// counted). It costs one pass over the vertices and, with PerEdge, one
// over the edges.
func (c *Counts) Check(total uint64) error {
	n := len(c.OrigID)
	if len(c.Triangles) != n || len(c.Degree) != n {
		return fmt.Errorf("counts: %d ids, %d triangle counts, %d degrees", n, len(c.Triangles), len(c.Degree))
	}
	var sum uint64
	for _, t := range c.Triangles {
		sum += t
	}
	if sum != 3*total {
		return fmt.Errorf("counts: per-vertex counts sum to %d, not 3 x %d triangles", sum, total)
	}
	if c.PerEdge && c.Edges != nil {
		sum = 0
		for _, s := range c.Edges {
			sum += s
		}
		if err := c.edgeErr(); err != nil {
			return err
		}
		if sum != 3*total {
			return fmt.Errorf("counts: per-edge support sums to %d, not 3 x %d triangles", sum, total)
		}
	}
	return nil
}

// Clustering returns the local clustering coefficient of a vertex with t
// triangles and degree d: 2t / (d (d - 1)), and 0 when d < 2.
func Clustering(t uint64, d uint32) float64 {
	if d < 2 {
		return 0
	}
	return 2 * float64(t) / (float64(d) * float64(d-1))
}

// AverageClustering is the mean of Clustering over all vertices (0 for a
// graph without vertices). The sum is compensated (Neumaier), so the
// result does not depend on the order of millions of small terms beyond
// the last bit or two.
func (c *Counts) AverageClustering() float64 {
	if len(c.Triangles) == 0 {
		return 0
	}
	var sum, comp float64
	for x, t := range c.Triangles {
		v := Clustering(t, c.Degree[x])
		s := sum + v
		if abs(sum) >= abs(v) {
			comp += (sum - s) + v
		} else {
			comp += (v - s) + sum
		}
		sum = s
	}
	return (sum + comp) / float64(len(c.Triangles))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Transitivity returns 3 x triangles / wedges, or 0 without wedges.
func Transitivity(triangles, wedges uint64) float64 {
	if wedges == 0 {
		return 0
	}
	return 3 * float64(triangles) / float64(wedges)
}

// Degrees returns the undirected degree of each of n vertices, counted
// from edges.
func Degrees(n int, edges iter.Seq2[[2]uint32, uint64]) []uint32 {
	deg := make([]uint32, n)
	for e := range edges {
		deg[e[0]]++
		deg[e[1]]++
	}
	return deg
}

// Vertex is one row of the per-vertex output.
type Vertex struct {
	ID         uint64  `json:"id" parquet:"id"`
	Degree     uint64  `json:"degree" parquet:"degree"`
	Triangles  uint64  `json:"triangles" parquet:"triangles"`
	Clustering float64 `json:"clustering" parquet:"clustering"`
}

// Edge is one row of the per-edge output: U < V in original ids.
type Edge struct {
	U       uint64 `json:"u" parquet:"u"`
	V       uint64 `json:"v" parquet:"v"`
	Support uint64 `json:"support" parquet:"support"`
}

func (c *Counts) vertex(x uint32) Vertex {
	return Vertex{ID: c.OrigID[x], Degree: uint64(c.Degree[x]), Triangles: c.Triangles[x], Clustering: Clustering(c.Triangles[x], c.Degree[x])}
}

func (c *Counts) edge(e [2]uint32, s uint64) Edge {
	u, v := c.OrigID[e[0]], c.OrigID[e[1]]
	return Edge{U: min(u, v), V: max(u, v), Support: s}
}

// Vertices yields every vertex in ascending original id. It sorts a
// permutation of the rank ids (byID: 24 bytes per vertex) unless OrigID is
// already ascending.
func (c *Counts) Vertices() iter.Seq[Vertex] {
	return func(yield func(Vertex) bool) {
		n := len(c.OrigID)
		if slices.IsSorted(c.OrigID) {
			for x := range n {
				if !yield(c.vertex(uint32(x))) {
					return
				}
			}
			return
		}
		for _, x := range byID(c.OrigID) {
			if !yield(c.vertex(x)) {
				return
			}
		}
	}
}

// EdgeRows yields every edge in original ids, in the order of Edges.
func (c *Counts) EdgeRows() iter.Seq[Edge] {
	return func(yield func(Edge) bool) {
		for e, s := range c.Edges {
			if !yield(c.edge(e, s)) {
				return
			}
		}
	}
}

// TopVertices returns the k vertices with the most triangles, most first;
// ties go to the smaller original id.
func (c *Counts) TopVertices(k int) []Vertex {
	return topK(k, func(yield func(Vertex) bool) {
		for x := range c.Triangles {
			if !yield(c.vertex(uint32(x))) {
				return
			}
		}
	}, func(a, b Vertex) int { return cmp.Or(cmp.Compare(b.Triangles, a.Triangles), cmp.Compare(a.ID, b.ID)) })
}

// TopEdges returns the k edges with the highest support, highest first;
// ties go to the smaller (u, v). It needs PerEdge.
func (c *Counts) TopEdges(k int) []Edge {
	if !c.PerEdge || c.Edges == nil {
		return nil
	}
	return topK(k, c.EdgeRows(), func(a, b Edge) int {
		return cmp.Or(cmp.Compare(b.Support, a.Support), cmp.Compare(a.U, b.U), cmp.Compare(a.V, b.V))
	})
}

// topK keeps the k first of rows under less in a bounded heap (the worst
// kept row at the root), so memory stays O(k) however many rows pass.
func topK[T any](k int, rows iter.Seq[T], less func(a, b T) int) []T {
	if k <= 0 {
		return nil
	}
	h := make([]T, 0, k)
	// worse(i, j): h[i] ranks after h[j].
	worse := func(i, j int) bool { return less(h[i], h[j]) > 0 }
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(h) && worse(l, m) {
				m = l
			}
			if r := l + 1; r < len(h) && worse(r, m) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for r := range rows {
		if len(h) < k {
			h = append(h, r)
			for i := len(h) - 1; i > 0 && worse(i, (i-1)/2); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
			continue
		}
		if less(r, h[0]) < 0 {
			h[0] = r
			down(0)
		}
	}
	slices.SortFunc(h, less)
	return h
}

// byID returns the rank ids in ascending order of ids[rank]: an LSD radix
// sort of (id, rank) pairs, one pass per byte in which the ids differ, the
// ids moving with their ranks so that every pass reads sequentially.
// Stable: equal ids keep their rank order.
func byID(ids []uint64) []uint32 {
	n := len(ids)
	keys, ktmp := slices.Clone(ids), make([]uint64, n)
	perm, ptmp := make([]uint32, n), make([]uint32, n)
	for x := range perm {
		perm[x] = uint32(x)
	}
	or, and := uint64(0), ^uint64(0)
	for _, v := range keys {
		or |= v
		and &= v
	}
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		if ((or^and)>>shift)&0xff == 0 {
			continue // every id has the same byte here
		}
		clear(count[:])
		for _, k := range keys {
			count[(k>>shift)&0xff]++
		}
		pos := 0
		for d, c := range count {
			count[d], pos = pos, pos+c
		}
		for i, k := range keys {
			d := (k >> shift) & 0xff
			ktmp[count[d]], ptmp[count[d]] = k, perm[i]
			count[d]++
		}
		keys, ktmp, perm, ptmp = ktmp, keys, ptmp, perm
	}
	return perm
}
