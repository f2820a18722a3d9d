package gpu

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/parallel"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// rangeRow is abi.RangeRow, an entry of a range.
type rangeRow = abi.RangeRow

// rangesRowsAtMost is the most rows a range that fits area bytes can have
// (abi.RangesBytes takes more than 12 bytes a row).
func rangesRowsAtMost(area int64) int64 { return max(area, 0) / 12 }

// rangesBitmapRatios are the ratios a count in ranges chooses from, the
// one admitting the sparsest rows first: a bitmap replaces the binary
// searches in its row by single lookups, and takes room from the ranges.
// The measurements behind the ratios and the share of the columns' bytes
// they may take: docs/decisions/2026-11-24-ranges-bitmap-ratio.md.
var rangesBitmapRatios = []uint32{256, 128, 64, 32, 16}

// RangesBitmapShare bounds the ranges' bitmaps: at most 1/RangesBitmapShare
// of the columns' bytes.
const RangesBitmapShare = 4

// RangesSpare: a count in ranges leaves 1/RangesSpare of the device's
// limit beside its work area (the driver's own allocations, a kernel's
// stack and launch state).
const RangesSpare = 64

// padBytes is the least size of a host array the ranges register: an
// allocation that large has pages of its own, so that registering it
// cannot meet a page another registration holds.
const padBytes = 64 << 10

// CountInRanges implements kernels.RangeCounter (tg_ranges_*): the
// forward graph stays in host memory, page-locked and mapped for the
// device; its rows are cut into the fewest ranges whose rows fit the
// context's free memory (less a sixty-fourth of the limit), and for each
// range the device copies its rows and counts, for every row u with
// columns in the range, |cols(u) ∩ cols(v)| for each such column v,
// reading u's columns from host memory. Each forward edge (u, v) is
// counted in the range holding v, so the ranges' counts sum to the
// graph's. An error wrapping ErrOutOfMemory means the longest row does not
// fit (the caller counts in blocks); the resident slots are given up first.
// The host lists the ranges' entries ahead of the device, each into one
// of two sides as soon as the range before it there is counted, and calls
// opts.Listed after the last. After a count the host arrays are released
// in the background, the counter's next call waiting for it; after an
// error before returning, within st.Pin.
func (c *Counter) CountInRanges(ctx context.Context, fwd *graph.CSR, opts kernels.RangeOptions) (res kernels.Result, st kernels.RangeStats, err error) {
	if err := ctx.Err(); err != nil {
		return kernels.Result{}, st, err
	}
	c.mu.Lock()
	unlock := c.mu.Unlock // after a count, the host arrays' release unlocks
	defer func() { unlock() }()
	if c.ctx == nil {
		return kernels.Result{}, st, fmt.Errorf("gpu: count in ranges: counter is closed")
	}
	r := &rangesRun{c: c, fwd: fwd, st: &st, start: time.Now()}
	defer r.logTimeline()
	c.slots.ReleaseAll()
	used, limit, _ := c.ctx.MemUsage()
	// Whole granules: the library rounds the work area up to them.
	area := (int64(limit) - int64(used) - int64(limit/RangesSpare)) &^ 255
	n := fwd.NumRows()

	// The columns are pinned already when the pin registry holds them
	// (the device oriented the graph in pieces).
	r.cols = fwd.Cols
	r.pinned = c.lib.pins.HoldCols(fwd)
	if r.pinned {
		defer c.lib.pins.EndLoad(fwd)
	} else if len(r.cols)*4 < padBytes {
		r.cols = append(make([]uint32, 0, padBytes/4), r.cols...)
	}
	st.PinnedCols = r.pinned
	// The sides, then the set-up's arrays, lie in the spare pinned room
	// an orientation in pieces left past the columns while it has room
	// (nothing to touch or pin; pinned as long as the registry holds the
	// columns' pin), else in fresh pages, the sides pinned below.
	spare := c.takeSpare(fwd)
	if !r.pinned {
		spare = spareRoom{}
	}
	r.allocSides(spare, n, area)
	r.startPins()
	// The host arrays go back (unpinned, then unmapped) once the pins are
	// done: after a count in the background, c.mu still held, so that no
	// call on the counter meets them; after an error before returning.
	defer func() { r.giveBack(err == nil, &unlock) }()

	tSetup := time.Now()
	ratio, bm, rb, err := rangeSetup(fwd, r.arena)
	if err != nil {
		return kernels.Result{}, st, fmt.Errorf("gpu: count in ranges: %w", err)
	}
	st.BitmapRatio = ratio
	bounds, err := cutRowRanges(fwd, bm, area)
	if err != nil {
		return kernels.Result{}, st, fmt.Errorf("gpu: count in ranges: %w", err)
	}
	rb.bounds = bounds
	st.Setup = time.Since(tSetup)
	st.Ranges = len(bounds) - 1
	for k := 0; k+1 < len(bounds); k++ {
		st.AreaBytes = max(st.AreaBytes, rangeBytes(fwd, bm, bounds[k], bounds[k+1]))
	}
	res, err = r.count(ctx, bounds, bm, rb, ratio, opts)
	return res, st, err
}

