package partition

import (
	"context"
	"fmt"
	"math"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/storage"
)

// Choosing P (TRUST section 5: a subtask holds three blocks, so P must make
// 3|E|/P^2 edges fit the device).
//
// Model: a subtask needs its three blocks resident plus kernel scratch. A
// block of e edges over r rows takes BlockBytes(r, e) bytes (by default the
// plain CSR: 8-byte offsets, 4-byte columns; a GPU passes its library's
// allocation rule, kernels/gpu.BlockBytes). Scratch is ScratchPerEdge bytes
// per base edge plus ScratchFixed. With only graph totals, the largest block
// is taken to be Skew*|E|/P^2 (hash blocks sit within a few percent of the
// mean; the range scheme's bound search stops within 15% on scale-free
// graphs and can stay above that on small clustered ones). With real block
// sizes (after a Split) FitsBudget checks the three largest blocks exactly.
//
// A counter that counts a subtask in row ranges when it does not fit whole
// (RowSplit; the GPU counter does) needs only the largest block, as JK, with
// one row of IJ and one of IK: P is then the smallest that fits whole if
// any does, else the smallest that fits in row ranges, and only a budget
// below that is an error (*BudgetError), which gives the least budget that
// would do and the P it chooses.
//
// P goes up to UsefulP: beyond it blocks average fewer than minBlockEdges
// edges, and the P^3 subtasks cost more in their fixed work than smaller
// blocks save in memory (a budget just above a subtask's fixed reserve
// would otherwise choose a P of hundreds for a small graph, whose billions
// of subtasks never finish).

// MemModel is the memory model of one subtask where it is counted.
type MemModel struct {
	// BlockBytes is the memory of a block of rows rows and edges edges;
	// nil is the plain CSR, 8 bytes per offset (rows+1) and 4 per column.
	BlockBytes func(rows, edges int64) int64
	// ScratchPerEdge is kernel scratch per edge of the base block IJ.
	ScratchPerEdge int64
	// ScratchFixed is what a subtask needs besides its blocks and per-edge
	// scratch (a device context's own memory, a kernel's fixed buffers).
	ScratchFixed int64
	// RowSplit says the counter counts a subtask that does not fit whole in
	// row ranges of IJ and IK against the whole JK.
	RowSplit bool
}

// minBlockEdges is the fewest edges the blocks of the largest useful P
// average.
const minBlockEdges = 1024

// UsefulP is the largest P considered for a graph of edges forward edges:
// the largest whose blocks average at least minBlockEdges edges, at least
// 1 and at most maxP.
func UsefulP(edges int64) int {
	p := int(math.Sqrt(float64(max(edges, 0)) / minBlockEdges))
	for int64(p+1)*int64(p+1)*minBlockEdges <= edges {
		p++
	}
	for p > 1 && int64(p)*int64(p)*minBlockEdges > edges {
		p--
	}
	return min(max(p, 1), maxP)
}

// BudgetError is the error of a budget per subtask that no P up to
// UsefulP fits.
type BudgetError struct {
	Budget int64
	// Least is the least budget that fits, and P the P it chooses.
	Least int64
	P     int
	// Fixed is the model's reserve every subtask needs, Edges the graph's.
	Fixed, Edges int64
	// Estimated: Least comes from the graph's totals, not its blocks.
	Estimated bool
}

func (e *BudgetError) Error() string {
	about := ""
	if e.Estimated {
		about = "about "
	}
	if e.Budget <= e.Fixed {
		return fmt.Sprintf("partition: a budget of %d bytes per subtask leaves no room for blocks beside the fixed reserve of %d bytes (kernel scratch and context) that every subtask needs: the least that fits is %s%d bytes (P=%d)",
			e.Budget, e.Fixed, about, e.Least, e.P)
	}
	return fmt.Sprintf("partition: no P fits the blocks of %d edges in %d bytes per subtask: the least that fits is %s%d bytes (P=%d)",
		e.Edges, e.Budget, about, e.Least, e.P)
}

