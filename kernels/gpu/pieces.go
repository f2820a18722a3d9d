package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// errPiecesFailed marks a failure after the pieces began to overwrite the
// caller's pairs: the host can no longer build the forward graph from them.
var errPiecesFailed = errors.New("the pairs were consumed")

// orientInPieces is OrientOnDevice for pairs that do not fit the device
// for tg_preprocess: the device works on pieces of its work area's size
// while the host keeps the keys, every result written back over the host
// memory it was read from (tg_pieces_*), so that the host holds no second
// copy of the graph. With bits (rank bits, as graph.MarkedPairs has them)
// the pairs hold the input's ids, which the device maps to the n compact
// ids as it makes their keys.
//
//  1. Runs: each piece of pairs becomes its keys (min << 32 | max),
//     sorted and deduplicated, written back over the pairs.
//  2. Merge: the key space is cut into ranges whose keys in all runs fit
//     a piece; each range is sorted and deduplicated again, its degrees
//     counted on the device, and written back over the spans of the runs
//     it was read from: the edges, in order, in parts of the pairs'
//     memory (a rope).
//  3. Ranks: the device ranks the degrees (tg_pieces_rank; the host does,
//     through graph.DegreeOrder, when a piece holds fewer keys than there
//     are vertices).
//  4. Oriented runs: each piece of the edges becomes its forward keys
//     (min rank << 32 | max rank), sorted, in place.
//  5. CSR: key ranges of those runs, each no more rows than a piece,
//     become the row lengths and the columns, written back over the spans
//     they were read from as 32-bit words; the columns' parts then move
//     to the front of the pairs' memory, in order (compactWords).
//
// With idle, the n vertices are the input's own ids, some of them without
// an edge: after the merge those are dropped, the others numbered in
// ascending order of their ids (as graph.Compact numbers them), and rank
// holds ^uint32(0) for each dropped id (dropIdle).
//
// The result is the forward graph and ranks tg_preprocess makes. When the
// work area does not fit, or the runs would be more than a piece can merge,
// the pairs are left as they were and the error wraps ErrOutOfMemory. Once
// the runs begin, the pairs' memory is the keys' and then the columns'
// (the CSR's Cols share it); an error after that does not wrap
// ErrOutOfMemory. The memory past the columns stays the counter's spare
// room for a count in ranges of the graph (c.spare).
func (c *Counter) orientInPieces(ctx context.Context, pairs []uint32, n uint64, bits []uint64, idle bool) (*graph.CSR, []uint32, kernels.PrepStats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient in pieces: counter is closed")
	}
	// What PrepareOrient readied and this orientation does not take (it
	// declines, or its pairs lie elsewhere) is released on the way out.
	defer c.dropPiecesHost()
	c.dropSpare()
	np := uint64(len(pairs) / 2)
	capItems, err := c.ctx.PiecesBegin(n, max(np, 1), bits)
	if err != nil {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient in pieces: %w", err)
	}
	p := &pieces{c: c, cap: capItems, idle: idle}
	defer p.end()
	if runs := (np + capItems - 1) / capItems; runs > maxPieceRuns {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient in pieces: %d pairs make %d runs of %d keys, more than %d: %w",
			np, runs, capItems, maxPieceRuns, ErrOutOfMemory)
	}
	t0 := time.Now()
	keys := wordsAsKeys(pairs, np)
	var reg *abi.Registration
	if h := c.takePiecesHost(keys); h != nil {
		reg = h.reg // pinned while the host still compacted the pairs
	} else {
		reg = c.lib.registerPairs(kernels.IDPairs{P64: keys})
	}
	kept := false
	defer func() {
		if reg != nil && !kept {
			p.release(reg)
		}
	}()
	p.log("pieces: work area, pairs pinned", t0, "capacity", capItems, "pairs", np)
	fwd, rank, st, err := p.run(ctx, keys, n)
	if err != nil {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient in pieces (%w): %w", errPiecesFailed, err)
	}
	// The columns lie in the keys' pinned memory: the pin registry keeps
	// it as their pin (a count in ranges reads them from there), when it
	// has room.
	if len(fwd.Cols) > 0 && reg.Holds(unsafe.Pointer(&fwd.Cols[0]), uint64(len(fwd.Cols))*4) {
		kept = c.lib.pins.Adopt(fwd, reg, int64(reg.Bytes()))
	}
	if kept {
		c.spare = spareAfter(fwd, keyWords(keys))
	}
	return fwd, rank, st, nil
}