// rangesRun is one CountInRanges: its host arrays (two sides, each a
// range's entries and rows), their pins, and when each step ended (a
// debug line). c.mu is held throughout.
type rangesRun struct {
	c     *Counter
	fwd   *graph.CSR
	st    *kernels.RangeStats
	start time.Time
	// When each step ended, in seconds from the start; tFaulted and
	// tPinned in nanoseconds, set by the goroutines.
	tAlloc, tFirst, tLoop, listWait float64
	tFaulted, tPinned               [2]atomic.Int64

	cols      []uint32 // fwd.Cols, or a padded copy (padBytes)
	pinned    bool     // cols are pinned already (the pin registry's)
	prepinned bool     // the sides lie in the spare pinned room
	arena     *devmem.Arena
	ents      [2][]rangeRow
	rows      [2][]uint32
	frees     []func()
	regs      []*abi.Registration // made by the pins' goroutine, read after firstDone or secondDone

	colsErr, firstErr, secondErr    error
	colsDone, firstDone, secondDone chan struct{}
	faulted                         [2]chan struct{} // a side's fresh pages are touched
	returned                        atomic.Bool      // the second side is not wanted
}

// since is the time from the start in nanoseconds.
func (r *rangesRun) since() int64 { return int64(time.Since(r.start)) }

// logTimeline writes when each step ended at debug level.
func (r *rangesRun) logTimeline() {
	st := r.st
	r.c.lib.logger.Debug("ranges: timeline", "allocated", r.tAlloc, "setup", st.Setup.Seconds(),
		"faulted", []float64{float64(r.tFaulted[0].Load()) / 1e9, float64(r.tFaulted[1].Load()) / 1e9},
		"pinned", []float64{float64(r.tPinned[0].Load()) / 1e9, float64(r.tPinned[1].Load()) / 1e9},
		"listed_first", st.Prepare.Seconds(), "first_call", r.tFirst, "list_wait", r.listWait,
		"counted", r.tLoop, "returned", time.Since(r.start).Seconds())
}

// allocSides makes the two sides, each a range's entries (a row each at
// most) and its rows (offsets and bitmap offsets from the range's first,
// two words a row), for a graph of n rows and a work area of area bytes:
// the host lists the next range into one while the device counts from
// the other. They lie in spare (none: no room) when it has room, else in
// fresh pages (osmem): a make of them would clear them on one core first.
func (r *rangesRun) allocSides(spare spareRoom, n, area int64) {
	capEntries := max(n, padBytes/int64(unsafe.Sizeof(rangeRow{})))
	capRows := max(2*(min(n, rangesRowsAtMost(area))+1), padBytes/4)
	r.arena = devmem.NewArena(spare.mem, spare.bytes)
	r.frees = append(r.frees, r.arena.Free)
	r.prepinned = r.arena.Fits(2 * (devmem.ArenaBytes[rangeRow](int(capEntries)) + devmem.ArenaBytes[uint32](int(capRows))))
	sides := r.arena
	if !r.prepinned {
		sides = devmem.NewArena(nil, 0) // all four in fresh pages, pinned below
		r.frees = append(r.frees, sides.Free)
	}
	for i := range 2 {
		r.ents[i] = devmem.Alloc[rangeRow](sides, int(capEntries))
		r.rows[i] = devmem.Alloc[uint32](sides, int(capRows))
	}
	r.st.PinnedSides = r.prepinned
	r.tAlloc = time.Since(r.start).Seconds()
}

