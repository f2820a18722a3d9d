package partition

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/internal/spill"
	"github.com/trigrid/trigrid/storage"
)

// SpillPrefix starts the names of the external partitioner's spill
// directories (SpillPrefix-PID-RANDOM in Config.TempDir).
const SpillPrefix = "trigrid-partition"

// sweepSpills removes the spill directories that partitioners killed
// before they could clean up (SIGKILL, a crash) left in dir, and logs
// each; directories of running partitioners are left alone.
func sweepSpills(dir string, log *slog.Logger) {
	found, err := spill.Sweep(dir, SpillPrefix)
	if err != nil {
		log.Warn("could not look for stale spill directories", "dir", dir, "err", err)
		return
	}
	for _, s := range found {
		switch {
		case s.Removed:
			log.Info("removed the spill directory of a partitioner that did not finish", "path", s.Path, "pid", s.PID, "bytes", s.Bytes)
		case errors.Is(s.Err, spill.ErrNoOwner):
			log.Warn("found a spill directory of an older trigrid", "path", s.Path, "bytes", s.Bytes, "err", s.Err)
		default:
			log.Warn("found the spill directory of a partitioner that did not finish but could not remove it", "path", s.Path, "pid", s.PID, "bytes", s.Bytes, "err", s.Err)
		}
	}
}

// The external-memory partitioner. It reproduces read -> graph.Clean ->
// graph.Orient(degree) -> Split exactly, so its shards are byte-identical
// to the in-memory path's for the same partition id:
//
//	pass 1  stream the file; count self-loops; normalise each non-loop edge
//	        to (min, max) original ids and spill it into a bucket by
//	        hash(min, max) (every copy of an edge lands in one bucket); collect
//	        the distinct non-loop ids (idSet). The reader fills one buffer
//	        while a second goroutine buckets and spills the previous one.
//	pass 2  per bucket, in parallel: load, map to compact ids (ascending
//	        original id, Clean's contract) packed as cu<<32|cv, radix sort,
//	        dedupe, count exact degrees, spill the sorted keys.
//	rank    by (degree, compact id), as Orient does.
//	pass 3  per bucket, in parallel: relabel to ranks, orient low -> high,
//	        route each edge to its block's runs as local row<<32|col.
//	pass 4  per block, in parallel as memory allows: load, radix sort,
//	        build the CSR, encode, store.
//
// Runs are coded compactly (fixed byte width per frame, sorted keys as
// varint gaps; see runs.go) by the goroutines that produce them.
//
// Memory: see extmem.go. Besides the spill buffers and buckets, O(n)
// arrays stay resident: the id set (a bitmap of about 3 bits per id value
// when ids are dense, else 8 bytes per vertex), degrees (4 bytes per
// vertex per pass 2 worker), ranks (4) and the id map by rank (8), and for
// the range scheme a degree copy and a bucket map (4 + 2).

const (
	// minSpillPairs keeps spills from degenerating into tiny frames.
	minSpillPairs = 1 << 12
	// pass1Share: pass 1 holds four pair buffers (two being filled or
	// handed over, two of bucketing/sorting scratch) of work/pass1Share
	// bytes each (pass1Plan.work), leaving the rest of the work memory to
	// the id set.
	pass1Share = 12
	// bucketBytes is the working memory per edge of a pass 2/3 bucket:
	// the loaded pair (16 bytes), reused in place for keys and sort
	// scratch, plus routing scratch in pass 3.
	bucketBytes = 24
)

