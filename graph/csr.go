package graph

import "fmt"

// CSR is a compressed sparse row adjacency structure. It is the one in-memory
// shape every stage after cleaning shares: the whole forward graph (P = 1) and
// every 2D block B[I][J] of a partition are both a CSR.
//
// Row r's neighbours are Cols[Offsets[r]:Offsets[r+1]], sorted ascending and
// without duplicates. Column ids are uint32: the whole-graph path requires
// n < 2^32, and a partition's local ids (id div P, or id - start) always fit
// once P is large enough.
type CSR struct {
	// Offsets has NumRows()+1 entries; uint64 so that edge counts above 2^32
	// need no special case.
	Offsets []uint64
	// Cols holds the column ids of all rows back to back.
	Cols []uint32
	// NCols is the size of the column index space (the number of vertices
	// on the column side). For the whole forward graph NCols == NumRows().
	NCols int64
}

// NumRows returns the number of rows.
func (c *CSR) NumRows() int64 {
	if len(c.Offsets) == 0 {
		return 0
	}
	return int64(len(c.Offsets) - 1)
}

// NumEdges returns the number of stored entries.
func (c *CSR) NumEdges() int64 { return int64(len(c.Cols)) }

// Row returns the sorted neighbour list of row r. The slice aliases Cols.
func (c *CSR) Row(r int64) []uint32 { return c.Cols[c.Offsets[r]:c.Offsets[r+1]] }

// Degree returns the length of row r.
func (c *CSR) Degree(r int64) int64 { return int64(c.Offsets[r+1] - c.Offsets[r]) }

// Validate checks the structural invariants every consumer relies on:
// monotone offsets that end at len(Cols), columns below NCols, and rows
// strictly increasing. It is O(edges) and is meant for data that crossed a
// trust boundary (decoded shards, library input), not for hot paths.
func (c *CSR) Validate() error {
	if len(c.Offsets) == 0 {
		if len(c.Cols) != 0 {
			return fmt.Errorf("csr: %d columns but no offsets", len(c.Cols))
		}
		return nil
	}
	if c.Offsets[0] != 0 {
		return fmt.Errorf("csr: first offset is %d, want 0", c.Offsets[0])
	}
	if last := c.Offsets[len(c.Offsets)-1]; last != uint64(len(c.Cols)) {
		return fmt.Errorf("csr: last offset is %d but there are %d columns", last, len(c.Cols))
	}
	if c.NCols < 0 || c.NCols > 1<<32 {
		return fmt.Errorf("csr: column count %d out of range", c.NCols)
	}
	for r := 0; r+1 < len(c.Offsets); r++ {
		lo, hi := c.Offsets[r], c.Offsets[r+1]
		if hi < lo {
			return fmt.Errorf("csr: row %d: offsets decrease (%d > %d)", r, lo, hi)
		}
		for k := lo; k < hi; k++ {
			col := c.Cols[k]
			if int64(col) >= c.NCols {
				return fmt.Errorf("csr: row %d: column %d out of range (%d columns)", r, col, c.NCols)
			}
			if k > lo && c.Cols[k-1] >= col {
				return fmt.Errorf("csr: row %d: columns not strictly increasing at %d", r, col)
			}
		}
	}
	return nil
}