// HostModel is the model of the CPU kernels, and what a zero MemModel
// means: plain CSR blocks, 8 bytes of scratch per base edge (partial
// counts), 1 MiB fixed (a worker's marks and buffers).
func HostModel() MemModel { return MemModel{ScratchPerEdge: 8, ScratchFixed: 1 << 20} }

func (m MemModel) withDefaults() MemModel {
	if m.BlockBytes == nil && m.ScratchPerEdge == 0 && m.ScratchFixed == 0 && !m.RowSplit {
		m = HostModel()
	}
	if m.BlockBytes == nil {
		m.BlockBytes = func(rows, edges int64) int64 { return 8*(rows+1) + 4*edges }
	}
	return m
}

// subtaskBytes is the memory of a subtask over three blocks (the first is
// the base block, whose edges size the scratch; an empty BlockStat is a
// view of a block already counted).
func (m MemModel) subtaskBytes(blocks [3]BlockStat) int64 {
	var b int64
	for i, s := range blocks {
		if i > 0 && s == (BlockStat{}) {
			continue
		}
		b += m.BlockBytes(s.Rows, s.Edges)
	}
	return b + m.ScratchPerEdge*blocks[0].Edges + m.ScratchFixed
}

// rowSplitBytes is the memory of the row ranges of a subtask whose JK is
// jk and whose rows hold at most maxRow edges: JK with one row of IJ and
// one of IK.
func (m MemModel) rowSplitBytes(jk BlockStat, maxRow int64) int64 {
	row := m.BlockBytes(1, maxRow)
	return m.BlockBytes(jk.Rows, jk.Edges) + 2*row + m.ScratchPerEdge*maxRow + m.ScratchFixed
}

// estimate is the largest block of a P x P partition of a graph by totals.
func estimate(vertices, edges int64, p int, rangeScheme bool) BlockStat {
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
	return BlockStat{Rows: rows, Edges: int64(largest) + 1}
}

// ChooseP returns the smallest P (up to UsefulP) for which a subtask of a
// graph with the given vertices and edges fits budget bytes whole under
// the model; with RowSplit, when none does, the smallest P whose subtasks
// fit in row ranges (maxRow bounds a row's edges). A budget no P fits is a
// *BudgetError giving the least budget, estimated from the totals.
func ChooseP(vertices, edges, maxRow int64, rangeScheme bool, budget int64, model MemModel) (int, error) {
	m := model.withDefaults()
	top := UsefulP(edges)
	whole := func(p int) int64 {
		b := estimate(vertices, edges, p, rangeScheme)
		if p == 1 {
			return m.subtaskBytes([3]BlockStat{b, {}, {}}) // three views of one CSR
		}
		return m.subtaskBytes([3]BlockStat{b, b, b})
	}
	split := func(p int) int64 { return m.rowSplitBytes(estimate(vertices, edges, p, rangeScheme), maxRow) }
	need := whole
	if m.RowSplit {
		need = func(p int) int64 { return min(whole(p), split(p)) }
	}
	if m.ScratchFixed < budget {
		for p := 1; p <= top; p++ {
			if whole(p) <= budget {
				return p, nil
			}
		}
		if m.RowSplit {
			for p := 1; p <= top; p++ {
				if split(p) <= budget {
					return p, nil
				}
			}
		}
	}
	e := &BudgetError{Budget: budget, Least: need(top), P: top, Fixed: m.ScratchFixed, Edges: edges, Estimated: true}
	for p := 1; p < top; p++ {
		if need(p) <= e.Least {
			e.P = p
			break
		}
	}
	return 0, e
}

// FitsBudget reports whether every subtask of a partition with the given
// block sizes fits budget bytes: it takes the three largest blocks
// together, an upper bound on any real subtask.
func FitsBudget(p int, stat func(i, j int) BlockStat, budget int64, model MemModel) bool {
	m := model.withDefaults()
	return m.subtaskBytes(largest3(p, stat, m)) <= budget
}