// keyWords is the keys' memory as 32-bit words.
func keyWords(keys []uint64) []uint32 {
	if len(keys) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(keys))), 2*len(keys))
}

// wordsAsKeys is the pairs' memory as np 8-byte items, or a copy of them
// when their array is not 8-byte aligned.
func wordsAsKeys(pairs []uint32, np uint64) []uint64 {
	if np == 0 {
		return nil
	}
	at := unsafe.Pointer(unsafe.SliceData(pairs))
	if uintptr(at)%8 == 0 {
		return unsafe.Slice((*uint64)(at), np)
	}
	k := make([]uint64, np)
	for i := range k {
		k[i] = uint64(pairs[2*i]) | uint64(pairs[2*i+1])<<32
	}
	return k
}

// maxPieceRuns bounds the runs the pieces make (below
// abi.PiecesMinItems, so a range of one key always fits a piece): each merged range takes a
// span of every run, so the copies grow with the square of the runs. On one
// H200, rmat 23 at a quarter of its CSR makes 19 runs of 7.4M keys and is
// faster than the host's build (order 0.82 -> 0.46 s); at a twentieth,
// where the vertex words take most of the cap, 268 runs of about 500K keys
// were slower (total 2.4 -> 3.3-3.7 s). The bound lies between the two,
// not measured closer.
const maxPieceRuns = 64

// PiecesMayTake reports whether an orientation in pieces under a device
// limit of limit bytes may take np pairs over n vertices with an id map of
// idWords words: whether their runs would be at most maxPieceRuns, a
// piece's items taking 16 bytes of the room the context, the vertex words
// and the map leave (the sort's scratch not counted), and n below the
// GPU path's 2^32-1 vertices. It errs towards yes; the pieces decide when
// they begin.
func PiecesMayTake(limit, np, n, idWords uint64) bool {
	if n >= math.MaxUint32 {
		return false // beyond the GPU path's vertices (tg_pieces_begin)
	}
	fixed := uint64(devmem.ContextBytes) + n*4 + idWords*8
	if limit <= fixed {
		return false
	}
	capItems := max((limit-fixed)/16, 1)
	return (np+capItems-1)/capItems <= maxPieceRuns
}

// pieces drives one work area; c.mu is held.
type pieces struct {
	c    *Counter
	cap  uint64 // items a piece holds
	idle bool   // the vertices without an edge are dropped (dropIdle)
}

// release unpins a host array, logging the time it took.
func (p *pieces) release(reg *abi.Registration) {
	t := time.Now()
	p.c.lib.releaseLogged(reg)
	p.log("pieces: host array released", t)
}

// log notes a step's time at debug level.
func (p *pieces) log(msg string, since time.Time, args ...any) {
	p.c.lib.logger.Debug(msg, append(args, "seconds", time.Since(since).Seconds())...)
}

func (p *pieces) end() {
	if err := p.c.ctx.PiecesEnd(); err != nil {
		p.c.lib.logger.Warn("freeing the pieces' work area", "err", err)
	}
}

// sort is tg_pieces_sort: it returns the keys written to out and the
// self-loops dropped.
func (p *pieces) sort(op, flags int32, base []uint64, spans []uint64, out []uint64) (nout, loops uint64, err error) {
	return p.c.ctx.PiecesSort(op, flags, base, spans, out)
}

