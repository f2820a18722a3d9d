package kernels

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

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
// A LocalCounter whose kernel may lack a per-vertex mode (a GPU counter of
// such a kernel) also has a method HasLocalMode() bool that reports it
// (HasLocalMode); its CountLocal then fails.
type LocalCounter interface {
	Counter
	// CountLocal counts t like Count and adds its per-vertex (and, when
	// acc.PerEdge(), per-edge) counts to acc. Result.Triangles is the
	// subtask's total, as from Count.
	CountLocal(ctx context.Context, t Subtask, acc *Local) (Result, error)
}

// HasLocalMode reports whether c counts per vertex: it is a LocalCounter
// and, when it says so through a HasLocalMode method, its kernel has a
// per-vertex mode.
func HasLocalMode(c Counter) bool {
	if _, ok := c.(LocalCounter); !ok {
		return false
	}
	if m, ok := c.(interface{ HasLocalMode() bool }); ok {
		return m.HasLocalMode()
	}
	return true
}

// maxLocalCols bounds the K-local space of a per-vertex count: each
// worker keeps 8 bytes per K-local column (2 GiB at the bound).
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
		return fmt.Errorf("the K-local space of %d columns is over the %d a per-vertex count takes on the CPU; count through partitions", k, int64(maxLocalCols))
	}
	return nil
}

// countLocal is the per-vertex kernel, a variant of hashcol (hash.go):
// driven by IJ's columns, through IJ's transpose, it marks JK.Row(v) in a
// bitset for a J-local v and probes the part of IK.Row(u) from v's clip
// start on (tail.go) for every u with (u, v) in IJ. The probe loop has no
// branch on the data: every element is written to a small buffer whose
// cursor advances by the element's mark bit, which leaves the hits in the
// buffer. Then, per hit x (the triangle's c):
//
//   - per vertex only: the worker's own count of x is incremented;
//   - per edge: x's index in JK.Row(v), kept in a per-worker slot array,
//     selects a per-element count of the marked row, which is added to
//     the worker's counts of c and to the support of the edges bc once
//     per column and chunk; and the edge ac at the hit's position gets
//     one, the one scattered add per triangle that makes per-edge counts
//     dearer than per-vertex ones.
//
// The counts of a and b go to the worker's own arrays as well, once per
// IJ edge and once per column and chunk, and so does the support of the
// edge ab, once per IJ edge; the workers' arrays are summed into Local's
// slices when the subtask is done. Per-edge support takes 4 bytes per
// edge per worker that way; beyond 4 workers it goes to Local's slices
// by atomic adds instead.
//
// Preconditions as for hashcol. Per worker it keeps the bitset, a buffer
// as long as IK's longest row, 8 bytes per vertex of each of the I, J
// and K spaces (one array where Local's slices are one), and per edge 4
// bytes more per K-local column, 8 per element of JK's longest row and 4
// per edge of each block (up to 4 workers).
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
		if ij == ik && clip && off == 1 {
			// The whole graph, or (I, J, J): v's clip start in u's row is
			// the edge's own position plus one.
			return func(u int64, p uint64) localEntry {
				return localEntry{u: uint32(u), skip: uint32(p + 1 - ik.Offsets[u])}
			}
		}
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
	perEdge := acc.PerEdge()
	var pos []uint64
	if perEdge {
		_, pos = transposeWith(ij, workers, func() func(u int64, p uint64) uint64 {
			return func(_ int64, p uint64) uint64 { return p }
		})
	}
	kcols, maxIK, maxJK := kColumns(t), maxDegree(ik), maxDegree(t.JK)
	roles := privateRoles([3][]uint64{acc.VI, acc.VJ, acc.VK}, [3]int64{ij.NumRows(), t.JK.NumRows(), kcols})
	// Per-edge support goes to per-worker arrays too, 4 bytes per edge
	// each (a subtask's support of one edge is below 2^32, as it is below
	// the vertex count), when that costs at most what the support itself
	// takes (8 bytes per edge) twice over; beyond, to atomic adds.
	eTargets := [3][]uint64{acc.EIJ, acc.EIK, acc.EJK}
	eRoles := privateRoles(eTargets, [3]int64{ij.NumEdges(), ik.NumEdges(), t.JK.NumEdges()})
	privEdges := perEdge && workers <= 4
	var (
		mu  sync.Mutex
		all []*localWorker
	)
	res, err = runParallel(ctx, name, ij.NumEdges(), workers, opts.Progress, func() rangeCounter {
		w := &localWorker{
			offsets: offsets, entries: entries, pos: pos,
			ik: ik, jk: t.JK, acc: acc, perEdge: perEdge,
			bits: make([]uint64, (kcols+63)/64),
			hits: make([]uint32, maxIK+1),
		}
		for r := range 3 {
			if roles.of[r] == r {
				w.priv[r] = make([]uint64, roles.size[r])
			} else {
				w.priv[r] = w.priv[roles.of[r]]
			}
		}
		if perEdge {
			w.slot, w.cnt = make([]uint32, kcols), make([]uint64, maxJK)
		}
		if privEdges {
			for r := range 3 {
				if eRoles.of[r] == r {
					w.privE[r] = make([]uint32, eRoles.size[r])
				} else {
					w.privE[r] = w.privE[eRoles.of[r]]
				}
			}
		}
		mu.Lock()
		all = append(all, w)
		mu.Unlock()
		return w
	})
	if err != nil {
		return Result{}, err
	}
	sumPrivate(all, roles, [3][]uint64{acc.VI, acc.VJ, acc.VK}, privEdges, eRoles, eTargets)
	res.KernelTime = time.Since(start)
	return res, nil
}

