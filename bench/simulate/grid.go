package simulate

import (
	"fmt"

	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// Grid is what the simulator knows of a P x P partition: the size of
// every group and the edge count of every block. The manifest has it
// for its own P; BlockStats for every P that divides its fine P.
type Grid struct {
	Scheme storage.Scheme
	P      int
	// Vertices and Edges are the forward graph's.
	Vertices, Edges int64
	// GroupSizes has P entries, the rows (and columns) of every block of
	// the group; BlockEdges P*P, row-major.
	GroupSizes []int64
	BlockEdges []int64
}

// GridFromManifest is the grid of a stored partitioning.
func GridFromManifest(m *storage.Manifest) *Grid {
	g := &Grid{Scheme: m.Scheme, P: m.P, Vertices: m.Graph.Vertices, Edges: m.Graph.Edges,
		GroupSizes: append([]int64(nil), m.GroupSizes...), BlockEdges: make([]int64, m.P*m.P)}
	for _, s := range m.Shards {
		g.BlockEdges[s.I*m.P+s.J] = int64(s.Edges)
	}
	return g
}

// NewGrid checks a grid's shape and sums: P group sizes adding up to
// the vertices, P*P non-negative block edge counts adding up to the
// edges. where names its source in errors.
func NewGrid(where string, scheme storage.Scheme, p int, vertices, edges int64, groups, blocks []int64) (*Grid, error) {
	if p < 1 || len(groups) != p || len(blocks) != p*p {
		return nil, fmt.Errorf("simulate: %s: P = %d with %d group sizes and %d block counts", where, p, len(groups), len(blocks))
	}
	var nv, ne int64
	for _, v := range groups {
		if v < 0 {
			return nil, fmt.Errorf("simulate: %s: a negative group size", where)
		}
		nv += v
	}
	for _, e := range blocks {
		if e < 0 {
			return nil, fmt.Errorf("simulate: %s: a negative block edge count", where)
		}
		ne += e
	}
	if nv != vertices || ne != edges {
		return nil, fmt.Errorf("simulate: %s: groups hold %d vertices and blocks %d edges, the graph %d and %d", where, nv, ne, vertices, edges)
	}
	return &Grid{Scheme: scheme, P: p, Vertices: vertices, Edges: edges, GroupSizes: groups, BlockEdges: blocks}, nil
}

// Stat is block (i, j)'s size as the partitioner's estimates take it.
func (g *Grid) Stat(i, j int) partition.BlockStat {
	return partition.BlockStat{Rows: g.GroupSizes[i], Edges: g.BlockEdges[i*g.P+j]}
}

// Subtasks lists the job's subtasks in the coordinator's order: the
// same enumeration as partition.Subtasks of the manifest.
func (g *Grid) Subtasks() []partition.Subtask {
	return partition.Enumerate(g.P, g.Stat)
}

// blockBytes is a decoded block's size as the worker's cache counts it:
// the plain CSR, 8 bytes per offset and 4 per column.
func blockBytes(s partition.BlockStat) int64 { return 8*(s.Rows+1) + 4*s.Edges }