// rank ranks the vertices by (degree, id) from the degrees in the vertex
// words into rank, which then are the vertex words too: on the device
// (tg_pieces_rank) when its work area holds a key a vertex, else on the
// host (graph.DegreeOrder). With idle > 0 (the vertices without an edge,
// idleVertices, which left the degrees in rank) their ranks are dropped as
// dropIdle drops them. It returns the wedges and the largest degree.
func (p *pieces) rank(rank []uint32, idle uint64) (wedges, maxDeg uint64, err error) {
	if uint64(len(rank)) <= p.cap {
		wedges, maxDeg, err = p.c.ctx.PiecesRank(rank)
		if err == nil && idle > 0 {
			err = p.dropIdle(rank, idle)
		}
		return wedges, maxDeg, err
	}
	// On the host: the degrees read once (idleVertices may have read
	// them), the ranks less the idle ones written back once.
	if !p.idle {
		if err := p.c.ctx.PiecesVertices(rank, false); err != nil {
			return 0, 0, err
		}
	}
	r, w, md := graph.DegreeOrder(rank, 0)
	parallelRange(len(rank), runtime.GOMAXPROCS(0), func(_, lo, hi int) {
		dropIdleRanks(rank[lo:hi], r[lo:hi], idle)
	})
	return w, uint64(md), p.c.ctx.PiecesVertices(rank, true)
}

// run does the five steps over keys (the pairs' memory), every result
// written back into it.
func (p *pieces) run(ctx context.Context, keys []uint64, n uint64) (*graph.CSR, []uint32, kernels.PrepStats, error) {
	np := uint64(len(keys))
	st := kernels.PrepStats{Vertices: n, InputPairs: np}
	// 1. Sorted, deduplicated runs of the pairs' keys, in place.
	t := time.Now()
	runs, loops, err := p.sortRuns(ctx, abi.PiecesPairs, abi.PiecesUnique, keys, span(0, np))
	if err != nil {
		return nil, nil, st, err
	}
	p.log("pieces: runs of the pairs' keys", t, "runs", len(runs))
	t = time.Now()
	st.SelfLoops = loops
	// The host arrays of steps 3 and 5 are made and touched on all cores
	// while the device merges: a copy from the device into fresh pages
	// would take their faults on the driver's one thread.
	var (
		rank   []uint32 // the ranks, from the device
		rowptr []uint64 // the row lengths, then the offsets
		counts []uint32 // a piece's row lengths
	)
	arrays := make(chan struct{})
	go func() {
		defer close(arrays)
		rank, rowptr, counts = make([]uint32, n), make([]uint64, n+1), make([]uint32, p.cap)
		devmem.Prefault(rank)
		devmem.Prefault(rowptr)
		devmem.Prefault(counts)
	}()
	defer func() { <-arrays }()
	// 2. Key ranges merged, deduplicated, their degrees counted, each
	// written back over the spans it was read from.
	var edges rope
	err = cutRanges(runs, p.cap, keys, func(lo, hi uint64, spans []uint64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		got, _, err := p.sort(abi.PiecesKeys, abi.PiecesUnique|abi.PiecesDegrees, keys, spans, nil)
		back := filled(spans, got, 1)
		for i := 0; i < len(back.segs); i += 2 {
			edges.add(back.segs[i], back.segs[i+1])
		}
		return err
	})
	if err != nil {
		return nil, nil, st, err
	}
	m := edges.len()
	p.log("pieces: merged", t, "edges", m, "parts", len(edges.segs)/2)
	t = time.Now()
	<-arrays
	// 3. Ranks from the degrees, the vertices without an edge dropped.
	var idle uint64
	if p.idle {
		if idle, err = p.idleVertices(rank); err != nil {
			return nil, nil, st, err
		}
	}
	wedges, maxDeg, err := p.rank(rank, idle)
	if err != nil {
		return nil, nil, st, err
	}
	live := n - idle // the forward graph's rows
	rowptr = rowptr[:live+1]
	st.Vertices = live
	p.log("pieces: ranks", t, "dropped", idle)
	t = time.Now()
	// 4. Forward keys, sorted in runs, in place.
	fruns, _, err := p.sortRuns(ctx, abi.PiecesOrient, 0, keys, edges)
	if err != nil {
		return nil, nil, st, err
	}
	p.log("pieces: forward runs", t, "runs", len(fruns))
	t = time.Now()
	// 5. The CSR: columns written back as words, row lengths into rowptr
	// (a row may span two key ranges), then its offsets.
	colWords, parts, err := p.csr(ctx, keys, fruns, live, rowptr, counts)
	if err != nil {
		return nil, nil, st, err
	}
	if uint64(len(colWords)) != m {
		return nil, nil, st, fmt.Errorf("%d columns made of %d edges", len(colWords), m)
	}
	maxFwd := graph.OffsetsFromLengths(rowptr, 0)
	p.log("pieces: forward graph", t, "parts", parts)
	st.Edges, st.Duplicates = m, np-st.SelfLoops-m
	st.Wedges, st.MaxDegree, st.MaxForward = wedges, maxDeg, maxFwd
	return &graph.CSR{Offsets: rowptr, Cols: colWords, NCols: int64(live)}, rank, st, nil
}

