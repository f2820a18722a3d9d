package kernels

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/trigrid/trigrid/graph"
)

// Local receives the per-vertex and per-edge triangle counts of one
// subtask, in its blocks' local index spaces: a triangle a < b < c with
// a in I, b in J and c in K (a an IJ row, b an IJ column, c a K-local
// column) adds 1 to VI[a], VJ[b] and VK[c], and to the support of its
// edges: EIJ at the position of (a, b) in IJ.Cols, EIK at that of (a, c)
// in IK.Cols, EJK at that of (b, c) in JK.Cols.
//
// VI needs IJ.NumRows() entries, VJ JK.NumRows(), VK max(IK.NCols,
// JK.NCols); EIJ, EIK and EJK as many as their block has edges, or all
// three nil for per-vertex counts only. Counts are added, never stored,
// and every add is atomic, so slices may alias one another: the whole
// graph passes one vertex slice as VI, VJ and VK and one edge slice for
// all three E slices.
type Local struct {
	VI, VJ, VK    []uint64
	EIJ, EIK, EJK []uint64
}

// PerEdge reports whether l takes per-edge support.
func (l *Local) PerEdge() bool { return l.EIJ != nil || l.EIK != nil || l.EJK != nil }

// LocalCounter is a Counter that can also count per vertex and per edge.
type LocalCounter interface {
	Counter
	// CountLocal counts t like Count and adds its per-vertex (and, when
	// acc.PerEdge(), per-edge) counts to acc. Result.Triangles is the
	// subtask's total, as from Count.
	CountLocal(ctx context.Context, t Subtask, acc *Local) (Result, error)
}

// maxLocalCols bounds the K-local space of a per-vertex count: each
// worker keeps a 4-byte slot per K-local column (1 GiB at the bound).
// Larger spaces are counted through partitions, whose blocks are smaller.
const maxLocalCols = 1 << 28

// checkLocal checks acc's slice lengths against t.
func checkLocal(t Subtask, acc *Local) error {
	if acc == nil {
		return fmt.Errorf("no counts to add to")
	}
	for _, c := range []struct {
		name string
		have int
		want int64
		opt  bool
	}{
		{"VI", len(acc.VI), t.IJ.NumRows(), false},
		{"VJ", len(acc.VJ), t.JK.NumRows(), false},
		{"VK", len(acc.VK), kColumns(t), false},
		{"EIJ", len(acc.EIJ), t.IJ.NumEdges(), true},
		{"EIK", len(acc.EIK), t.IK.NumEdges(), true},
		{"EJK", len(acc.EJK), t.JK.NumEdges(), true},
	} {
		if c.opt && !acc.PerEdge() {
			continue
		}
		if int64(c.have) < c.want {
			return fmt.Errorf("%s has %d entries, the subtask needs %d", c.name, c.have, c.want)
		}
	}
	if k := kColumns(t); k > maxLocalCols {
		return fmt.Errorf("K-local space of %d columns is over the %d a per-vertex count takes on the CPU; count through partitions", k, int64(maxLocalCols))
	}
	return nil
}

// countLocal is the per-vertex kernel, a variant of hashcol (hash.go):
// driven by IJ's columns, through IJ's transpose, it marks JK.Row(v) for
// a J-local v and probes the part of IK.Row(u) from v's clip start on
// (tail.go) for every u with (u, v) in IJ. The mark is the element's
// index in JK.Row(v) plus one instead of a bit, so that a hit adds to a
// per-worker count of that element; the counts are flushed into VK and
// EJK once per column and chunk, not once per triangle. VI and EIJ get
// one add per IJ edge that closes a triangle, VJ one per column and
// chunk. Only EIK gets one add per triangle, which is what makes
// per-edge counts dearer than per-vertex ones.
//
// Preconditions as for hashcol; per worker it keeps 4 bytes per K-local
// column and per element of JK's longest row.
func countLocal(ctx context.Context, name string, t Subtask, acc *Local, opts CPUOptions) (res Result, err error) {
	if err := checkSubtask(t); err != nil {
		return Result{}, fmt.Errorf("kernels: %s: %w", name, err)
	}
	if err := checkLocal(t, acc); err != nil {
		return Result{}, fmt.Errorf("kernels: %s: %w", name, err)
	}
	if isEmpty(t) {
		return Result{}, ctx.Err()
	}
	defer func() {
		// The transpose runs here, outside runParallel's recover.
		if r := recover(); r != nil {
			err = fmt.Errorf("kernels: %s: malformed subtask: %v", name, r)
		}
	}()
	start := time.Now()
	workers := resolveWorkers(opts.Workers)
	off, clip := tailOffset(t)
	if !clip {
		off, clip = clipOffset(t)
	}
	ij, ik := t.IJ, t.IK
	// The transpose holds, per IJ edge (u, v) in column order, u and the
	// offset of v's clip start in IK.Row(u), found by a gallop that only
	// moves forward along u's row (IJ.Row(u) is sorted by v).
	offsets, entries := transposeWith(ij, workers, func() func(u int64, p uint64) localEntry {
		cur, rest, n := int64(-1), []uint32(nil), 0
		return func(u int64, p uint64) localEntry {
			if u != cur {
				cur, rest = u, ik.Row(u)
				n = len(rest)
			}
			if clip {
				rest = skipBelow(rest, int64(ij.Cols[p])+off)
			}
			return localEntry{u: uint32(u), skip: uint32(n - len(rest))}
		}
	})
	var pos []uint64
	if acc.PerEdge() {
		_, pos = transposeWith(ij, workers, func() func(u int64, p uint64) uint64 {
			return func(_ int64, p uint64) uint64 { return p }
		})
	}
	maxRow := maxDegree(t.JK)
	res, err = runParallel(ctx, name, ij.NumEdges(), workers, opts.Progress, func() rangeCounter {
		return &localWorker{
			offsets: offsets, entries: entries, pos: pos,
			ik: ik, jk: t.JK, acc: acc,
			slot: make([]uint32, kColumns(t)),
			cnt:  make([]uint64, maxRow),
		}
	})
	if err != nil {
		return Result{}, err
	}
	res.KernelTime = time.Since(start)
	return res, nil
}

