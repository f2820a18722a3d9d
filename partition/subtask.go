package partition

import (
	"math"
	"sort"

	"github.com/trigrid/trigrid/storage"
)

// Subtask is one unit of counting work: the triangles a < b < c with a in
// group I, b in group J and c in group K, read from B[I][J], B[I][K] and
// B[J][K].
type Subtask struct {
	I, J, K int
	// Edges is the number of base edges, the edges of B[I][J].
	Edges int64
	// Work estimates the subtask's cost in list elements touched: the base
	// edges plus, per base edge (u, v), the expected lengths of u's list in
	// B[I][K] and v's list in B[J][K]. Expected lengths are block averages
	// (edges / rows), which needs only the sizes a manifest records; it is
	// a proxy for ranking and balance, not a promise.
	Work int64
	// Clip and TailOffset tell the kernel which part of a list in B[I][K]
	// can close a triangle with an edge (u, v) of B[I][J]: the K-local ids
	// w >= local(v) + TailOffset, which hold every id above v globally
	// and, where the layout allows (see TailOffset), no other
	// (kernels.Subtask.Clip, which RunLocal passes them to). Subtasks and
	// (*Partition).Subtasks set them from the layout; a Subtask built
	// without them counts unclipped, which is exact but slower.
	Clip       bool
	TailOffset int64
}

// Tail offsets beyond every 32-bit local id: all of B[I][K]'s list
// qualifies, or none. ±2^33 keeps local(v) + offset far from overflow.
const (
	tailAll  int64 = -1 << 33
	tailNone int64 = 1 << 33
)

// TailOffset returns the clip offset of subtasks (I, J, K) under scheme
// with P groups of fold ranges each (fold is ignored for hash): every w in
// group K above v in group J globally has local(w) >= local(v) +
// TailOffset. It depends on j and k only, and is exact (the ids it keeps
// are exactly those above v) wherever one constant can be; elsewhere it
// keeps every w, which counts exactly but gains nothing, because a
// kernel's intersection with JK.Row(v) drops what lies below v anyway.
//
//   - hash: global(x) = g + P*local(x), so global(w) > global(v) iff
//     P*(lw - lv) > j - k; as |j - k| < P that is lw > lv when k <= j and
//     lw >= lv when k > j.
//   - range, one range per group: groups are increasing id ranges, so for
//     k > j every w is above v, for k < j none is.
//   - range, folded: a group's local ids follow its ranges in id order, so
//     for k == j local ids compare as global ones. For k != j which of K's
//     ranges lie above v depends on which of J's ranges holds v, a step in
//     local(v) that no constant offset follows: keep all of K.
//   - P = 1 (either scheme): the whole graph, lw > lv.
func TailOffset(scheme storage.Scheme, p, fold, j, k int) int64 {
	switch {
	case j == k:
		return 1
	case scheme == storage.SchemeHash && k < j:
		return 1
	case scheme == storage.SchemeHash:
		return 0
	case k > j || fold > 1:
		return tailAll
	default:
		return tailNone
	}
}

// TailOffset is the package's TailOffset for l's scheme, P and fold.
func (l *Layout) TailOffset(j, k int) int64 { return TailOffset(l.Scheme, l.P, l.Fold, j, k) }

// SetClip sets the clip of every task from the layout's scheme, P and
// fold (see TailOffset). Every task gets Clip set, also those whose offset
// keeps all of K: the kernels' clipped path is the one tuned for
// partitions, and an offset that keeps everything is still a valid clip.
func SetClip(tasks []Subtask, scheme storage.Scheme, p, fold int) {
	for x := range tasks {
		tasks[x].Clip, tasks[x].TailOffset = true, TailOffset(scheme, p, fold, tasks[x].J, tasks[x].K)
	}
}

// BlockStat is the size of one block, as recorded in a manifest or
// measured on a CSR.
type BlockStat struct {
	Rows, Edges int64
}