// startPins touches and pins the host arrays in the background, in order:
// the columns (when not held) and the first side beside the set-up and the
// first range's listing (colsDone, then firstDone), the second beside the
// first range's count (secondDone). A side's fresh pages are touched on
// all cores (faulted[i] closes then) before the listing writes them and
// before they are pinned: the pin would take their faults on the driver's
// one thread. Both are touched and pinned from the start, beside the
// set-up: a pin after it meets the first ranges' calls in the driver and
// slows the device
// (docs/decisions/2026-11-24-ranges-32-bit-rows-pinned-sides.md). The
// columns' pin does not wait for the touch.
func (r *rangesRun) startPins() {
	r.colsDone, r.firstDone, r.secondDone = make(chan struct{}), make(chan struct{}), make(chan struct{})
	r.faulted = [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	go func() {
		for i := range 2 {
			if !r.prepinned {
				devmem.Prefault(r.ents[i])
				devmem.Prefault(r.rows[i])
			}
			r.tFaulted[i].Store(r.since())
			close(r.faulted[i])
		}
	}()
	go func() {
		defer close(r.secondDone)
		defer func() { <-r.faulted[1] }() // no touch outlives the pins
		pin := func(reg *abi.Registration, err error) error {
			if reg != nil {
				r.regs = append(r.regs, reg)
			}
			return err
		}
		if len(r.cols) > 0 && !r.pinned {
			r.colsErr = pin(abi.Register(r.c.lib.abi, r.cols))
		}
		r.firstErr = r.colsErr
		close(r.colsDone)
		<-r.faulted[0]
		if r.firstErr == nil && !r.prepinned {
			r.firstErr = pin(abi.Register(r.c.lib.abi, r.ents[0]))
		}
		if r.firstErr == nil && !r.prepinned {
			r.firstErr = pin(abi.Register(r.c.lib.abi, r.rows[0]))
		}
		r.tPinned[0].Store(r.since())
		close(r.firstDone)
		<-r.faulted[1]
		if r.firstErr == nil && !r.prepinned && !r.returned.Load() {
			r.secondErr = pin(abi.Register(r.c.lib.abi, r.ents[1]))
		}
		if r.secondErr == nil && !r.prepinned && !r.returned.Load() {
			r.secondErr = pin(abi.Register(r.c.lib.abi, r.rows[1]))
		}
		r.tPinned[1].Store(r.since())
	}()
}

// giveBack releases the host arrays once the pins are done: after a count
// (counted) in the background, taking over *unlock so that c.mu is held
// until then; else before it returns, within st.Pin.
func (r *rangesRun) giveBack(counted bool, unlock *func()) {
	r.returned.Store(true)
	giveBack := func() {
		<-r.secondDone
		for _, reg := range r.regs {
			r.c.lib.releaseLogged(reg)
		}
		for _, free := range r.frees {
			free()
		}
	}
	if counted {
		u := *unlock
		*unlock = func() {}
		go func() {
			giveBack()
			u()
		}()
		return
	}
	t := time.Now()
	giveBack()
	r.st.Pin += time.Since(t)
}

// wait waits for done, within st.Pin, and returns *err.
func (r *rangesRun) wait(done chan struct{}, err *error) error {
	t := time.Now()
	<-done
	r.st.Pin += time.Since(t)
	return *err
}

// rangeListing is a listed range's entries and the columns they reach.
type rangeListing struct{ entries, mapped int64 }

// startLister lists the ranges of bounds ahead of the device, in order,
// each into its side once the range before it there is counted (a send on
// freed[side]): listed carries each range's listing, at most two listed
// and not counted. opts.Listed is called after the last. stop ends it and
// waits for its end, since it writes the sides.
func (r *rangesRun) startLister(bounds []int64, bm []uint64, rb *rangeBuilder, opts kernels.RangeOptions) (listed chan rangeListing, freed [2]chan struct{}, stop func()) {
	// list readies side k%2 for range k: its entries and its rows.
	list := func(k int) (entries, mapped int64) {
		if k < 2 {
			<-r.faulted[k]
		}
		entries, mapped = rb.build(k, r.ents[k%2])
		rangeRows(r.fwd, bm, bounds[k], bounds[k+1], r.rows[k%2])
		return entries, mapped
	}
	listed = make(chan rangeListing, 2)
	freed = [2]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)}
	quit, lister := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(lister)
		for k := 0; k+1 < len(bounds); k++ {
			if k >= 2 {
				select {
				case <-freed[k%2]:
				case <-quit:
					return
				}
			}
			t := time.Now()
			ne, m := list(k)
			if k == 0 {
				r.st.Prepare = time.Since(t)
			}
			r.c.lib.logger.Debug("ranges: entries listed", "range", k, "entries", ne, "seconds", time.Since(t).Seconds())
			listed <- rangeListing{ne, m}
		}
		if opts.Listed != nil {
			opts.Listed()
		}
	}()
	return listed, freed, func() {
		close(quit)
		<-lister
	}
}