type extRun struct {
	ctx     context.Context
	cfg     *Config
	path    string
	limit   int64
	workers int
	// estEdges bounds the input's edges from its size (see spillSizes).
	estEdges int64
	capPairs int // pairs per pass 1 buffer

	// The memory plan (extmem.go): room is what the run may hold at any
	// time; spillers are pass 1's spilling goroutines.
	model    extModel
	room     int64
	spillers int
	idBudget int64
	index    int64        // what pass 1's run index was planned to hold
	pairs    *runSet      // pass 1's runs, whose index checkIDs watches
	idPeak   atomic.Int64 // the id set's peakBytes, published by pass 1's spiller
	loopMem  atomic.Int64 // the self-loop ids pass 1 holds

	cst  graph.CleanStats
	rs   edgeio.ReadStats
	ids  *idSet
	deg  []uint32
	seen atomic.Uint64 // unique edges seen by pass 2
	// Compact pairs are packed as cu<<kb | cv with kb the bits of the
	// largest compact id: fewer key bits mean fewer radix passes (4
	// instead of 5 for a few million vertices) and smaller gaps.
	kb    uint
	kmask uint64
}

func partitionExternal(ctx context.Context, path string, ro edgeio.ReadOptions, store storage.Store, cfg Config) (*Summary, error) {
	clock := newClock()
	rc, est, err := inputCost(path, ro)
	if err != nil {
		return nil, err
	}
	m := extModel{p: cfg.P, workers: cfg.Workers, cores: cores(), read: rc, est: est}
	if cfg.WorkMem != min(cfg.MemLimit, DefaultWorkMem) {
		m.workMem = cfg.WorkMem // given, not check's default
	}
	pl, ok := m.plan1(cfg.MemLimit)
	if !ok {
		return nil, &MemLimitError{Limit: cfg.MemLimit, Least: m.least(), P: cfg.P, Workers: cfg.Workers, Cores: m.cores}
	}
	sweepSpills(cfg.TempDir, cfg.Logger)
	sd, err := spill.Create(cfg.TempDir, SpillPrefix)
	if err != nil {
		return nil, fmt.Errorf("partition: temp dir: %w", err)
	}
	defer sd.Remove()
	dir := sd.Path()
	x := &extRun{ctx: ctx, cfg: &cfg, path: path, limit: cfg.MemLimit, workers: cfg.Workers,
		estEdges: pl.est, capPairs: pl.capPairs, model: m, room: roomOf(cfg.MemLimit), spillers: pl.spillers,
		idBudget: pl.idBudget, index: pl.index, ids: newIDSet(pl.idBudget / 2)}
	if ro.Workers == 0 || ro.Workers > pl.readers {
		ro.Workers = pl.readers
	}
	if rc.perWorker > 0 && pl.readers < cfg.Workers || pl.spillers < cfg.Workers {
		cfg.Logger.Info("the memory limit leaves room for fewer goroutines in pass 1", "limit", cfg.MemLimit,
			"readers", pl.readers, "spillers", pl.spillers, "workers", cfg.Workers)
	}
	pairs, err := x.newRunSet(dir, "pairs", pl.buckets, codecFixed)
	if err != nil {
		return nil, err
	}
	defer pairs.close()
	x.pairs = pairs
	if err := x.pass1(ro, pairs); err != nil {
		return nil, err
	}
	n, sh, err := x.afterPass1(pairs)
	if err != nil {
		return nil, err
	}
	clock.mark("pass1-read")

	compact, err := x.newRunSet(dir, "compact", pairs.buckets, codecDelta)
	if err != nil {
		return nil, err
	}
	defer compact.close()
	if err := x.pass2(pairs, compact, sh); err != nil {
		return nil, err
	}
	pairs.close()
	clock.mark("pass2-dedupe")
	sh.maxCompact = compact.largest()
	sh.compactIndex = compact.indexBytes()

	// Rank by (degree, compact id): a counting sort by degree is stable in
	// compact id.
	cfg.progress("rank", 0, -1)
	rank, st := rankByDegree(x.deg)
	st.Source = path
	st.Order = graph.OrderDegree.String()
	idsByRank := make([]uint64, n)
	x.ids.forEach(func(c uint32, id uint64) { idsByRank[rank[c]] = id })
	x.ids = nil
	l, err := x.layout(compact, rank, n, sh)
	if err != nil {
		return nil, err
	}
	clock.mark("rank+layout")

	p := l.P
	blocks, err := x.newRunSet(dir, "blocks", p*p, codecFixed)
	if err != nil {
		return nil, err
	}
	defer blocks.close()
	if err := x.pass3(compact, rank, l, blocks, sh); err != nil {
		return nil, err
	}
	compact.close()
	rank = nil
	clock.mark("pass3-route")

	// Pass 4: blocks in parallel as far as memory allows.
	par, err := x.pass4Workers(blocks, l, sh)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idm := startIDMap(ctx, store, idsByRank)
	fdeg := newOutDegrees(l)
	shards, raw, err := writeBlocks(ctx, l, cfg.PartitionID, store, par, &cfg,
		func(i, j int) (*graph.CSR, error) {
			c, err := buildBlock(blocks, l, i, j)
			if err == nil {
				fdeg.add(i, c)
			}
			return c, err
		},
		func(i, j int) int64 { return blocks.count[i*p+j] })
	if err != nil {
		cancel()
		idm.wait()
		return nil, err
	}
	maxOut := fdeg.max()
	st.MaxOutDegree = &maxOut
	st.Removed, st.Input = removedStats(x.cst, x.rs), inputStats(x.rs)
	sum := &Summary{Clean: &x.cst, External: true}
	if err := finish(ctx, store, l, &cfg, st, idm, shards, raw, clock, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// blockBytes is what pass 4 holds for a block of rows rows and edges
// edges: its keys twice (the load and the sort), its CSR, its encoded
// sections (up to 5 bytes an edge and a row, in slices grown by append,
// and their compressed copy) and a frame buffer.
func blockBytes(rows, edges int64) int64 {
	return 24*edges + 24*rows + 2*frameBufBytes
}

// spillSizes returns the pairs per pass 1 buffer and the bucket count of
// passes 1-3 for an input of at most est edges, sized by work bytes
// (Config.WorkMem). Buckets: the buckets of all workers take half of work
// even if every 4 input bytes were an edge. Buffers: no bigger than the
// input can fill, so that a small file does not allocate and clear
// hundreds of MiB.
func spillSizes(est, work int64, workers int) (capPairs, buckets int) {
	buckets = int(min(max(est*bucketBytes*int64(workers)*2/max(work, 1), int64(2*workers)), 8192))
	capPairs = int(max(min(work/pass1Share/16, est), minSpillPairs))
	return capPairs, buckets
}

// pass1 streams the file into normalised pair runs and the distinct id set.
func (x *extRun) pass1(ro edgeio.ReadOptions, out *runSet) error {
	capPairs := x.capPairs
	// The reader fills one buffer while the spiller owns the other; the
	// spiller buckets a handed-over buffer into its scratch, returns the
	// buffer at once and then encodes the buckets.
	free := make(chan []uint64, 2)
	full := make(chan []uint64, 1)
	free <- make([]uint64, 0, 2*capPairs)
	free <- make([]uint64, 0, 2*capPairs)
	var (
		mu       sync.Mutex
		spillErr error
		done     = make(chan struct{})
	)
	fail := func(err error) {
		mu.Lock()
		if spillErr == nil {
			spillErr = err
		}
		mu.Unlock()
	}
	go func() {
		defer close(done)
		a, b := make([]uint64, 2*capPairs), make([]uint64, 2*capPairs)
		for buf := range full {
			mu.Lock()
			failed := spillErr != nil
			mu.Unlock()
			if failed {
				free <- buf[:0]
				continue
			}
			x.ids.add(buf, a, b)
			peak := x.ids.peakBytes(2 * capPairs)
			x.idPeak.Store(peak)
			if err := x.checkIDs(peak, x.loopMem.Load()); err != nil {
				fail(err)
				free <- buf[:0]
				continue
			}
			start := bucketizePairs(buf, a, out.buckets)
			free <- buf[:0]
			err := parallelFor(x.ctx, out.buckets, x.spillers, func(k int) {
				if err := out.put(k, a[start[k]:start[k+1]]); err != nil {
					fail(err)
				}
			})
			if err != nil {
				fail(err)
			}
		}
	}()
	var loops []uint64
	buf := <-free
	rs, err := edgeio.Stream(x.ctx, x.path, ro, func(batch []graph.Edge) error {
		x.cst.InputEdges += uint64(len(batch))
		for _, e := range batch {
			if e.U == e.V {
				x.cst.SelfLoops++
				loops = append(loops, e.U)
				continue
			}
			buf = append(buf, min(e.U, e.V), max(e.U, e.V))
			if len(buf) == cap(buf) {
				full <- buf
				buf = <-free
				mu.Lock()
				err := spillErr
				mu.Unlock()
				if err != nil {
					return err
				}
			}
		}
		if len(loops) > 1<<16 {
			slices.Sort(loops)
			loops = slices.Compact(loops)
			x.loopMem.Store(8 * int64(cap(loops)))
			if err := x.checkIDs(x.idPeak.Load(), 8*int64(cap(loops))); err != nil {
				return err
			}
		}
		return nil
	})
	x.rs = rs
	if len(buf) > 0 && err == nil {
		full <- buf
	}
	close(full)
	<-done
	if err != nil {
		return err
	}
	if spillErr != nil {
		return spillErr
	}
	slices.Sort(loops)
	loops = slices.Compact(loops)
	for _, id := range loops {
		if !x.ids.contains(id) {
			x.cst.IsolatedIDs++
		}
	}
	return nil
}

// bucketizePairs copies the (min, max) pairs of buf into dst grouped by
// bucketOf(min, max) and returns the bucket starts (in elements).
func bucketizePairs(buf, dst []uint64, buckets int) []int {
	start := make([]int, buckets+1)
	for k := 0; k < len(buf); k += 2 {
		start[bucketOf(buf[k], buf[k+1], buckets)+1] += 2
	}
	for b := 1; b <= buckets; b++ {
		start[b] += start[b-1]
	}
	pos := append([]int(nil), start[:buckets]...)
	for k := 0; k < len(buf); k += 2 {
		b := bucketOf(buf[k], buf[k+1], buckets)
		dst[pos[b]], dst[pos[b]+1] = buf[k], buf[k+1]
		pos[b] += 2
	}
	return start
}

// forBuckets runs fn over the buckets of in on workers goroutines, each
// with its own load buffer (grown to the largest bucket it meets), and
// returns the first error.
func (x *extRun) forBuckets(in *runSet, workers int, fn func(w, b int, data []uint64) error) error {
	var (
		mu    sync.Mutex
		first error
		next  atomic.Int64
	)
	var wg sync.WaitGroup
	for w := range max(min(workers, in.buckets), 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []uint64
			for {
				b := int(next.Add(1) - 1)
				if b >= in.buckets {
					return
				}
				err := x.ctx.Err()
				if err == nil {
					buf, err = in.load(b, buf[:0])
				}
				if err == nil {
					err = fn(w, b, buf)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					next.Store(int64(in.buckets))
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		if x.ctx.Err() != nil {
			return fmt.Errorf("partition: %w", first)
		}
		return first
	}
	return nil
}

// pass2 dedupes each bucket, maps to compact ids and counts degrees; the
// compact pairs are spilled sorted as cu<<32|cv (cu < cv) in the same
// buckets.
func (x *extRun) pass2(in, out *runSet, sh *extShape) error {
	n := x.ids.len()
	workers := sh.fit(sh.pass2Need, min(x.workers, in.buckets))
	x.noteFewer("dedupe", workers)
	degs := make([][]uint32, workers)
	var done atomic.Int64
	err := x.forBuckets(in, workers, func(w, b int, pairs []uint64) error {
		if degs[w] == nil {
			degs[w] = make([]uint32, n)
		}
		deg := degs[w]
		// Keys go to the first half of the pair buffer in place (key k is
		// written after pair k has been read); the second half is the
		// sort scratch.
		m := len(pairs) / 2
		for k := range m {
			cu, cv := x.ids.find(pairs[2*k]), x.ids.find(pairs[2*k+1])
			pairs[k] = uint64(cu)<<x.kb | uint64(cv)
		}
		keys := radixSort(pairs[:m], pairs[m:2*m])
		keys = slices.Compact(keys)
		for _, k := range keys {
			deg[k>>x.kb]++
			deg[k&x.kmask]++
		}
		x.seen.Add(uint64(len(keys)))
		if err := out.put(b, keys); err != nil {
			return err
		}
		x.cfg.progress("dedupe", done.Add(1), int64(in.buckets))
		return nil
	})
	if err != nil {
		return err
	}
	x.deg = degs[0]
	if x.deg == nil {
		x.deg = make([]uint32, n)
	}
	sumInto(x.deg, degs[1:], x.workers)
	unique := x.seen.Load()
	x.cst.Duplicates = x.cst.InputEdges - x.cst.SelfLoops - unique
	x.cst.Vertices = n
	x.cst.Edges = int64(unique)
	return nil
}

// countGrid fills the range grid from the forward edges, one cell matrix
// per worker while memory allows. Buckets are ranges of ranks, so an
// edge's cell is (lower bucket, higher bucket) of its endpoints whichever
// way it is oriented: one bucket per compact id, looked up once per
// endpoint, replaces the rank and bucket lookups of each endpoint.
func (x *extRun) countGrid(in *runSet, rank []uint32, g *rangeGrid, sh *extShape) error {
	nb := g.buckets()
	if nb == 0 {
		return nil
	}
	bucket := make([]uint16, len(rank))
	for c, r := range rank {
		bucket[c] = g.bucket[r]
	}
	// One cell matrix per goroutine, as many as the memory holds.
	workers := max(sh.fit(sh.gridNeed, min(x.workers, in.buckets)), 1)
	x.noteFewer("grid", workers)
	cells := make([][]uint64, workers)
	cells[0] = g.cells
	err := x.forBuckets(in, workers, func(w, _ int, keys []uint64) error {
		if cells[w] == nil {
			cells[w] = make([]uint64, len(g.cells))
		}
		c := cells[w]
		for _, k := range keys {
			a, b := bucket[k>>x.kb], bucket[k&x.kmask]
			c[int(min(a, b))*nb+int(max(a, b))]++
		}
		return nil
	})
	sumInto(g.cells, cells[1:], x.workers)
	return err
}

// blockKeyBits is the shift of a routed edge's local row: the bits of the
// largest group, so keys of a few million vertices fit 5 bytes.
func blockKeyBits(l *Layout) uint {
	var g int64
	for i := range l.P {
		g = max(g, l.GroupSize(i))
	}
	return uint(bits.Len64(uint64(g)))
}

// pass3 routes every forward edge to its block as local row<<cb | local
// col (cb = blockKeyBits).
func (x *extRun) pass3(in *runSet, rank []uint32, l *Layout, out *runSet, sh *extShape) error {
	p := l.P
	cb := blockKeyBits(l)
	workers := sh.fit(sh.pass3Need, min(x.workers, in.buckets))
	if workers < 1 {
		return x.limitError(sh, fmt.Sprintf("its largest bucket, of %d edges", sh.maxC()))
	}
	x.noteFewer("route", workers)
	var done atomic.Int64
	return x.forBuckets(in, workers, func(_, _ int, keys []uint64) error {
		defer x.cfg.progress("route", done.Add(1), int64(in.buckets))
		blk := make([]uint32, len(keys))
		for k, key := range keys {
			u, v := rank[key>>x.kb], rank[key&x.kmask]
			if u > v {
				u, v = v, u
			}
			gi, lu := l.Locate(u)
			gj, lv := l.Locate(v)
			keys[k] = uint64(lu)<<cb | uint64(lv)
			blk[k] = uint32(gi*p + gj)
		}
		start := make([]int, p*p+1)
		for _, b := range blk {
			start[b+1]++
		}
		for b := 1; b < len(start); b++ {
			start[b] += start[b-1]
		}
		routed := make([]uint64, len(keys))
		pos := append([]int(nil), start[:p*p]...)
		for k, b := range blk {
			routed[pos[b]] = keys[k]
			pos[b]++
		}
		blk = nil
		for b := range p * p {
			if err := out.put(b, routed[start[b]:start[b+1]]); err != nil {
				return err
			}
		}
		return nil
	})
}

// buildBlock loads block (i, j)'s routed edges and builds its CSR: a
// radix sort of the packed keys (4 passes of 11 bits for a few million
// vertices, each with cache-sized scatter targets; two counting sorts over
// every row and column scattered across megabytes and cost more), then one
// pass that counts rows and copies columns.
func buildBlock(in *runSet, l *Layout, i, j int) (*graph.CSR, error) {
	b := i*l.P + j
	cb := blockKeyBits(l)
	m := int(in.count[b])
	buf, err := in.load(b, make([]uint64, 0, 2*m))
	if err != nil {
		return nil, err
	}
	keys := radixSort(buf[:m], buf[m:2*m])
	rows, cols := l.GroupSize(i), l.GroupSize(j)
	c := &graph.CSR{Offsets: make([]uint64, rows+1), Cols: make([]uint32, m), NCols: cols}
	mask := uint64(1)<<cb - 1
	for k, key := range keys {
		r, v := key>>cb, key&mask
		if r >= uint64(rows) || v >= uint64(cols) {
			return nil, fmt.Errorf("partition: routed edge (%d,%d) outside a %dx%d block", r, v, rows, cols)
		}
		c.Offsets[r+1]++
		c.Cols[k] = uint32(v)
	}
	for r := int64(1); r <= rows; r++ {
		c.Offsets[r] += c.Offsets[r-1]
	}
	return c, nil
}

// bucketOf spreads normalised pairs over buckets with a multiplicative
// hash of both ends, so ids clustered in any range still split evenly and
// every copy of an edge meets its twins. Hashing the pair rather than its
// lower end keeps a hub's edges from piling into one bucket: a bucket is
// sized to a share of the memory limit, and a vertex of very high degree
// as the lower end of its edges would overfill it.
func bucketOf(a, b uint64, buckets int) int {
	h := (a ^ b*0xc2b2ae3d27d4eb4f) * 0x9e3779b97f4a7c15
	return int((h >> 32) % uint64(buckets))
}

func mergeSorted(a, b []uint64) []uint64 {
	if len(a) == 0 {
		return append([]uint64(nil), b...)
	}
	out := make([]uint64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// idIndex finds compact ids (positions in the sorted distinct ids) with a
// radix table on the top bits of (id - min) that narrows each binary
// search to a few entries.
type idIndex struct {
	ids   []uint64
	base  uint64
	shift uint
	table []uint32 // table[k] = first position whose key >= k
}

func newIDIndex(ids []uint64) *idIndex {
	x := &idIndex{ids: ids}
	if len(ids) == 0 {
		return x
	}
	x.base = ids[0]
	span := ids[len(ids)-1] - x.base
	slots := uint64(1)
	for slots < uint64(len(ids)) && slots < 1<<24 {
		slots <<= 1
	}
	for span>>x.shift >= slots {
		x.shift++
	}
	x.table = make([]uint32, (span>>x.shift)+2)
	pos := 0
	for k := range x.table {
		for pos < len(ids) && (ids[pos]-x.base)>>x.shift < uint64(k) {
			pos++
		}
		x.table[k] = uint32(pos)
	}
	return x
}

// find returns the position of id, which must be present.
func (x *idIndex) find(id uint64) uint32 {
	k := (id - x.base) >> x.shift
	lo, hi := int(x.table[k]), int(x.table[k+1])
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if x.ids[mid] < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return uint32(lo)
}

// newRunSet creates a run set in dir that logs through the run's logger.
func (x *extRun) newRunSet(dir, name string, buckets int, c runCodec) (*runSet, error) {
	rs, err := newRunSet(dir, name, buckets, c)
	if err == nil {
		rs.log = x.cfg.Logger
	}
	return rs, err
}

// afterPass1 freezes the ids pass 1 found and sizes the passes after it:
// n vertices, the compact id's bits, and the shape, or an error when the
// ids are too many for 32 bits or for the memory limit.
func (x *extRun) afterPass1(pairs *runSet) (int64, *extShape, error) {
	x.ids.freeze()
	n := x.ids.len()
	if n > 1<<32-1 {
		return 0, nil, fmt.Errorf("partition: %s: %d vertices: %w", x.path, n, graph.ErrTooManyVertices)
	}
	x.kb = uint(bits.Len64(uint64(max(n-1, 1))))
	x.kmask = 1<<x.kb - 1
	sh := x.shapeAfterPass1(pairs)
	if need := sh.need(1); need > x.room {
		return 0, nil, x.limitError(sh, fmt.Sprintf("its %d vertices", n))
	}
	return n, sh, nil
}

// layout places the n ranked vertices in cfg.P groups by the scheme: hash
// groups, or range groups balanced by a grid of edge counts (countGrid,
// which reads compact again). x.deg is released.
func (x *extRun) layout(compact *runSet, rank []uint32, n int64, sh *extShape) (*Layout, error) {
	if x.cfg.Scheme == storage.SchemeHash {
		x.deg = nil
		return NewHashLayout(n, x.cfg.P)
	}
	degRank := make([]uint32, n) // the range grid wants degrees in rank order
	for c, r := range rank {
		degRank[r] = x.deg[c]
	}
	x.deg = nil
	g := newRangeGrid(degRank, x.cfg.P)
	degRank = nil
	if err := x.countGrid(compact, rank, g, sh); err != nil {
		return nil, err
	}
	b, fold := g.bounds(x.cfg.P, x.workers)
	return NewFoldedLayout(n, x.cfg.P, fold, b)
}

// pass4Workers sizes pass 4 from the routed blocks (sh's block and encoder
// needs) and returns how many blocks may be built at once, or the limit
// error when not even one fits.
func (x *extRun) pass4Workers(blocks *runSet, l *Layout, sh *extShape) (int, error) {
	p := l.P
	sh.blocksIndex = blocks.indexBytes()
	sh.blockNeed, sh.encoders = 0, 0
	calls, big := int64(1), int64(0) // the id map's section, then each block's two
	if uvarintLen(2*sh.maxID)*int64(l.N) > zstdBlockBytes {
		big++
	}
	var biggest int64
	for i := range p {
		for j := range p {
			m := blocks.count[i*p+j]
			if m == 0 {
				continue
			}
			rows := l.GroupSize(i)
			biggest = max(biggest, m)
			sh.blockNeed = max(sh.blockNeed, blockBytes(rows, m))
			calls += 2
			big += bigSections(rows, m, l.GroupSize(j))
		}
	}
	sh.encoders = encoderBytes(x.model.cores, calls, big)
	par := sh.fit(sh.pass4Need, x.cfg.Workers)
	if par < 1 {
		return 0, x.limitError(sh, fmt.Sprintf("its largest block, of %d edges", biggest))
	}
	return par, nil
}

// rankByDegree ranks compact ids by (degree, compact id) and returns the
// ranks with the graph statistics Orient reports.
func rankByDegree(deg []uint32) ([]uint32, storage.GraphStats) {
	var st storage.GraphStats
	var maxd uint32
	for _, d := range deg {
		maxd = max(maxd, d)
		st.Wedges += uint64(d) * uint64(d-1) / 2
		st.Edges += int64(d)
	}
	st.Edges /= 2
	st.Vertices = int64(len(deg))
	st.MaxDegree = int64(maxd)
	start := make([]uint32, int(maxd)+2)
	for _, d := range deg {
		start[d+1]++
	}
	for d := 1; d < len(start); d++ {
		start[d] += start[d-1]
	}
	rank := make([]uint32, len(deg))
	for c, d := range deg {
		rank[c] = start[d]
		start[d]++
	}
	return rank, st
}

// shapeAfterPass1 is the run's memory shape once pass 1 has read the
// input.
func (x *extRun) shapeAfterPass1(pairs *runSet) *extShape {
	var total int64
	for _, c := range pairs.count {
		total += c
	}
	return &extShape{p: x.cfg.P, cores: x.model.cores, rangeScheme: x.cfg.Scheme == storage.SchemeRange, room: x.room,
		n: x.ids.len(), maxID: x.ids.maxID(), idBytes: x.ids.bytes(), pairsIndex: pairs.indexBytes(),
		buckets: pairs.buckets, pairs: total, maxBucket: pairs.largest()}
}

// limitError is the *MemLimitError of a limit that cannot hold sh on one
// goroutine; input names what of the input needs more. Its least is for a
// run from the start: one with a larger limit plans fewer, larger buckets.
func (x *extRun) limitError(sh *extShape, input string) error {
	est := sh.withPass4Estimate()
	least := max(limitFor(sh.need(1)), limitFor(est.need(1)), x.model.least())
	for range 4 {
		pl, _ := x.model.plan1(least)
		t := sh.withPass4Estimate()
		t.room = roomOf(least)
		scale := float64(sh.buckets) / float64(max(pl.buckets, 1))
		t.buckets = pl.buckets
		t.maxBucket = int64(float64(sh.maxBucket) * scale)
		t.maxCompact = int64(float64(sh.maxCompact) * scale)
		t.compactIndex, t.blocksIndex = 0, 0
		next := limitFor(t.need(1))
		if next <= least {
			break
		}
		least = next
	}
	return &MemLimitError{Limit: x.limit, Least: max(least, x.limit+1<<20), P: x.cfg.P, Workers: x.cfg.Workers,
		Cores: x.model.cores, Input: input}
}

// checkIDs fails pass 1 once the id set (peak, idSet.peakBytes), the
// self-loop ids (loops bytes) and the run index beyond its plan (an input
// larger than its size promised) outgrow what the plan gave them.
func (x *extRun) checkIDs(peak, loops int64) error {
	index := max(x.pairs.frameBytes()-x.index, 0)
	over := peak + loops + index - x.idBudget
	if over <= 0 {
		return nil
	}
	what := "its ids, not numbered densely"
	switch {
	case index > max(peak, loops):
		what = fmt.Sprintf("its edges (more than the %d planned for)", x.estEdges)
	case loops > peak:
		what = "its self-loops"
	}
	return &MemLimitError{Limit: x.limit, Least: limitFor(roomOf(x.limit) + 2*over), P: x.cfg.P, Workers: x.cfg.Workers,
		Cores: x.model.cores, Input: what}
}

// noteFewer logs a phase that runs on fewer goroutines than the workers
// for the memory limit.
func (x *extRun) noteFewer(phase string, workers int) {
	if workers < x.workers {
		x.cfg.Logger.Info("the memory limit leaves room for fewer goroutines", "phase", phase, "goroutines", workers,
			"workers", x.workers, "limit", x.limit)
	}
}
