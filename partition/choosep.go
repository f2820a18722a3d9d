package partition

import (
	"fmt"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/storage"
)

// Choosing P (TRUST section 5: a subtask holds three blocks, so P must make
// 3|E|/P^2 edges fit the device).
//
// Model: a subtask needs its three blocks resident plus kernel scratch.
// A block of e edges over r rows takes BytesPerEdge*e + BytesPerRow*(r+1)
// bytes (plain CSR: 4-byte columns, 8-byte offsets). Scratch is
// ScratchPerEdge bytes per base edge (per-edge partial counts, hash tables)
// plus ScratchFixed. With only graph totals, the largest block is taken to
// be Skew*|E|/P^2 (hash blocks sit within a few percent of the mean; the
// range scheme's bound search stops within 15% on scale-free graphs and
// can stay above that on small clustered ones). With real block sizes
// (after a Split) FitsBudget checks the three largest blocks exactly.

// MemModel is the memory model of one subtask on a device.
type MemModel struct {
	BytesPerEdge   int64 // default 4
	BytesPerRow    int64 // default 8
	ScratchPerEdge int64 // default 8
	ScratchFixed   int64 // default 64 MiB
}

func (m MemModel) withDefaults() MemModel {
	if m.BytesPerEdge == 0 {
		m.BytesPerEdge = 4
	}
	if m.BytesPerRow == 0 {
		m.BytesPerRow = 8
	}
	if m.ScratchPerEdge == 0 {
		m.ScratchPerEdge = 8
	}
	if m.ScratchFixed == 0 {
		m.ScratchFixed = 64 << 20
	}
	return m
}

// subtaskBytes is the memory of a subtask over three blocks (the first is
// the base block, whose edges size the scratch).
func (m MemModel) subtaskBytes(blocks [3]BlockStat) int64 {
	var b int64
	for _, s := range blocks {
		b += m.BytesPerEdge*s.Edges + m.BytesPerRow*(s.Rows+1)
	}
	return b + m.ScratchPerEdge*blocks[0].Edges + m.ScratchFixed
}

// ChooseP returns the smallest P (up to maxP) for which a subtask of a graph
// with the given vertices and edges fits budget bytes under the model.
func ChooseP(vertices, edges int64, rangeScheme bool, budget int64, model MemModel) (int, error) {
	m := model.withDefaults()
	for p := 1; p <= maxP; p++ {
		pp := float64(p) * float64(p)
		largest := float64(edges) / pp * 1.05
		if p == 1 {
			largest = float64(edges)
		} else if rangeScheme {
			largest = float64(edges) / pp * 1.15
		}
		rows := (vertices + int64(p) - 1) / int64(p)
		if rangeScheme && p > 1 {
			rows = vertices // a range group can hold most vertices
		}
		b := BlockStat{Rows: rows, Edges: int64(largest) + 1}
		three := [3]BlockStat{b, b, b}
		if p == 1 {
			three = [3]BlockStat{b, {}, {}} // three views of one CSR
		}
		if m.subtaskBytes(three) <= budget {
			return p, nil
		}
	}
	return 0, fmt.Errorf("partition: no P up to %d fits %d edges in %d bytes per subtask", maxP, edges, budget)
}

// FitsBudget reports whether every subtask of a partition with the given
// block sizes fits budget bytes: it takes the three largest blocks
// together, an upper bound on any real subtask.
func FitsBudget(p int, stat func(i, j int) BlockStat, budget int64, model MemModel) bool {
	m := model.withDefaults()
	var top [3]BlockStat
	cost := func(s BlockStat) int64 { return m.BytesPerEdge*s.Edges + m.BytesPerRow*(s.Rows+1) }
	for i := range p {
		for j := range p {
			s := stat(i, j)
			for k := range top {
				if cost(s) > cost(top[k]) {
					copy(top[k+1:], top[k:2])
					top[k] = s
					break
				}
			}
		}
	}
	return m.subtaskBytes(top) <= budget
}

// ChoosePForGraph starts from ChooseP's estimate and raises P until the
// real blocks of fwd under scheme fit (FitsBudget), measuring block sizes
// with one pass over the edges per candidate.
func ChoosePForGraph(fwd *graph.CSR, scheme storage.Scheme, budget int64, model MemModel, workers int) (int, error) {
	p, err := ChooseP(fwd.NumRows(), fwd.NumEdges(), scheme == storage.SchemeRange, budget, model)
	if err != nil {
		return 0, err
	}
	for ; p <= maxP; p++ {
		l, err := NewLayout(fwd, scheme, p, workers)
		if err != nil {
			return 0, err
		}
		counts := make([]int64, p*p)
		for u := int64(0); u < fwd.NumRows(); u++ {
			gi := l.Group(uint32(u))
			for _, v := range fwd.Row(u) {
				counts[gi*p+l.Group(v)]++
			}
		}
		stat := func(i, j int) BlockStat { return BlockStat{Rows: l.GroupSize(i), Edges: counts[i*p+j]} }
		if FitsBudget(p, stat, budget, model) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("partition: no P up to %d fits the blocks of %d edges in %d bytes", maxP, fwd.NumEdges(), budget)
}
