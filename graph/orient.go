package graph

import (
	"errors"
	"fmt"

	"github.com/trigrid/trigrid/internal/parallel"
)

// OrientStats describes the undirected graph and its orientation.
type OrientStats struct {
	Wedges       uint64 // sum over vertices of d(d-1)/2 in the undirected graph
	MaxDegree    int64  // undirected
	MaxOutDegree int64  // forward graph
	Degeneracy   int64  // k of the k-core decomposition when OrderDegeneracy, else 0
}

// orientChunk is the number of rows a worker takes at a time in Orient.
const orientChunk = 2048

// Orient ranks the vertices of u (OrderDegree: by (degree, compact id)
// ascending; OrderDegeneracy: k-core peeling order, ties by compact id, as
// defined on OrderDegeneracy),
// relabels every vertex by its rank and keeps u->v when rank(u) < rank(v).
// The result is the forward CSR over new ids (NCols = n, rows sorted), in
// which every triangle a < b < c has exactly the edges a->b, a->c, b->c.
// rank[compact id] is the new id.
func Orient(u *Undirected, order Order, workers int) (fwd *CSR, rank []uint32, st OrientStats, err error) {
	if u == nil || u.Adj == nil {
		return nil, nil, st, errors.New("graph: orient: nil graph")
	}
	if order != OrderDegree && order != OrderDegeneracy {
		return nil, nil, st, fmt.Errorf("graph: orient: unknown order %d", int(order))
	}
	adj := u.Adj
	n := adj.NumRows()
	if n > maxVertices {
		return nil, nil, st, fmt.Errorf("graph: orient: %d rows: %w", n, ErrTooManyVertices)
	}
	if adj.NCols != n || len(adj.Offsets) > 0 && adj.Offsets[n] != uint64(len(adj.Cols)) {
		return nil, nil, st, fmt.Errorf("graph: orient: adjacency is not square (%d rows, %d columns) or offsets do not end at %d entries",
			n, adj.NCols, len(adj.Cols))
	}
	w := resolveWorkers(workers)
	if err := checkAdjacency(adj, w); err != nil {
		return nil, nil, st, fmt.Errorf("graph: orient: %w", err)
	}
	st.Wedges, st.MaxDegree = degreeStats(adj, w)

	switch order {
	case OrderDegree:
		rank = degreeRank(adj, st.MaxDegree, w)
	case OrderDegeneracy:
		rank, st.Degeneracy = degeneracyRank(adj)
	default:
		return nil, nil, st, fmt.Errorf("graph: orient: unknown order %d", int(order))
	}
	fwd, st.MaxOutDegree = forward(adj, rank, w)
	return fwd, rank, st, nil
}

// checkAdjacency checks what Orient indexes by: monotone offsets and
// columns below n. It is a cheap parallel pass; row order and symmetry are
// Clean's contract and are not re-checked.
func checkAdjacency(adj *CSR, w int) error {
	n := int(adj.NumRows())
	if n > 0 && adj.Offsets[0] != 0 {
		return fmt.Errorf("first offset is %d, want 0", adj.Offsets[0])
	}
	parts := min(w, max(1, n/(1<<16)))
	errs := make([]error, parts)
	off, cols := adj.Offsets, adj.Cols
	forEachStatic(n, parts, func(p, lo, hi int) {
		for v := lo; v < hi; v++ {
			if off[v+1] < off[v] || off[v+1] > uint64(len(cols)) {
				errs[p] = fmt.Errorf("row %d: offsets [%d, %d) out of order or past %d entries", v, off[v], off[v+1], len(cols))
				return
			}
			for _, x := range cols[off[v]:off[v+1]] {
				if int(x) >= n {
					errs[p] = fmt.Errorf("row %d: column %d out of range (%d vertices)", v, x, n)
					return
				}
			}
		}
	})
	return errors.Join(errs...)
}

// degreeStats returns the wedge count and the maximum degree.
func degreeStats(adj *CSR, w int) (wedges uint64, maxDeg int64) {
	n := int(adj.NumRows())
	parts := min(w, max(1, n/(1<<16)))
	ws := make([]uint64, parts)
	ms := make([]int64, parts)
	off := adj.Offsets
	forEachStatic(n, parts, func(p, lo, hi int) {
		var s uint64
		var m uint64
		for v := lo; v < hi; v++ {
			d := off[v+1] - off[v]
			s += d * (d - 1) / 2
			m = max(m, d)
		}
		ws[p], ms[p] = s, int64(m)
	})
	for p := range ws {
		wedges += ws[p]
		maxDeg = max(maxDeg, ms[p])
	}
	return wedges, maxDeg
}

// forward builds the forward CSR: row rank[v] holds the ranks of v's
// neighbours of higher rank, sorted. It counts, scans, then fills and sorts
// each row; all passes are parallel over vertices.
func forward(adj *CSR, rank []uint32, w int) (*CSR, int64) {
	n := int(adj.NumRows())
	off, cols := adj.Offsets, adj.Cols
	fo := make([]uint64, n+1)
	parallel.Dynamic(n, orientChunk, w, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			rv := rank[v]
			var d uint64
			for _, x := range cols[off[v]:off[v+1]] {
				if rank[x] > rv {
					d++
				}
			}
			fo[rv] = d
		}
	})
	var maxOut uint64
	for _, d := range fo[:n] {
		maxOut = max(maxOut, d)
	}
	total := exclusiveScan(fo[:n], w)
	fo[n] = total
	fc := make([]uint32, total)
	parallel.Dynamic(n, orientChunk, w, func(lo, hi int) {
		var scratch []uint32
		for v := lo; v < hi; v++ {
			rv := rank[v]
			row := fc[fo[rv]:fo[rv+1]]
			j := 0
			for _, x := range cols[off[v]:off[v+1]] {
				if rx := rank[x]; rx > rv {
					row[j] = rx
					j++
				}
			}
			scratch = sortUint32(row, scratch)
		}
	})
	return &CSR{Offsets: fo, Cols: fc, NCols: int64(n)}, int64(maxOut)
}

// ForwardFromEdges chains Clean and Orient, releasing the undirected graph
// as soon as the forward graph is built (only the forward CSR is returned;
// the original ids are dropped with the undirected graph).
func ForwardFromEdges(edges []Edge, order Order, workers int) (*CSR, CleanStats, OrientStats, error) {
	u, cst, err := Clean(edges, CleanOptions{Workers: workers})
	if err != nil {
		return nil, cst, OrientStats{}, err
	}
	u.OrigID = nil // not returned: free it before the forward graph is built
	fwd, _, ost, err := Orient(u, order, workers)
	u = nil
	if err != nil {
		return nil, cst, ost, err
	}
	return fwd, cst, ost, nil
}