// idleVertices counts the vertices without an edge from the degrees in
// the vertex words, read into words (n of them).
func (p *pieces) idleVertices(words []uint32) (uint64, error) {
	if err := p.c.ctx.PiecesVertices(words, false); err != nil {
		return 0, err
	}
	return countZeros(words, runtime.GOMAXPROCS(0)), nil
}

// dropIdle renumbers the ranks of rank (by (degree, id): the idle
// vertices, without an edge, hold ranks 0..idle-1) so that the vertices
// with an edge hold 0..n-idle-1 in the same order and the idle ones
// ^uint32(0), and makes them the vertex words the forward keys are made
// from.
func (p *pieces) dropIdle(rank []uint32, idle uint64) error {
	parallelRange(len(rank), runtime.GOMAXPROCS(0), func(_, lo, hi int) {
		dropIdleRanks(rank[lo:hi], rank[lo:hi], idle)
	})
	return p.c.ctx.PiecesVertices(rank, true)
}

// dropIdleRanks writes into dst the ranks of src with the idle lowest
// (the vertices without an edge) made ^0 and the others moved down by
// idle. dst and src are the same length and may be the same slice.
func dropIdleRanks(dst, src []uint32, idle uint64) {
	for i, r := range src {
		if uint64(r) < idle {
			dst[i] = ^uint32(0)
		} else {
			dst[i] = r - uint32(idle)
		}
	}
}

// countZeros is the number of zero words, counted on workers goroutines.
func countZeros(words []uint32, workers int) uint64 {
	counts := make([]uint64, max(workers, 1))
	parallelRange(len(words), len(counts), func(k, lo, hi int) {
		var z uint64
		for _, w := range words[lo:hi] {
			if w == 0 {
				z++
			}
		}
		counts[k] = z
	})
	var z uint64
	for _, c := range counts {
		z += c
	}
	return z
}

// parallelRange calls fn with part k of [0, n), lo..hi-1, for each k
// below parts (at most n), each on its own goroutine, and waits.
func parallelRange(n, parts int, fn func(k, lo, hi int)) {
	parts = max(1, min(parts, n))
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := n*k/parts, n*(k+1)/parts
		wg.Go(func() { fn(k, lo, hi) })
	}
	wg.Wait()
}

