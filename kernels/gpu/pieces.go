package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
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
// while the host keeps the keys (tg_pieces_*). With bits (rank bits, as
// graph.MarkedPairs has them) the pairs hold the input's ids, which the
// device maps to the n compact ids as it makes their keys.
//
//  1. Runs: each piece of pairs becomes its keys (min << 32 | max),
//     sorted and deduplicated, written back over the pairs.
//  2. Merge: the key space is cut into ranges whose keys in all runs fit
//     a piece; each range is sorted and deduplicated again, its degrees
//     counted on the device, and written to a second host array in order.
//  3. Ranks: the device ranks the degrees (tg_pieces_rank; the host does,
//     through graph.DegreeOrder, when a piece holds fewer keys than there
//     are vertices).
//  4. Oriented runs: each piece of the edges becomes its forward keys
//     (min rank << 32 | max rank), sorted, in place.
//  5. CSR: key ranges of those runs, each no more rows than a piece,
//     become the columns (in the pairs' memory) and row lengths.
//
// The result is the forward graph and ranks tg_preprocess makes. When the
// work area does not fit, or the runs would be more than a piece can merge,
// the pairs are left as they were and the error wraps ErrOutOfMemory. Once
// the runs begin, the pairs' memory is the keys' and then the columns'
// (the CSR's Cols share it); an error after that does not wrap
// ErrOutOfMemory.
func (c *Counter) orientInPieces(ctx context.Context, pairs []uint32, n uint64, bits []uint64) (*graph.CSR, []uint32, kernels.PrepStats, error) {
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
	p := &pieces{c: c, cap: capItems}
	defer p.end()
	if runs := (np + capItems - 1) / capItems; runs > maxPieceRuns {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient in pieces: %d pairs make %d runs of %d keys, more than %d: %w",
			np, runs, capItems, maxPieceRuns, ErrOutOfMemory)
	}
	t0 := time.Now()
	keys := wordsAsKeys(pairs, np)
	made := make(chan *abi.Registration, 1)
	var (
		reg    *abi.Registration
		second []uint64
	)
	if h := c.takePiecesHost(keys); h != nil {
		// Pinned and made while the host still compacted the pairs.
		reg, second = h.reg, h.second[:np]
		made <- h.sreg
	} else {
		reg = c.lib.registerPairs(kernels.IDPairs{P64: keys})
		// The second array is faulted in and pinned while the runs are
		// sorted.
		second = make([]uint64, np)
		go func() {
			devmem.Prefault(second)
			made <- c.lib.registerPairs(kernels.IDPairs{P64: second})
		}()
	}
	kept := false
	defer func() {
		if reg != nil && !kept {
			p.release(reg)
		}
	}()
	p.log("pieces: work area, pairs pinned", t0, "capacity", capItems, "pairs", np)
	fwd, rank, st, err := p.run(ctx, keys, second, n, made)
	if err != nil {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("gpu: orient in pieces (%w): %w", errPiecesFailed, err)
	}
	// The columns lie in the keys' pinned memory: the pin registry keeps
	// it as their pin (a count in ranges reads them from there), when it
	// has room.
	if len(fwd.Cols) > 0 && reg.Holds(unsafe.Pointer(&fwd.Cols[0]), uint64(len(fwd.Cols))*4) {
		kept = c.lib.pins.Adopt(fwd, reg, int64(reg.Bytes()))
	}
	return fwd, rank, st, nil
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
// and the map leave (the sort's scratch not counted). It errs towards
// yes; the pieces decide when they begin.
func PiecesMayTake(limit, np, n, idWords uint64) bool {
	fixed := uint64(devmem.ContextBytes) + n*4 + idWords*8
	if limit <= fixed {
		return false
	}
	capItems := max((limit-fixed)/16, 1)
	return (np+capItems-1)/capItems <= maxPieceRuns
}