// largest3 is the three largest blocks by the model's bytes.
func largest3(p int, stat func(i, j int) BlockStat, m MemModel) [3]BlockStat {
	var top [3]BlockStat
	cost := func(s BlockStat) int64 { return m.BlockBytes(s.Rows, s.Edges) }
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
	return top
}

// ChoosePForGraph starts from ChooseP's estimate and raises P (by one,
// then by an eighth, up to UsefulP) until the real blocks of fwd under
// scheme fit (FitsBudget, or with RowSplit the largest block with one row
// of IJ and IK), measuring block sizes with one pass over the edges per
// candidate. A budget too small for any P is a *BudgetError giving the
// least budget measured and the P that budget chooses.
func ChoosePForGraph(fwd *graph.CSR, scheme storage.Scheme, budget int64, model MemModel, workers int) (int, error) {
	m := model.withDefaults()
	var maxRow int64
	for u := range fwd.NumRows() {
		maxRow = max(maxRow, int64(len(fwd.Row(u))))
	}
	// need is what the real blocks of P x P take.
	need := func(p int) (int64, error) {
		l, err := NewLayout(fwd, scheme, p, workers)
		if err != nil {
			return 0, err
		}
		counts := blockEdgeCounts(fwd, l, p, workers)
		stat := func(i, j int) BlockStat { return BlockStat{Rows: l.GroupSize(i), Edges: counts[i*p+j]} }
		top := largest3(p, stat, m)
		if p == 1 {
			top[1], top[2] = BlockStat{}, BlockStat{}
		}
		n := m.subtaskBytes(top)
		if m.RowSplit {
			n = min(n, m.rowSplitBytes(top[0], maxRow))
		}
		return n, nil
	}
	top := UsefulP(fwd.NumEdges())
	choose := func(budget int64) (int, int64, error) {
		p, err := ChooseP(fwd.NumRows(), fwd.NumEdges(), maxRow, scheme == storage.SchemeRange, budget, m)
		if err != nil {
			p = top // the estimate is rough: the largest P decides
		}
		least := int64(-1)
		// P grows by an eighth at a time (by one while small): each
		// candidate is a pass over the edges, and blocks shrink with P^2.
		for ; ; p = min(max(p+1, p+p/8), top) {
			n, err := need(p)
			if err != nil {
				return 0, 0, err
			}
			if n <= budget {
				return p, 0, nil
			}
			if least < 0 || n < least {
				least = n
			}
			if p == top {
				return 0, least, nil
			}
		}
	}
	p, least, err := choose(budget)
	if err != nil || p > 0 {
		return p, err
	}
	e := &BudgetError{Budget: budget, Least: least, Fixed: m.ScratchFixed, Edges: fwd.NumEdges()}
	if e.P, _, err = choose(least); err != nil {
		return 0, err
	}
	return 0, e
}

// blockEdgeCounts counts the edges of every block of l, P x P row-major,
// on workers goroutines over row chunks of about equal edges (a degree
// order puts most forward edges in the last rows), each with counts of its
// own that are added up at the end.
func blockEdgeCounts(fwd *graph.CSR, l *Layout, p, workers int) []int64 {
	chunks := rowChunks(fwd, clampWorkers(workers))
	if len(chunks) == 0 {
		return make([]int64, p*p)
	}
	each := make([][]int64, len(chunks))
	_ = parallelFor(context.Background(), len(chunks), workers, func(x int) {
		c := make([]int64, p*p)
		for u := chunks[x][0]; u < chunks[x][1]; u++ {
			row := c[l.Group(uint32(u))*p:]
			for _, v := range fwd.Row(u) {
				row[l.Group(v)]++
			}
		}
		each[x] = c
	})
	counts := each[0]
	for _, c := range each[1:] {
		for i, x := range c {
			counts[i] += x
		}
	}
	return counts
}
