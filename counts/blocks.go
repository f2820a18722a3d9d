package counts

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/partition"
)

// Blocks sums the partial counts of the subtasks of a P x P partitioning
// (api.Partial, in local ids) into per-vertex counts over forward ids and
// per-edge support per block. The caller adds each subtask's partials
// once: the attempt whose result the scheduler accepts, and no other.
// Add is safe for concurrent use.
type Blocks struct {
	layout  *partition.Layout
	perEdge bool

	mu  sync.Mutex
	tri []uint64   // per forward id
	sup [][]uint64 // per block i*P+j, by position in its Cols; nil without per-edge
}

// NewBlocks prepares the sums for a layout of n vertices whose blocks
// hold blockEdges(i, j) edges.
func NewBlocks(l *partition.Layout, n int64, blockEdges func(i, j int) int64, perEdge bool) *Blocks {
	b := &Blocks{layout: l, perEdge: perEdge, tri: make([]uint64, n)}
	if perEdge {
		b.sup = make([][]uint64, l.P*l.P)
		for i := range l.P {
			for j := range l.P {
				b.sup[i*l.P+j] = make([]uint64, blockEdges(i, j))
			}
		}
	}
	return b
}

// PerEdge reports whether b sums per-edge support too.
func (b *Blocks) PerEdge() bool { return b.perEdge }

// Add adds the partials of subtask (i, j, k). It checks every length
// against the layout and blocks, so a malformed result is an error naming
// the subtask, never a wrong sum.
func (b *Blocks) Add(i, j, k int, p *api.Partial) error { return b.apply(i, j, k, p, false) }

// Remove takes back partials added earlier for subtask (i, j, k): the
// scheduler overturned or reopened the result they came with.
func (b *Blocks) Remove(i, j, k int, p *api.Partial) error { return b.apply(i, j, k, p, true) }

// Check reports whether Add would accept p for subtask (i, j, k), without
// adding it.
func (b *Blocks) Check(i, j, k int, p *api.Partial) error { return b.check(i, j, k, p) }

func (b *Blocks) check(i, j, k int, p *api.Partial) error {
	P := b.layout.P
	if i < 0 || j < 0 || k < 0 || i >= P || j >= P || k >= P {
		return fmt.Errorf("counts: subtask (%d,%d,%d) outside P = %d", i, j, k, P)
	}
	if p == nil {
		return fmt.Errorf("counts: subtask (%d,%d,%d): no per-vertex counts in its result", i, j, k)
	}
	groups := [3]int{i, j, k}
	for n, vs := range [3][]uint64{p.VI, p.VJ, p.VK} {
		if size := b.layout.GroupSize(groups[n]); int64(len(vs)) > size {
			return fmt.Errorf("counts: subtask (%d,%d,%d): %d per-vertex counts for group %d of %d vertices", i, j, k, len(vs), groups[n], size)
		}
	}
	blocks := [3][2]int{{i, j}, {i, k}, {j, k}}
	es := [3][]uint64{p.EIJ, p.EIK, p.EJK}
	if b.perEdge {
		for n, e := range es {
			if want := len(b.sup[blocks[n][0]*P+blocks[n][1]]); len(e) != want && !(len(e) == 0 && noTriangles(p)) {
				return fmt.Errorf("counts: subtask (%d,%d,%d): %d per-edge counts for block (%d,%d) of %d edges", i, j, k, len(e), blocks[n][0], blocks[n][1], want)
			}
		}
	}
	return nil
}

func (b *Blocks) apply(i, j, k int, p *api.Partial, remove bool) error {
	if err := b.check(i, j, k, p); err != nil {
		return err
	}
	P := b.layout.P
	groups := [3]int{i, j, k}
	blocks := [3][2]int{{i, j}, {i, k}, {j, k}}
	es := [3][]uint64{p.EIJ, p.EIK, p.EJK}
	b.mu.Lock()
	defer b.mu.Unlock()
	for n, vs := range [3][]uint64{p.VI, p.VJ, p.VK} {
		for x, c := range vs {
			if c != 0 {
				if remove {
					c = -c // uint64: adding the two's complement subtracts
				}
				b.tri[b.layout.Global(groups[n], uint32(x))] += c
			}
		}
	}
	if b.perEdge {
		for n, e := range es {
			dst := b.sup[blocks[n][0]*P+blocks[n][1]]
			for q, c := range e {
				if remove {
					c = -c
				}
				dst[q] += c
			}
		}
	}
	return nil
}

// noTriangles reports whether p closed no triangle, in which case its
// edge slices may be empty: a worker need not allocate them.
func noTriangles(p *api.Partial) bool {
	for _, vs := range [3][]uint64{p.VI, p.VJ, p.VK} {
		for _, c := range vs {
			if c != 0 {
				return false
			}
		}
	}
	return true
}

// Counts returns the sums as Counts in original ids (ids[forward id]),
// with the edges read from the blocks through block, which is called
// once per non-empty block per pass over the edges. An error of block
// ends the pass and is returned by the Counts' EdgeErr.
func (b *Blocks) Counts(ctx context.Context, ids []uint64, blockEdges func(i, j int) int64,
	block func(ctx context.Context, i, j int) (*graph.CSR, error)) (*Counts, error) {
	if len(ids) != len(b.tri) {
		return nil, fmt.Errorf("counts: %d ids for %d vertices", len(ids), len(b.tri))
	}
	l := b.layout
	var edgeErr error
	edges := func(yield func([2]uint32, uint64) bool) {
		edgeErr = nil
		for i := range l.P {
			for j := range l.P {
				if blockEdges(i, j) == 0 {
					continue
				}
				g, err := block(ctx, i, j)
				if err != nil {
					edgeErr = fmt.Errorf("counts: block (%d,%d): %w", i, j, err)
					return
				}
				var sup []uint64
				if b.perEdge {
					sup = b.sup[i*l.P+j]
					if int64(len(sup)) != g.NumEdges() {
						edgeErr = fmt.Errorf("counts: block (%d,%d) has %d edges, its support %d", i, j, g.NumEdges(), len(sup))
						return
					}
				}
				for u := range g.NumRows() {
					gu := l.Global(i, uint32(u))
					for p := g.Offsets[u]; p < g.Offsets[u+1]; p++ {
						var s uint64
						if sup != nil {
							s = sup[p]
						}
						if !yield([2]uint32{gu, l.Global(j, g.Cols[p])}, s) {
							return
						}
					}
				}
			}
		}
	}
	c := &Counts{OrigID: ids, Triangles: b.tri, PerEdge: b.perEdge, Edges: iter.Seq2[[2]uint32, uint64](edges),
		EdgeErr: func() error { return edgeErr }}
	c.Degree = Degrees(len(ids), c.Edges)
	if err := edgeErr; err != nil {
		return nil, err
	}
	return c, nil
}
