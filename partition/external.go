package partition

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/storage"
)

// The external-memory partitioner. It reproduces read -> graph.Clean ->
// graph.Orient(degree) -> Split exactly, so its shards are byte-identical
// to the in-memory path's for the same partition id:
//
//	pass 1  stream the file; count self-loops; normalise each non-loop edge
//	        to (min, max) original ids; spill sorted, deduplicated buffers
//	        into buckets by hash(min) (every copy of an edge lands in one
//	        bucket); keep the sorted set of distinct non-loop ids.
//	pass 2  per bucket: load, sort, dedupe, map to compact ids (ascending
//	        original id, Clean's contract), count exact degrees, spill the
//	        compact pairs.
//	rank    by (degree, compact id), as Orient does.
//	pass 3  per bucket: relabel to ranks, orient low -> high, route each
//	        edge to its block's runs as (local row, local col).
//	pass 4  per block: load, sort, build the CSR, encode, store.
//
// Memory: O(n) arrays stay resident: the sorted distinct ids (8 bytes per
// vertex, twice while the set grows), degrees and ranks (4 + 4), and for
// the range scheme a bucket map and a degree copy (2 + 4); in all about
// 16-24 bytes per vertex. The rest of MemLimit goes to spill buffers and
// to one block at a time in pass 4. The limit must hold the arrays plus
// a few MiB of buffers; it is checked as soon as n is known and refused
// with an error naming the shortfall. While it runs the Go runtime's soft
// memory limit is set to MemLimit so the collector keeps the heap within
// it (restored after).

const (
	// minSpillPairs keeps spills from degenerating into tiny frames.
	minSpillPairs = 1 << 12
	// bufferShare is the fraction of the free budget one spill buffer
	// takes: the buffer, its sort/bucket scratch and compression buffers.
	bufferShare = 6
)

type extRun struct {
	ctx   context.Context
	cfg   *Config
	path  string
	dir   string
	limit int64

	cst graph.CleanStats
	ids []uint64 // sorted distinct non-loop original ids = compact id -> original
}