// begin reserves the work area and loads the kernels (tg_ranges_begin)
// beside the first ranges' listing, once the columns are pinned; the
// context is the beginning's alone until it returns. end frees the work
// area (nil when begin failed).
func (r *rangesRun) begin(ratio uint32) (end func(), err error) {
	c, n := r.c, r.fwd.NumRows()
	begun := make(chan error, 1)
	go func() {
		<-r.colsDone
		if r.colsErr != nil {
			begun <- r.colsErr
			return
		}
		begun <- c.ctx.RangesBegin(r.cols, uint64(len(r.fwd.Cols)), uint64(n), uint64(r.st.AreaBytes), ratio)
	}()
	if err := <-begun; err != nil {
		return nil, err
	}
	return func() {
		if err := c.ctx.RangesEnd(); err != nil {
			c.lib.logger.Warn("freeing the ranges' work area", "err", err)
		}
		c.notePeak()
	}, nil
}

// count counts the ranges of bounds (bitmap offsets bm, entries built by
// rb, bitmaps under ratio), the host listing each ahead of the device.
func (r *rangesRun) count(ctx context.Context, bounds []int64, bm []uint64, rb *rangeBuilder, ratio uint32, opts kernels.RangeOptions) (res kernels.Result, err error) {
	c, fwd, st := r.c, r.fwd, r.st
	listed, freed, stop := r.startLister(bounds, bm, rb, opts)
	defer stop()
	end, berr := r.begin(ratio)
	if berr == nil {
		defer end()
	}
	if err := r.wait(r.firstDone, &r.firstErr); err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count in ranges: %w", err)
	}
	if berr != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count in ranges: %w", berr)
	}
	tc := time.Now()
	for k := 0; k+1 < len(bounds); k++ {
		if err := ctx.Err(); err != nil {
			return kernels.Result{}, err
		}
		t := time.Now()
		l := <-listed
		if k > 0 {
			r.listWait += time.Since(t).Seconds()
		}
		st.Entries += l.entries
		st.MappedBytes += l.mapped*4 + l.entries*int64(unsafe.Sizeof(rangeRow{}))
		if k == 1 {
			if err := r.wait(r.secondDone, &r.secondErr); err != nil {
				return kernels.Result{}, fmt.Errorf("gpu: count in ranges: %w", err)
			}
		}
		a, b := bounds[k], bounds[k+1]
		if k == 0 {
			r.tFirst = time.Since(r.start).Seconds()
		}
		tri, ms, err := c.ctx.RangesCount(r.rows[k%2], fwd.Offsets[a], uint64(a), uint64(b-a), r.ents[k%2][:l.entries])
		freed[k%2] <- struct{}{}
		if err != nil {
			return kernels.Result{}, fmt.Errorf("gpu: count in ranges: range %d of %d (rows %d to %d): %w", k+1, len(bounds)-1, a, b, err)
		}
		res.Triangles += tri
		res.KernelTime += time.Duration(ms * float64(time.Millisecond))
		st.ResidentBytes += (b-a+1)*8 + int64(fwd.Offsets[b]-fwd.Offsets[a])*4
		st.BitmapBytes += int64(bm[b]-bm[a]) * 4
	}
	runtime.KeepAlive(r.cols)
	r.tLoop = time.Since(r.start).Seconds()
	c.calls += time.Since(tc)
	c.busy += res.KernelTime
	c.copied += uint64(st.ResidentBytes)
	return res, nil
}