// sumPrivate adds the workers' private per-vertex counts into targets
// (roles) and, with privEdges, their per-edge counts into eTargets
// (eRoles), the workers splitting each index space.
func sumPrivate(all []*localWorker, roles localRoles, targets [3][]uint64, privEdges bool, eRoles localRoles, eTargets [3][]uint64) {
	for r := range 3 {
		if roles.of[r] != r {
			continue
		}
		size := int(roles.size[r])
		parallel(len(all), func(n int) {
			for x := size * n / len(all); x < size*(n+1)/len(all); x++ {
				var c uint64
				for _, w := range all {
					c += w.priv[r][x]
				}
				if c != 0 {
					atomic.AddUint64(&targets[r][x], c)
				}
			}
		})
	}
	for r := range 3 {
		if !privEdges || eRoles.of[r] != r {
			continue
		}
		size := int(eRoles.size[r])
		parallel(len(all), func(n int) {
			for x := size * n / len(all); x < size*(n+1)/len(all); x++ {
				var c uint64
				for _, w := range all {
					c += uint64(w.privE[r][x])
				}
				if c != 0 {
					atomic.AddUint64(&eTargets[r][x], c)
				}
			}
		})
	}
}

// Vertex roles of a triangle a < b < c in a subtask: a is I-local (an IJ
// row), b J-local, c K-local.
const (
	roleI = iota
	roleJ
	roleK
)

// localRoles says which private count array serves each role: roles whose
// target slices (Local.VI, VJ, VK) are one slice share one array, as long
// as the largest space among them.
type localRoles struct {
	of   [3]int
	size [3]int64
}