// pieces drives one work area; c.mu is held.
type pieces struct {
	c   *Counter
	cap uint64 // items a piece holds
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
// host (graph.DegreeOrder). It returns the wedges and the largest degree.
func (p *pieces) rank(rank []uint32) (wedges, maxDeg uint64, err error) {
	if uint64(len(rank)) <= p.cap {
		return p.c.ctx.PiecesRank(rank)
	}
	deg := make([]uint32, len(rank))
	if err := p.c.ctx.PiecesVertices(deg, false); err != nil {
		return 0, 0, err
	}
	r, w, md := graph.DegreeOrder(deg, 0)
	copy(rank, r)
	return w, uint64(md), p.c.ctx.PiecesVertices(rank, true)
}

// run does the five steps over keys (the pairs' memory) and second, whose
// registration (nil: pageable) made delivers once it is made; run releases
// it after an error, and after the forward graph is built keeps it as the
// counter's spare (c.spare).
func (p *pieces) run(ctx context.Context, keys, second []uint64, n uint64, made <-chan *abi.Registration) (*graph.CSR, []uint32, kernels.PrepStats, error) {
	np := uint64(len(keys))
	st := kernels.PrepStats{Vertices: n, InputPairs: np}
	var (
		reg      *abi.Registration
		received bool
	)
	done := false
	defer func() {
		if !received {
			reg = <-made
		}
		switch {
		case reg == nil:
		case done:
			p.c.spare = reg
		default:
			p.release(reg)
		}
	}()
	// 1. Sorted, deduplicated runs of the pairs' keys, in place.
	t := time.Now()
	runs, loops, err := p.sortRuns(ctx, abi.PiecesPairs, abi.PiecesUnique, keys)
	if err != nil {
		return nil, nil, st, err
	}
	p.log("pieces: runs of the pairs' keys", t, "runs", len(runs))
	t = time.Now()
	reg, received = <-made, true
	p.log("pieces: second array pinned (wait)", t)
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
	// 2. Key ranges merged, deduplicated, their degrees counted.
	var m uint64
	err = cutRanges(runs, p.cap, func(lo, hi uint64, spans []uint64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		got, _, err := p.sort(abi.PiecesKeys, abi.PiecesUnique|abi.PiecesDegrees, keys, spans, second[m:])
		m += got
		return err
	}, keys)
	if err != nil {
		return nil, nil, st, err
	}
	edges := second[:m]
	p.log("pieces: merged", t, "edges", m)
	t = time.Now()
	<-arrays
	// 3. Ranks from the degrees.
	wedges, maxDeg, err := p.rank(rank)
	if err != nil {
		return nil, nil, st, err
	}
	p.log("pieces: ranks", t)
	t = time.Now()
	// 4. Forward keys, sorted in runs, in place.
	fruns, _, err := p.sortRuns(ctx, abi.PiecesOrient, 0, edges)
	if err != nil {
		return nil, nil, st, err
	}
	p.log("pieces: forward runs", t, "runs", len(fruns))
	t = time.Now()
	// 5. The CSR: columns into the pairs' memory, row lengths into rowptr
	// (a row may span two key ranges), then its offsets.
	cols := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(keys))), 2*len(keys))[:m:m]
	var at uint64
	err = cutRanges(fruns, p.cap, func(lo, hi uint64, spans []uint64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		row0 := lo >> 32
		rows := min(n, (hi-1)>>32+1) - min(row0, n)
		nout, err := p.c.ctx.PiecesCSR(edges, spans, row0, rows, cols[at:], counts)
		if err != nil {
			return err
		}
		for i, k := range counts[:rows] {
			rowptr[row0+uint64(i)] += uint64(k)
		}
		at += nout
		return nil
	}, edges)
	if err != nil {
		return nil, nil, st, err
	}
	if at != m {
		return nil, nil, st, fmt.Errorf("%d columns made of %d edges", at, m)
	}
	maxFwd := graph.OffsetsFromLengths(rowptr, 0)
	p.log("pieces: forward graph", t)
	done = true
	st.Edges, st.Duplicates = m, np-st.SelfLoops-m
	st.Wedges, st.MaxDegree, st.MaxForward = wedges, maxDeg, maxFwd
	return &graph.CSR{Offsets: rowptr, Cols: cols, NCols: int64(n)}, rank, st, nil
}

// sortRuns sorts keys a piece at a time by op and flags, each piece's
// result written back where the piece was; it returns the sorted runs and
// the self-loops dropped.
func (p *pieces) sortRuns(ctx context.Context, op, flags int32, keys []uint64) (runs [][]uint64, loops uint64, err error) {
	for off := uint64(0); off < uint64(len(keys)); off += p.cap {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		size := min(p.cap, uint64(len(keys))-off)
		got, l, err := p.sort(op, flags, keys, []uint64{off, size}, keys[off:])
		if err != nil {
			return nil, 0, err
		}
		runs = append(runs, keys[off:off+got])
		loops += l
	}
	return runs, loops, nil
}

// cutRanges cuts the key space into ranges [lo, hi), in order, each
// holding at most limit keys of the runs (sorted, no key twice in a run)
// and keys of at most limit rows (key >> 32), and calls fn with each
// non-empty range and its spans: per run, its first item's index in base
// (the array every run is a part of) and its item count.
func cutRanges(runs [][]uint64, limit uint64, fn func(lo, hi uint64, spans []uint64) error, base []uint64) error {
	if limit < uint64(len(runs)) {
		return fmt.Errorf("%d runs, more than a piece of %d keys can merge", len(runs), limit)
	}
	at := make([]int, len(runs)) // each run's first key >= lo
	origin := uintptr(unsafe.Pointer(unsafe.SliceData(base)))
	lo := uint64(0)
	spans := make([]uint64, 0, 2*len(runs))
	for {
		left := 0
		first := uint64(math.MaxUint64)
		for r, run := range runs {
			if at[r] < len(run) {
				left++
				first = min(first, run[at[r]])
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
			for r, run := range runs {
				k += uint64(sort.Search(len(run)-at[r], func(i int) bool { return run[at[r]+i] >= hi }))
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
		for r, run := range runs {
			k := sort.Search(len(run)-at[r], func(i int) bool { return run[at[r]+i] >= hi })
			if k > 0 {
				first := (uintptr(unsafe.Pointer(&run[at[r]])) - origin) / 8
				spans = append(spans, uint64(first), uint64(k))
			}
			at[r] += k
		}
		if err := fn(lo, hi, slices.Clip(spans)); err != nil {
			return err
		}
		lo = hi
	}
}
