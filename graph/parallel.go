package graph

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// resolveWorkers maps a Workers option to a goroutine count: 0 or less means
// GOMAXPROCS, so callers can pass the zero value of an options struct.
func resolveWorkers(w int) int {
	if w <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return w
}

// forEachStatic splits [0, n) into parts contiguous ranges of near-equal size
// and runs fn(part, lo, hi) for each on its own goroutine. Static ranges are
// used where two passes must see the same edges in the same part (per-part
// counts in one pass become per-part cursors in the next).
func forEachStatic(n, parts int, fn func(part, lo, hi int)) {
	if parts < 1 {
		parts = 1
	}
	if parts == 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := staticRange(n, parts, p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p, lo, hi)
		}()
	}
	wg.Wait()
}

// staticRange is part p of [0, n) cut into parts near-equal ranges.
func staticRange(n, parts, p int) (lo, hi int) {
	q, r := n/parts, n%parts
	lo = p*q + min(p, r)
	hi = lo + q
	if p < r {
		hi++
	}
	return lo, hi
}

// exclusiveScan replaces a[i] by the sum of a[:i] and returns the total. It
// is parallel for long arrays: per-range sums, a short serial scan of those,
// then per-range rewrites.
func exclusiveScan(a []uint64, workers int) uint64 {
	total, _ := scanLongest(a, workers)
	return total
}

// OffsetsFromLengths turns row lengths into CSR offsets in place: a holds
// n lengths then one more word; a[i] becomes the sum of the lengths before
// row i and a[n] their total. It returns the longest length. It runs on
// workers goroutines (0 or less: GOMAXPROCS) for long arrays.
func OffsetsFromLengths(a []uint64, workers int) (longest uint64) {
	if len(a) == 0 {
		return 0
	}
	n := len(a) - 1
	a[n], longest = scanLongest(a[:n], resolveWorkers(workers))
	return longest
}

// scanLongest is exclusiveScan that also returns the largest value of a,
// noted in the pass that sums it.
func scanLongest(a []uint64, workers int) (total, longest uint64) {
	const serialBelow = 1 << 16
	parts := min(workers, len(a)/serialBelow)
	if parts <= 1 {
		var s uint64
		for i, x := range a {
			a[i] = s
			s += x
			longest = max(longest, x)
		}
		return s, longest
	}
	sums := make([]uint64, parts)
	longs := make([]uint64, parts)
	forEachStatic(len(a), parts, func(p, lo, hi int) {
		var s, m uint64
		for _, x := range a[lo:hi] {
			s += x
			m = max(m, x)
		}
		sums[p], longs[p] = s, m
	})
	for p, s := range sums {
		sums[p] = total
		total += s
		longest = max(longest, longs[p])
	}
	forEachStatic(len(a), parts, func(p, lo, hi int) {
		s := sums[p]
		for i := lo; i < hi; i++ {
			x := a[i]
			a[i] = s
			s += x
		}
	})
	return total, longest
}

// progressMeter forwards progress to a user callback, serialised and
// throttled so that a cheap pass over millions of edges does not spend its
// time in the callback. A nil callback makes every method a no-op.
type progressMeter struct {
	fn    func(done, total int64)
	total int64
	step  int64
	done  atomic.Int64
	mu    sync.Mutex
	last  int64
}

func newProgressMeter(fn func(done, total int64), total int64) *progressMeter {
	return &progressMeter{fn: fn, total: total, step: max(total/256, 1)}
}

// add records k more units of work done.
func (p *progressMeter) add(k int64) {
	if p == nil || p.fn == nil {
		return
	}
	d := p.done.Add(k)
	p.report(d, false)
}

// set moves the meter to done units, as at the end of a phase.
func (p *progressMeter) set(done int64) {
	if p == nil || p.fn == nil {
		return
	}
	p.done.Store(done)
	p.report(done, true)
}

func (p *progressMeter) report(d int64, force bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d > p.total {
		d = p.total
	}
	if d < p.last || (!force && d-p.last < p.step) {
		return
	}
	p.last = d
	p.fn(d, p.total)
}