// rangeRows writes rows [a, b) of fwd as tg_ranges_count takes them into
// out: their offsets from row a's, then their bitmap offsets (bm) from row
// a's, b - a + 1 words each. The range's columns and bitmap words are
// below 2^32 (rangeBytes).
func rangeRows(fwd *graph.CSR, bm []uint64, a, b int64, out []uint32) {
	nr := int(b - a)
	off, words := fwd.Offsets[a:b+1], bm[a:b+1]
	o0, w0 := off[0], words[0]
	bout := out[nr+1 : 2*nr+2]
	parallel.Dynamic(nr+1, builderChunk, 0, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = uint32(off[i] - o0)
			bout[i] = uint32(words[i] - w0)
		}
	})
}

// rangeBytes is the work area of fwd's rows [a, b) with bitmap offsets bm
// (abi.RangesBytes); math.MaxInt64 when their columns or bitmap words reach
// 2^32, which tg_ranges_count's offsets cannot name.
func rangeBytes(fwd *graph.CSR, bm []uint64, a, b int64) int64 {
	ncols, words := fwd.Offsets[b]-fwd.Offsets[a], bm[b]-bm[a]
	if ncols > math.MaxUint32 || words > math.MaxUint32 {
		return math.MaxInt64
	}
	return abi.RangesBytes(b-a, int64(ncols), int64(words))
}

// cutRowRanges cuts fwd's rows into the fewest ranges, in order, whose
// rows and bitmaps (offsets bm) fit area bytes (abi.RangesBytes), filling them
// from the last row down: the last rows (the hubs, in degree order) are
// named by nearly every row, so each range among them costs the kernels a
// pass over nearly every row's tail; filled from the end they take the
// fewest ranges, and the range left over is the first, whose rows few
// others name (rmat 23 at a quarter of its CSR: 12.2M entries and 311M
// tail columns in six ranges, against 14.3M and 348M filled from the
// first row). bounds[k] is range k's first row. A graph with no rows is
// one empty range. An error wrapping ErrOutOfMemory means a single row
// does not fit, and gives the least area.
func cutRowRanges(fwd *graph.CSR, bm []uint64, area int64) ([]int64, error) {
	if fwd.NumRows() == 0 {
		return []int64{0, 0}, nil
	}
	bounds := []int64{fwd.NumRows()}
	for b := fwd.NumRows(); b > 0; {
		// The least a in [0, b) whose rows [a, b) fit, at most b - 1.
		a := int64(sort.Search(int(b), func(i int) bool { return rangeBytes(fwd, bm, int64(i), b) <= area }))
		a = min(a, b-1)
		bounds = append(bounds, a)
		b = a
	}
	slices.Reverse(bounds)
	for k := 0; k+1 < len(bounds); k++ {
		a, b := bounds[k], bounds[k+1]
		if need := rangeBytes(fwd, bm, a, b); b == a+1 && need > area {
			return nil, fmt.Errorf("row %d of %d columns needs %d bytes of device memory, %d are free for it: %w",
				a, fwd.Offsets[b]-fwd.Offsets[a], devmem.AllocBytes(need), max(area, 0), ErrOutOfMemory)
		}
	}
	return bounds, nil
}