func partitionExternal(ctx context.Context, path string, ro edgeio.ReadOptions, store storage.Store, cfg Config) (*Summary, error) {
	clock := newClock()
	old := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(cfg.MemLimit)
	defer debug.SetMemoryLimit(old)

	dir, err := os.MkdirTemp(cfg.TempDir, "trigrid-partition-")
	if err != nil {
		return nil, fmt.Errorf("partition: temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	x := &extRun{ctx: ctx, cfg: &cfg, path: path, dir: dir, limit: cfg.MemLimit}
	if ro.Workers == 0 {
		ro.Workers = cfg.Workers
	}

	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	// Buckets of pass 1/2: sized so that one bucket of deduplicated pairs
	// (16 bytes each, plus sort scratch) takes a fraction of the limit even
	// if every 4 input bytes were an edge (the densest text; binary is 8+).
	est := fi.Size() / 4
	if len(path) > 3 && (path[len(path)-3:] == ".gz" || path[len(path)-4:] == ".zst") {
		est *= 8
	}
	nb := int(min(max(est*16*4/max(cfg.MemLimit, 1), 16), 8192))
	pairs, err := newRunSet(dir, "pairs", nb)
	if err != nil {
		return nil, err
	}
	defer pairs.close()
	if err := x.pass1(ro, pairs); err != nil {
		return nil, err
	}
	clock.mark("pass1-read")
	n := int64(len(x.ids))
	if n > 1<<32-1 {
		return nil, fmt.Errorf("partition: %s: %d vertices: %w", path, n, graph.ErrTooManyVertices)
	}
	fixed := 24 * n
	if fixed+minSpillPairs*16*bufferShare > cfg.MemLimit {
		return nil, fmt.Errorf("partition: %s: memory limit %d bytes cannot hold the per-vertex arrays of %d vertices (~%d bytes) plus buffers; raise it to at least %d",
			path, cfg.MemLimit, n, fixed, fixed+minSpillPairs*16*bufferShare+64<<20)
	}

	compact, err := newRunSet(dir, "compact", nb)
	if err != nil {
		return nil, err
	}
	defer compact.close()
	deg, err := x.pass2(pairs, compact)
	if err != nil {
		return nil, err
	}
	pairs.close()
	clock.mark("pass2-dedupe")

	// Rank by (degree, compact id): a counting sort by degree is stable in
	// compact id.
	rank, st := rankByDegree(deg)
	st.Source = path
	st.Order = graph.OrderDegree.String()
	idsByRank := make([]uint64, n)
	for c, r := range rank {
		idsByRank[r] = x.ids[c]
	}
	x.ids = nil
	degRank := make([]uint32, n) // the range grid wants degrees in rank order
	for c, r := range rank {
		degRank[r] = deg[c]
	}
	deg = nil
	var l *Layout
	switch cfg.Scheme {
	case storage.SchemeHash:
		l, err = NewHashLayout(n, cfg.P)
	case storage.SchemeRange:
		g := newRangeGrid(degRank, cfg.P)
		err = x.forEachForward(compact, rank, func(u, v uint32) { g.addEdge(u, v) })
		if err == nil {
			var b []uint64
			b, err = g.bounds(cfg.P)
			if err == nil {
				l, err = NewRangeLayout(n, b)
			}
		}
	}
	degRank = nil
	if err != nil {
		return nil, err
	}
	clock.mark("rank+layout")

	p := l.P
	blocks, err := newRunSet(dir, "blocks", p*p)
	if err != nil {
		return nil, err
	}
	defer blocks.close()
	if err := x.pass3(compact, rank, l, blocks); err != nil {
		return nil, err
	}
	compact.close()
	rank = nil
	clock.mark("pass3-route")

	// Pass 4: blocks in parallel as far as memory allows: a block needs
	// its keys (8 B/edge) twice (sort), its CSR (4 B/edge + 8 B/row) and
	// the encoded shard.
	var biggest int64
	for i := range p {
		for j := range p {
			need := 24*blocks.count[i*p+j] + 8*l.GroupSize(i)
			biggest = max(biggest, need)
		}
	}
	free := cfg.MemLimit - 8*n // the id map stays for the manifest
	if biggest > free {
		return nil, fmt.Errorf("partition: %s: the largest block needs ~%d bytes, more than the %d bytes left of the memory limit; use a larger P or limit",
			path, biggest, free)
	}
	par := int(min(int64(cfg.Workers), max(free/max(biggest, 1), 1)))
	shards, raw, err := writeBlocks(ctx, l, cfg.PartitionID, store, par, &cfg, func(i, j int) (*graph.CSR, error) {
		return buildBlock(blocks, l, i, j)
	})
	if err != nil {
		return nil, err
	}
	sum := &Summary{Clean: &x.cst, External: true}
	if err := finish(ctx, store, l, &cfg, st, idsByRank, shards, raw, clock, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// pass1 streams the file into normalised pair runs and the distinct id set.
func (x *extRun) pass1(ro edgeio.ReadOptions, out *runSet) error {
	free := x.limit / bufferShare
	capPairs := int(max(free/16/3, minSpillPairs))
	buf := make([]uint64, 0, 2*capPairs)
	var loops []uint64
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		// Collect the distinct ids, then bucket the pairs by hash(min);
		// deduplication waits for pass 2, where every copy of an edge
		// meets in one bucket.
		idsBuf := append([]uint64(nil), buf...)
		slices.Sort(idsBuf)
		idsBuf = slices.Compact(idsBuf)
		x.ids = mergeSorted(x.ids, idsBuf)
		idsBuf = nil
		scratch := make([]uint64, len(buf))
		start := bucketizePairs(buf, scratch, out.buckets)
		if err := out.spill(buf, start); err != nil {
			return err
		}
		buf = buf[:0]
		if len(loops) > 1<<16 {
			slices.Sort(loops)
			loops = slices.Compact(loops)
		}
		return nil
	}
	_, err := edgeio.Stream(x.ctx, x.path, ro, func(batch []graph.Edge) error {
		x.cst.InputEdges += uint64(len(batch))
		for _, e := range batch {
			if e.U == e.V {
				x.cst.SelfLoops++
				loops = append(loops, e.U)
				continue
			}
			a, b := min(e.U, e.V), max(e.U, e.V)
			buf = append(buf, a, b)
			if len(buf) == cap(buf) {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	slices.Sort(loops)
	loops = slices.Compact(loops)
	for _, id := range loops {
		if _, ok := slices.BinarySearch(x.ids, id); !ok {
			x.cst.IsolatedIDs++
		}
	}
	return nil
}

func pairView(b []uint64) [][2]uint64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*[2]uint64)(unsafe.Pointer(&b[0])), len(b)/2)
}

func cmpPair(a, b [2]uint64) int {
	if a[0] != b[0] {
		if a[0] < b[0] {
			return -1
		}
		return 1
	}
	if a[1] < b[1] {
		return -1
	}
	if a[1] > b[1] {
		return 1
	}
	return 0
}

// bucketOf spreads original ids over buckets with a multiplicative hash,
// so ids clustered in any range still split evenly.
func bucketOf(id uint64, buckets int) int {
	return int((id * 0x9e3779b97f4a7c15 >> 32) % uint64(buckets))
}

func bucketizePairs(buf, scratch []uint64, buckets int) []int {
	start := make([]int, buckets+1)
	for k := 0; k < len(buf); k += 2 {
		start[bucketOf(buf[k], buckets)+1] += 2
	}
	for b := 1; b <= buckets; b++ {
		start[b] += start[b-1]
	}
	pos := append([]int(nil), start[:buckets]...)
	for k := 0; k < len(buf); k += 2 {
		b := bucketOf(buf[k], buckets)
		scratch[pos[b]], scratch[pos[b]+1] = buf[k], buf[k+1]
		pos[b] += 2
	}
	copy(buf, scratch)
	return start
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

// pass2 dedupes each bucket, maps to compact ids and counts degrees; the
// compact pairs are spilled as cu<<32|cv (cu < cv) in the same buckets.
func (x *extRun) pass2(in, out *runSet) ([]uint32, error) {
	deg := make([]uint32, len(x.ids))
	idx := newIDIndex(x.ids)
	var unique uint64
	var buf, keys []uint64
	for b := 0; b < in.buckets; b++ {
		if err := x.ctx.Err(); err != nil {
			return nil, fmt.Errorf("partition: %w", err)
		}
		var err error
		buf, err = in.load(b, buf[:0])
		if err != nil {
			return nil, err
		}
		ps := pairView(buf)
		slices.SortFunc(ps, cmpPair)
		ps = slices.Compact(ps)
		unique += uint64(len(ps))
		keys = keys[:0]
		for _, e := range ps {
			cu, cv := idx.find(e[0]), idx.find(e[1])
			deg[cu]++
			deg[cv]++
			keys = append(keys, uint64(cu)<<32|uint64(cv))
		}
		if err := out.spillBucket(b, keys); err != nil {
			return nil, err
		}
		x.cfg.progress("dedupe", int64(b+1), int64(in.buckets))
	}
	x.cst.Duplicates = x.cst.InputEdges - x.cst.SelfLoops - unique
	x.cst.Vertices = int64(len(x.ids))
	x.cst.Edges = int64(unique)
	return deg, nil
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

// forEachForward streams the compact pairs as forward edges in rank ids.
func (x *extRun) forEachForward(in *runSet, rank []uint32, fn func(u, v uint32)) error {
	var buf []uint64
	for b := 0; b < in.buckets; b++ {
		if err := x.ctx.Err(); err != nil {
			return fmt.Errorf("partition: %w", err)
		}
		var err error
		buf, err = in.load(b, buf[:0])
		if err != nil {
			return err
		}
		for _, k := range buf {
			u, v := rank[k>>32], rank[uint32(k)]
			if u > v {
				u, v = v, u
			}
			fn(u, v)
		}
	}
	return nil
}

// pass3 routes every forward edge to its block as local row<<32|local col.
func (x *extRun) pass3(in *runSet, rank []uint32, l *Layout, out *runSet) error {
	p := l.P
	free := x.limit - 16*int64(len(rank))
	capEdges := int(max(free/bufferShare/16, minSpillPairs))
	buf := make([]uint64, 0, capEdges)
	blk := make([]uint32, 0, capEdges)
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		start := make([]int, p*p+1)
		for _, b := range blk {
			start[b+1]++
		}
		for b := 1; b < len(start); b++ {
			start[b] += start[b-1]
		}
		scratch := make([]uint64, len(buf))
		pos := append([]int(nil), start[:p*p]...)
		for k, b := range blk {
			scratch[pos[b]] = buf[k]
			pos[b]++
		}
		if err := out.spill(scratch, start); err != nil {
			return err
		}
		buf, blk = buf[:0], blk[:0]
		return nil
	}
	var ferr error
	err := x.forEachForward(in, rank, func(u, v uint32) {
		if ferr != nil {
			return
		}
		gi, gj := l.Group(u), l.Group(v)
		buf = append(buf, uint64(l.Local(u, gi))<<32|uint64(l.Local(v, gj)))
		blk = append(blk, uint32(gi*p+gj))
		if len(buf) == cap(buf) {
			ferr = flush()
		}
	})
	if err != nil {
		return err
	}
	if ferr != nil {
		return ferr
	}
	return flush()
}

// buildBlock loads block (i, j)'s routed edges and builds its CSR.
func buildBlock(in *runSet, l *Layout, i, j int) (*graph.CSR, error) {
	b := i*l.P + j
	keys, err := in.load(b, make([]uint64, 0, in.count[b]))
	if err != nil {
		return nil, err
	}
	slices.Sort(keys)
	rows := l.GroupSize(i)
	c := &graph.CSR{Offsets: make([]uint64, rows+1), Cols: make([]uint32, len(keys)), NCols: l.GroupSize(j)}
	for k, key := range keys {
		r := key >> 32
		if r >= uint64(rows) || int64(uint32(key)) >= c.NCols {
			return nil, fmt.Errorf("partition: routed edge (%d,%d) outside a %dx%d block", r, uint32(key), rows, c.NCols)
		}
		c.Offsets[r+1]++
		c.Cols[k] = uint32(key)
	}
	for r := int64(1); r <= rows; r++ {
		c.Offsets[r] += c.Offsets[r-1]
	}
	return c, nil
}