// Enumerate lists the subtasks of a P x P partition whose three blocks are
// all non-empty (a subtask with an empty block finds no triangle).
//
// Order: subtasks sharing (I, J) are adjacent with K ascending, so a worker
// walking the list reuses B[I][J] (the base block, loaded once) across K;
// (I, J) groups come largest total work first so dynamic scheduling does
// not end on a long straggler.
func Enumerate(p int, stat func(i, j int) BlockStat) []Subtask {
	type group struct {
		tasks []Subtask
		work  int64
	}
	var groups []group
	for i := range p {
		for j := range p {
			ij := stat(i, j)
			if ij.Edges == 0 {
				continue
			}
			var g group
			for k := range p {
				ik, jk := stat(i, k), stat(j, k)
				if ik.Edges == 0 || jk.Edges == 0 {
					continue
				}
				w := float64(ij.Edges) * (1 + avgDegree(ik) + avgDegree(jk))
				t := Subtask{I: i, J: j, K: k, Edges: ij.Edges, Work: int64(math.Min(w, math.MaxInt64/2))}
				g.tasks = append(g.tasks, t)
				g.work += t.Work
			}
			if len(g.tasks) > 0 {
				groups = append(groups, g)
			}
		}
	}
	sort.SliceStable(groups, func(a, b int) bool { return groups[a].work > groups[b].work })
	var out []Subtask
	for _, g := range groups {
		out = append(out, g.tasks...)
	}
	return out
}

func avgDegree(s BlockStat) float64 {
	if s.Rows == 0 {
		return 0
	}
	return float64(s.Edges) / float64(s.Rows)
}

// Subtasks lists the subtasks of an in-memory partition (see Enumerate),
// clipped for its scheme.
func (p *Partition) Subtasks() []Subtask {
	tasks := Enumerate(p.P(), p.blockStat)
	SetClip(tasks, p.Layout.Scheme, p.P(), p.Layout.Fold)
	return tasks
}

func (p *Partition) blockStat(i, j int) BlockStat {
	b := p.Block(i, j)
	return BlockStat{Rows: b.NumRows(), Edges: b.NumEdges()}
}

// Balance summarises how evenly a partition spreads edges and work.
type Balance struct {
	// Blocks is the number of blocks that can hold edges under the layout
	// (P^2 for hash and folded ranges, P(P+1)/2 for one range per group:
	// I <= J); NonEmpty of them do.
	Blocks, NonEmpty int
	// MaxBlock and MeanBlock are edge counts; the mean is over Blocks, the
	// blocks the layout can fill, so cells a layout structurally leaves
	// empty (one range per group, I > J) do not flatter or hurt the
	// figure.
	MaxBlock  int64
	MeanBlock float64
	// BlockRatio = MaxBlock / MeanBlock (1 is perfect).
	BlockRatio float64
	// Subtasks is the number of non-empty subtasks; the work figures use
	// Subtask.Work.
	Subtasks  int
	MaxWork   int64
	MeanWork  float64
	WorkRatio float64
}

// ComputeBalance measures block sizes and subtask work of a P x P grid;
// canHave(i, j) says whether the layout lets block (i, j) hold edges
// (Layout.CanHaveEdges).
func ComputeBalance(p int, canHave func(i, j int) bool, stat func(i, j int) BlockStat, tasks []Subtask) Balance {
	var b Balance
	var sum int64
	for i := range p {
		for j := range p {
			if !canHave(i, j) {
				continue
			}
			b.Blocks++
			e := stat(i, j).Edges
			sum += e
			if e > 0 {
				b.NonEmpty++
			}
			b.MaxBlock = max(b.MaxBlock, e)
		}
	}
	if b.Blocks > 0 {
		b.MeanBlock = float64(sum) / float64(b.Blocks)
	}
	if b.MeanBlock > 0 {
		b.BlockRatio = float64(b.MaxBlock) / b.MeanBlock
	}
	var work int64
	for _, t := range tasks {
		work += t.Work
		b.MaxWork = max(b.MaxWork, t.Work)
	}
	b.Subtasks = len(tasks)
	if len(tasks) > 0 {
		b.MeanWork = float64(work) / float64(len(tasks))
	}
	if b.MeanWork > 0 {
		b.WorkRatio = float64(b.MaxWork) / b.MeanWork
	}
	return b
}

// Balance measures the partition (see ComputeBalance).
func (p *Partition) Balance() Balance {
	return ComputeBalance(p.P(), p.Layout.CanHaveEdges, p.blockStat, p.Subtasks())
}