// csr builds the forward CSR of the forward runs fruns of keys over live
// rows: each key range's row lengths added into rowptr (counts: a piece's
// lengths), its columns written back over its spans as 32-bit words, and
// at the end the columns moved to the front of keys' memory, which it
// returns with the number of parts they lay in.
func (p *pieces) csr(ctx context.Context, keys []uint64, fruns []rope, live uint64, rowptr []uint64, counts []uint32) ([]uint32, int, error) {
	var cols rope
	err := cutRanges(fruns, p.cap, keys, func(lo, hi uint64, spans []uint64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		row0 := lo >> 32
		rows := min(live, (hi-1)>>32+1) - min(row0, live)
		nout, err := p.c.ctx.PiecesCSR(keys, spans, row0, rows, nil, counts)
		if err != nil {
			return err
		}
		for i, k := range counts[:rows] {
			rowptr[row0+uint64(i)] += uint64(k)
		}
		back := filled(spans, nout, 2)
		for i := 0; i < len(back.segs); i += 2 {
			cols.add(back.segs[i], back.segs[i+1])
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	words, err := compactWords(keyWords(keys), cols, runtime.GOMAXPROCS(0))
	return words, len(cols.segs) / 2, err
}

// sortRuns sorts the items of the rope in of keys a piece at a time by op
// and flags, each piece's result written back over the spans it was read
// from; it returns the sorted runs and the self-loops dropped.
func (p *pieces) sortRuns(ctx context.Context, op, flags int32, keys []uint64, in rope) (runs []rope, loops uint64, err error) {
	var spans []uint64
	for off := uint64(0); off < in.len(); off += p.cap {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		size := min(p.cap, in.len()-off)
		spans = in.spans(spans[:0], off, size)
		got, l, err := p.sort(op, flags, keys, spans, nil)
		if err != nil {
			return nil, 0, err
		}
		runs = append(runs, filled(spans, got, 1))
		loops += l
	}
	return runs, loops, nil
}

// cutRanges cuts the key space into ranges [lo, hi), in order, each
// holding at most limit keys of the runs (ropes of base, each sorted with
// no key twice) and keys of at most limit rows (key >> 32), and calls fn
// with each non-empty range and its spans: per run, the spans of base that
// hold its keys in the range. fn may overwrite the spans it is given: no
// later range reads them.
func cutRanges(runs []rope, limit uint64, base []uint64, fn func(lo, hi uint64, spans []uint64) error) error {
	if limit < uint64(len(runs)) {
		return fmt.Errorf("%d runs, more than a piece of %d keys can merge", len(runs), limit)
	}
	at := make([]uint64, len(runs)) // each run's first key >= lo
	key := func(r int, i uint64) uint64 { return base[runs[r].index(i)] }
	// below is the number of run r's keys from at[r] that are below hi.
	below := func(r int, hi uint64) uint64 {
		left := runs[r].len() - at[r]
		return uint64(sort.Search(int(left), func(i int) bool { return key(r, at[r]+uint64(i)) >= hi }))
	}
	lo := uint64(0)
	spans := make([]uint64, 0, 2*len(runs))
	for {
		left := 0
		first := uint64(math.MaxUint64)
		for r := range runs {
			if at[r] < runs[r].len() {
				left++
				first = min(first, key(r, at[r]))
			}
		}
		if left == 0 {
			return nil
		}
		lo = max(lo, first)
		// The largest hi whose range holds at most limit keys, and rows
		// lo>>32 .. (lo>>32)+limit-1 at most.
		top := uint64(math.MaxUint64)
		if row := lo >> 32; row+limit < 1<<32 {
			top = (row + limit) << 32
		}
		within := func(hi uint64) bool {
			var k uint64
			for r := range runs {
				k += below(r, hi)
			}
			return k <= limit
		}
		hi := top
		if !within(top) {
			a, b := lo+1, top // within(a) holds (no key twice in a run), within(b) does not
			for b-a > 1 {
				mid := a + (b-a)/2
				if within(mid) {
					a = mid
				} else {
					b = mid
				}
			}
			hi = a
		}
		spans = spans[:0]
		for r := range runs {
			k := below(r, hi)
			spans = runs[r].spans(spans, at[r], k)
			at[r] += k
		}
		if err := fn(lo, hi, slices.Clip(spans)); err != nil {
			return err
		}
		lo = hi
	}
}