// localEntry is one IJ edge (u, v) in the per-vertex transpose: u, and how
// many elements of IK.Row(u) lie below v's clip.
type localEntry struct{ u, skip uint32 }

func maxDegree(c *graph.CSR) int64 {
	var m int64
	for r := range c.NumRows() {
		m = max(m, c.Degree(r))
	}
	return m
}

// localWorker counts a chunk of the transposed IJ edges for countLocal.
// slot is zero between columns; cnt is zero between columns.
type localWorker struct {
	offsets []uint64     // per J-local v, into entries
	entries []localEntry // IJ's edges in column order
	pos     []uint64     // per entry, the edge's position in IJ.Cols (per-edge only)
	ik, jk  *graph.CSR
	acc     *Local
	slot    []uint32 // per K-local id: index in the marked row plus one
	cnt     []uint64 // per element of the marked row: triangles this chunk
}

func (w *localWorker) countRange(lo, hi uint64) (total uint64) {
	rows := int64(len(w.offsets) - 1)
	acc, slot, perEdge := w.acc, w.slot, w.acc.PerEdge()
	for v := int64(firstRowOf(w.offsets, lo)); v < rows && w.offsets[v] < hi; v++ {
		a := w.jk.Row(v)
		if len(a) == 0 {
			continue
		}
		for k, x := range a {
			slot[x] = uint32(k + 1)
		}
		cnt := w.cnt[:len(a)]
		last := a[len(a)-1]
		var vsum uint64
		for q := max(lo, w.offsets[v]); q < min(hi, w.offsets[v+1]); q++ {
			e := w.entries[q]
			rs := w.ik.Offsets[e.u] + uint64(e.skip)
			b := w.ik.Cols[rs:w.ik.Offsets[e.u+1]]
			var hits uint64
			if len(b) > lopsidedRatio*len(a) {
				hits = w.searchLocal(a, b, rs, cnt, perEdge)
			} else {
				for i, x := range b {
					if x > last {
						break
					}
					if s := slot[x]; s != 0 {
						cnt[s-1]++
						hits++
						if perEdge {
							atomic.AddUint64(&acc.EIK[rs+uint64(i)], 1)
						}
					}
				}
			}
			if hits != 0 {
				atomic.AddUint64(&acc.VI[e.u], hits)
				if perEdge {
					atomic.AddUint64(&acc.EIJ[w.pos[q]], hits)
				}
				vsum += hits
			}
		}
		base := w.jk.Offsets[v]
		for k, x := range a {
			slot[x] = 0
			if c := cnt[k]; c != 0 {
				cnt[k] = 0
				atomic.AddUint64(&acc.VK[x], c)
				if perEdge {
					atomic.AddUint64(&acc.EJK[base+uint64(k)], c)
				}
			}
		}
		if vsum != 0 {
			atomic.AddUint64(&acc.VJ[v], vsum)
			total += vsum
		}
	}
	return total
}

// searchLocal finds each element of the marked row a in the long probe
// list b (which starts at position rs of IK.Cols) by binary search, each
// search starting where the previous one ended.
func (w *localWorker) searchLocal(a, b []uint32, rs uint64, cnt []uint64, perEdge bool) (hits uint64) {
	var at uint64
	for k, x := range a {
		i := lowerBound(b, x)
		if i == len(b) {
			break
		}
		if b[i] == x {
			cnt[k]++
			hits++
			if perEdge {
				atomic.AddUint64(&w.acc.EIK[rs+at+uint64(i)], 1)
			}
			i++
		}
		b, at = b[i:], at+uint64(i)
	}
	return hits
}

// localCounter is the CPU kernel "local": hashcol's per-vertex variant,
// which counts totals too.
type localCounter struct{ opts CPUOptions }

func (l *localCounter) Name() string { return "local" }

// Count counts t's total through the per-vertex kernel, into scratch it
// drops afterwards; it is there so that "local" serves as any Counter.
func (l *localCounter) Count(ctx context.Context, t Subtask) (Result, error) {
	if err := checkSubtask(t); err != nil {
		return Result{}, fmt.Errorf("kernels: local: %w", err)
	}
	acc := &Local{VI: make([]uint64, t.IJ.NumRows()), VJ: make([]uint64, t.JK.NumRows()), VK: make([]uint64, kColumns(t))}
	return l.CountLocal(ctx, t, acc)
}

func (l *localCounter) CountLocal(ctx context.Context, t Subtask, acc *Local) (Result, error) {
	return countLocal(ctx, "local", t, acc, l.opts)
}

// CountLocal is auto's per-vertex mode: the CPU has one per-vertex
// kernel, "local".
func (a *autoCounter) CountLocal(ctx context.Context, t Subtask, acc *Local) (Result, error) {
	a.last = "local"
	res, err := countLocal(ctx, "local", t, acc, a.opts)
	if err != nil {
		return Result{}, fmt.Errorf("kernels: auto: %w", err)
	}
	return res, nil
}