func privateRoles(targets [3][]uint64, need [3]int64) localRoles {
	var r localRoles
	for i := range 3 {
		r.of[i] = i
		for j := range i {
			if r.of[j] == j && len(targets[i]) > 0 && len(targets[j]) > 0 && unsafe.SliceData(targets[i]) == unsafe.SliceData(targets[j]) {
				r.of[i] = j
				break
			}
		}
		r.size[r.of[i]] = max(r.size[r.of[i]], need[i])
	}
	return r
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
// bits, slot and cnt are zero between columns.
type localWorker struct {
	offsets []uint64     // per J-local v, into entries
	entries []localEntry // IJ's edges in column order
	pos     []uint64     // per entry, the edge's position in IJ.Cols (per edge only)
	ik, jk  *graph.CSR
	acc     *Local
	perEdge bool
	bits    []uint64 // the marked row's bitset over K-local ids
	hits    []uint32 // positions in the probe list of its marked elements
	// priv holds the worker's own triangle counts per vertex for each
	// role (aliased where the targets are one slice), added to Local's
	// slices when the subtask is done: plain adds in the loop, no atomic
	// read-modify-write, which would fence the prefetches.
	priv [3][]uint64
	// privE, when not nil, holds the worker's own per-edge support of IJ,
	// IK and JK in the same way; nil means atomic adds to Local's.
	privE [3][]uint32
	slot  []uint32 // per K-local id: index in the marked row plus one (per edge)
	cnt   []uint64 // per element of the marked row: triangles this chunk (per edge)
}

func (w *localWorker) countRange(lo, hi uint64) (total uint64) {
	rows := int64(len(w.offsets) - 1)
	acc, bits, buf := w.acc, w.bits, w.hits
	ikOff, ikCols := w.ik.Offsets, w.ik.Cols
	base := uintptr(unsafe.Pointer(unsafe.SliceData(ikCols)))
	for v := int64(firstRowOf(w.offsets, lo)); v < rows && w.offsets[v] < hi; v++ {
		a := w.jk.Row(v)
		if len(a) == 0 {
			continue
		}
		for k, x := range a {
			bits[x>>6] |= 1 << (x & 63)
			if w.perEdge {
				w.slot[x] = uint32(k + 1)
			}
		}
		last := a[len(a)-1]
		var vsum uint64
		qlo, qhi := max(lo, w.offsets[v]), min(hi, w.offsets[v+1])
		for q := qlo; q < qhi; q++ {
			if q+2*prefetchAhead < qhi {
				prefetch(uintptr(unsafe.Pointer(&ikOff[w.entries[q+2*prefetchAhead].u])))
			}
			if q+prefetchAhead < qhi {
				e := w.entries[q+prefetchAhead]
				prefetch(base + 4*uintptr(ikOff[e.u]+uint64(e.skip)))
			}
			e := w.entries[q]
			rs := ikOff[e.u] + uint64(e.skip)
			b := ikCols[rs:ikOff[e.u+1]]
			var nh int
			if len(b) > lopsidedRatio*len(a) {
				nh = searchHits(a, b, buf)
			} else {
				nh = markedHits(b, last, bits, buf)
			}
			if nh == 0 {
				continue
			}
			if w.perEdge {
				if eik := w.privE[1]; eik != nil {
					for _, i := range buf[:nh] {
						w.cnt[w.slot[b[i]]-1]++
						eik[rs+uint64(i)]++
					}
					w.privE[0][w.pos[q]] += uint32(nh)
				} else {
					for _, i := range buf[:nh] {
						w.cnt[w.slot[b[i]]-1]++
						atomic.AddUint64(&acc.EIK[rs+uint64(i)], 1)
					}
					atomic.AddUint64(&acc.EIJ[w.pos[q]], uint64(nh))
				}
			} else {
				for _, i := range buf[:nh] {
					w.priv[roleK][b[i]]++
				}
			}
			w.priv[roleI][e.u] += uint64(nh)
			vsum += uint64(nh)
		}
		for _, x := range a {
			bits[x>>6] = 0
		}
		if w.perEdge {
			ejk := w.jk.Offsets[v]
			for k, x := range a {
				w.slot[x] = 0
				if c := w.cnt[k]; c != 0 {
					w.cnt[k] = 0
					w.priv[roleK][x] += c
					if ejkPriv := w.privE[2]; ejkPriv != nil {
						ejkPriv[ejk+uint64(k)] += uint32(c)
					} else {
						atomic.AddUint64(&acc.EJK[ejk+uint64(k)], c)
					}
				}
			}
		}
		w.priv[roleJ][v] += vsum
		total += vsum
	}
	return total
}

// markedHits writes the positions in b of its elements marked in bits to
// hits and returns their number. Only elements up to last (the marked
// row's largest) can be marked, so b is cut there first, which leaves the
// loop with no condition but its count; it is unrolled by four. hits must
// be longer than b.
func markedHits(b []uint32, last uint32, bits []uint64, hits []uint32) int {
	if len(b) == 0 {
		return 0
	}
	if b[len(b)-1] > last {
		b = b[:upperBound(b, last)]
	}
	hits = hits[:len(b)+1]
	nh := 0
	i := 0
	for ; i+4 <= len(b); i += 4 {
		x0, x1, x2, x3 := b[i], b[i+1], b[i+2], b[i+3]
		m0 := int(bits[x0>>6] >> (x0 & 63) & 1)
		m1 := int(bits[x1>>6] >> (x1 & 63) & 1)
		m2 := int(bits[x2>>6] >> (x2 & 63) & 1)
		m3 := int(bits[x3>>6] >> (x3 & 63) & 1)
		hits[nh] = uint32(i)
		nh += m0
		hits[nh] = uint32(i + 1)
		nh += m1
		hits[nh] = uint32(i + 2)
		nh += m2
		hits[nh] = uint32(i + 3)
		nh += m3
	}
	for ; i < len(b); i++ {
		x := b[i]
		hits[nh] = uint32(i)
		nh += int(bits[x>>6] >> (x & 63) & 1)
	}
	return nh
}

// upperBound returns the first index of s whose value is above x.
func upperBound(s []uint32, x uint32) int {
	lo, hi := 0, len(s)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s[mid] <= x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// searchHits finds each element of the marked row a in the long probe
// list b by binary search, each search starting where the previous one
// ended, and writes the positions in b of those found to hits.
func searchHits(a, b []uint32, hits []uint32) (nh int) {
	at := 0
	for _, x := range a {
		i := lowerBound(b[at:], x) + at
		if i == len(b) {
			break
		}
		if b[i] == x {
			hits[nh] = uint32(i)
			nh++
			i++
		}
		at = i
	}
	return nh
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