// rangeBuilder lists each range's entries, a range at a time, over
// chunks of rows on all cores: cursor[u] is where row u's columns not yet
// in a range begin and next[u] the first of them (^0 when none is left),
// so that finding the rows with columns in a range reads next in order and
// touches the columns of those rows only. When every row's columns lie
// above the row (forward), range k's entries come from rows below its
// last only, and only those are read. Each listing counts, per chunk, the
// rows with entries in the next range, so that its listing needs one pass.
type rangeBuilder struct {
	fwd     *graph.CSR
	bounds  []int64
	forward bool // every row's first column exceeds the row
	cursor  []uint32
	next    []uint32
	counts  [2][]int64 // per chunk of rows: range k's in counts[k%2]
}

// builderChunk is the rows of a chunk of the builder's work.
const builderChunk = 1 << 14

// below is the least column past range k: the last range takes every
// column left, so that the device sees a column beyond the rows.
func (rb *rangeBuilder) below(k int) uint32 {
	if k+2 >= len(rb.bounds) {
		return ^uint32(0)
	}
	return uint32(min(rb.bounds[k+1], int64(^uint32(0))))
}

// rowsOf is the rows that may have entries in range k: those below its
// last when the graph is forward, else every row.
func (rb *rangeBuilder) rowsOf(k int) int {
	if rb.forward && k+1 < len(rb.bounds) {
		return int(rb.bounds[k+1])
	}
	return len(rb.next)
}

// build writes range k's entries (every row with columns in it, in row
// order) into out, which holds a row each, and returns their number and
// the columns they reach. Ranges are built in order, from the first: each
// build counts the next range's entries.
func (rb *rangeBuilder) build(k int, out []rangeRow) (int64, int64) {
	g, below := rb.fwd, rb.below(k)
	last := k+2 >= len(rb.bounds)
	rows, counts := rb.rowsOf(k), rb.counts[k%2]
	if k == 0 {
		parallel.Dynamic(rows, builderChunk, 0, func(lo, hi int) {
			var c int64
			for _, x := range rb.next[lo:hi] {
				if x < below {
					c++
				}
			}
			counts[lo/builderChunk] = c
		})
	}
	var total int64
	for i, c := range counts[:(rows+builderChunk-1)/builderChunk] {
		counts[i] = total
		total += c
	}
	// The pass also counts range k+1's rows, over the rows it may have.
	after, ahead := rb.below(k+1), rb.counts[(k+1)%2]
	span := rows
	if !last {
		span = rb.rowsOf(k + 1)
	}
	var m atomic.Int64
	parallel.Dynamic(span, builderChunk, 0, func(lo, hi int) {
		pos, sum, c := counts[lo/builderChunk], int64(0), int64(0)
		for u := lo; u < hi; u++ {
			x := rb.next[u]
			if x < below && u < rows {
				o, e := g.Offsets[u], g.Offsets[u+1]
				s := o + uint64(rb.cursor[u])
				j := e
				if !last {
					j = seek(g.Cols, s+1, e, below)
				}
				out[pos] = rangeRow{Start: s, Seg: uint32(j - s), Len: uint32(e - s)}
				pos++
				sum += int64(e - s)
				rb.cursor[u] = uint32(j - o)
				x = ^uint32(0)
				if j < e {
					x = g.Cols[j]
				}
				rb.next[u] = x
			}
			if x < after {
				c++
			}
		}
		m.Add(sum)
		ahead[lo/builderChunk] = c
	})
	return total, m.Load()
}

// seek is the first i in [lo, hi) with cols[i] >= x, or hi, for cols[lo:hi]
// increasing: steps doubling from lo, then a binary search within the
// last step, so that a row's columns in a range cost their logarithm.
func seek(cols []uint32, lo, hi uint64, x uint32) uint64 {
	for step := uint64(1); lo < hi && cols[lo] < x; step *= 2 {
		// cols[lo] < x: the answer lies in (lo, min(lo+step, hi)].
		end := min(lo+step, hi)
		if end < hi && cols[end] < x {
			lo = end
			continue
		}
		i, _ := slices.BinarySearch(cols[lo+1:end], x)
		return lo + 1 + uint64(i)
	}
	return lo
}
