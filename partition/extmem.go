package partition

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"strings"

	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/storage"
)

// The external partitioner's memory. Config.MemLimit bounds everything a
// run holds: the read's buffers, the spill buffers and buckets, the
// per-vertex arrays, the index of the runs, the blocks of pass 4 and the
// shard encoders its writes bring into use, with headroom for the
// collector; what the process held before the run is not part of it. The
// run sizes its buffers, and chooses how many goroutines each phase runs,
// so that every phase stays within the limit: a small limit costs speed,
// not the limit. A limit below the least a run can work in with the
// input's size, P and the machine's cores is refused before anything is
// read (a *MemLimitError naming that least); one too small for the graph
// (its vertices, its largest bucket or block) as soon as that is known.
//
// The model's figures (the bytes of a phase's arrays, the reader's
// chunks, the encoders') are upper bounds: the peak of a run stays below
// the limit by about the headroom and what the bounds overstate.

const (
	// encoderTables is one of storage's shard encoders (zstd at
	// SpeedBetterCompression; storage keeps two sets, one encoder per core
	// in each, handed out in turn): its match tables (4 MiB and 64 KiB) and
	// block buffers, held from the first section it compresses.
	encoderTables = 4<<20 + 512<<10
	// smallHistory is the history buffer of an encoder of sections of at
	// most a zstd block (zstdBlockBytes), allocated with its first section.
	smallHistory = 1 << 20
	// encoderHistory is the history buffer (twice the 8 MiB window) of an
	// encoder of larger sections, allocated with its first section.
	encoderHistory = 16<<20 + 256<<10
	zstdBlockBytes = storage.SmallSectionBytes
	// frameBufBytes is a spill frame's encode or decode buffer (runSet's
	// framePool): up to 10 bytes an element as varints. A goroutine that
	// spills or loads holds one, and the pool keeps as many again until the
	// collector empties it.
	frameBufBytes = 10*frameElems + 64<<10
	// workerStack is a phase goroutine's stack, with radixSort's count
	// tables (96 KiB) on it.
	workerStack = 256 << 10
	// segBytes is a spill frame's index entry (runSeg, 24 bytes) in slices
	// grown by append.
	segBytes = 48
	// shardMetaBytes is a block's share of the manifest (its entry, its
	// JSON, the write order).
	shardMetaBytes = 512
	// minIDBudget is the least pass 1 leaves the id set.
	minIDBudget = 1 << 20
	// readFixed is the buffered readers of the input's layers.
	readFixed = 512 << 10
	// textChunk is graph/edgeio's text chunk; two per parsing goroutine are
	// in flight, each with its edges (a line holds an edge in as few as 4
	// bytes; 16 bytes an edge in a slice grown by append).
	textChunk = 8 << 20
	// binBatch is graph/edgeio's batch of a binary edge list.
	binBatch = 1 << 20
)

// headroom is what a limit keeps free for the collector: 1/GCShare of it,
// which the caller's soft memory limit keeps below the limit (see
// Config.MemLimit), and gcRoom more between what the run holds and that
// soft limit, for the garbage between two collections and the runtime's
// own structures. Without gcRoom a run holding its whole room would sit at
// the soft limit, where the collector runs without pause and, once it
// takes half the CPU, lets the heap grow past the limit.
func headroom(limit int64) int64 { return limit/GCShare + gcRoom }

// GCShare: a caller that lowers the runtime's soft memory limit for a run
// under Config.MemLimit lowers it by at most 1/GCShare of that limit.
const GCShare = 8

// gcRoom is the room between a run's memory and the soft memory limit.
const gcRoom = 4 << 20

// roomOf is what a run under limit may hold at any time.
func roomOf(limit int64) int64 { return limit - headroom(limit) }

// limitFor is the least limit, in whole MiB, whose room holds need bytes.
func limitFor(need int64) int64 {
	return roundMiB((need+gcRoom)*GCShare/(GCShare-1) + 1)
}

func roundMiB(n int64) int64 { return (n + 1<<20 - 1) &^ (1<<20 - 1) }

// MemLimitError is the error of a Config.MemLimit below the least the
// external partitioner can work in.
type MemLimitError struct {
	// Limit is the limit given, Least the least that works, in whole MiB.
	Limit, Least int64
	// P, Workers and Cores are what the least was found for: the encoders
	// of the shards are one per core.
	P, Workers, Cores int
	// Input names what of the input needs Least ("its 645,894 vertices");
	// empty for the least every run needs, which the input's size, P and
	// the cores set.
	Input string
}

// On says where the least holds: "2 workers", or "2 workers, 16 cores"
// when the cores differ.
func (e *MemLimitError) On() string {
	if e.Cores == e.Workers {
		return fmt.Sprintf("%d workers", e.Workers)
	}
	return fmt.Sprintf("%d workers, %d cores", e.Workers, e.Cores)
}

func (e *MemLimitError) Error() string {
	if e.Input == "" {
		return fmt.Sprintf("partition: a memory limit of %d bytes is below the least the partitioner works in (%d MiB for P=%d on %s)",
			e.Limit, e.Least>>20, e.P, e.On())
	}
	return fmt.Sprintf("partition: a memory limit of %d bytes is below the least that partitions this input: %d MiB (for %s, P=%d on %s)",
		e.Limit, e.Least>>20, e.Input, e.P, e.On())
}

// readCost is what pass 1's read holds: fixed bytes, and bytes per parsing
// goroutine (text only).
type readCost struct {
	fixed, perWorker int64
}

func (r readCost) bytes(workers int) int64 { return r.fixed + int64(workers)*r.perWorker }

// inputCost sizes the read of path (graph/edgeio's Stream) and bounds its
// raw edges (est): a binary edge list by its header, text by its size (an
// edge per 4 bytes; 8 times that compressed). Standard input and pipes have
// neither: they are read as compressed text, and est is -1 (unknown).
func inputCost(path string, ro edgeio.ReadOptions) (readCost, int64, error) {
	rc := readCost{fixed: readFixed}
	fi, err := os.Stat(path)
	if path == "-" || err == nil && !fi.Mode().IsRegular() {
		// Standard input, a pipe: nothing can be looked at before the read.
		rc.fixed += decompressCost("", nil)
		rc.perWorker = textCost(-1)
		return rc, -1, nil
	}
	if err != nil {
		return rc, 0, fmt.Errorf("partition: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return rc, 0, fmt.Errorf("partition: %w", err)
	}
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	f.Close()
	head = head[:n]
	size := fi.Size()
	comp := compressionOf(head)
	binFile := ro.Format == edgeio.FormatBin
	if comp == "" {
		if len(head) >= 24 && bytes8(head) == "TGEDGES\x00" && (binFile || ro.Format == edgeio.FormatAuto) {
			width := int64(binary.LittleEndian.Uint32(head[12:]))
			edges := int64(binary.LittleEndian.Uint64(head[16:]))
			if width == 4 || width == 8 {
				if edges >= 0 && (size < 0 || edges <= size) {
					rc.fixed += min(edges, binBatch) * (16 + 2*width)
					return rc, max(edges, 0), nil
				}
			}
			rc.fixed += binBatch * 32
			return rc, max(size/8, 0), nil
		}
		rc.perWorker = textCost(size)
		return rc, size / 4, nil
	}
	rc.fixed += decompressCost(comp, head)
	est := size / 4 * 8
	if binFile || ro.Format == edgeio.FormatAuto && isBinaryName(path) {
		rc.fixed += binBatch * 32
		return rc, est, nil
	}
	rc.perWorker = textCost(-1)
	return rc, est, nil
}

func bytes8(b []byte) string {
	if len(b) < 8 {
		return ""
	}
	return string(b[:8])
}

// textCost is what one parsing goroutine holds for a text input of size
// bytes (-1: unknown): two chunks, each grown from 64 KiB towards
// textChunk as the file goes on, and their edges.
func textCost(size int64) int64 {
	chunk := int64(textChunk)
	if size >= 0 {
		chunk = min(chunk, max(64<<10, 2*size))
	}
	return 2 * (chunk + chunk/4*16*5/4)
}

func compressionOf(head []byte) string {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return "gzip"
	case len(head) >= 4 && string(head[:4]) == "\x28\xb5\x2f\xfd":
		return "zstd"
	case len(head) >= 3 && string(head[:3]) == "BZh":
		return "bzip2"
	case len(head) >= 6 && string(head[:6]) == "\xfd7zXZ\x00":
		return "xz"
	}
	return ""
}

// decompressCost bounds a decompressor's memory: zstd its window and xz
// its dictionary (from the file's first header, else 8 MiB: zstd's window
// at its levels 1 to 19, xz's dictionary at its default preset) with their
// buffers. An unknown compression ("": standard input, a pipe) is taken to
// be one of these at 8 MiB: a larger window there is not bounded.
func decompressCost(comp string, head []byte) int64 {
	const bufs = 4 << 20
	switch comp {
	case "gzip":
		return 1 << 20
	case "bzip2":
		return 5 << 20
	case "xz":
		if d := xzDict(head); d > 0 {
			return d + bufs
		}
	case "zstd":
		if w := zstdWindow(head); w > 0 {
			return w + bufs
		}
	}
	return 8<<20 + bufs
}

// xzDict reads the LZMA2 dictionary of the first block of an xz stream
// whose start is head, or returns 0.
func xzDict(head []byte) int64 {
	// A 12-byte stream header, then the block header: its size, flags,
	// the optional sizes, and the first filter's id and properties.
	if len(head) < 14 {
		return 0
	}
	flags := head[13]
	pos := 14
	skip := func() bool { // a multibyte integer
		for pos < len(head) {
			b := head[pos]
			pos++
			if b&0x80 == 0 {
				return true
			}
		}
		return false
	}
	if flags&0x40 != 0 && !skip() || flags&0x80 != 0 && !skip() {
		return 0
	}
	if pos+3 > len(head) || head[pos] != 0x21 || head[pos+1] != 1 { // LZMA2, one byte of properties
		return 0
	}
	b := int64(head[pos+2])
	if b > 40 {
		return 0
	}
	if b == 40 {
		return 1<<32 - 1
	}
	return (2 | b&1) << (b/2 + 11)
}

// zstdWindow reads the window of a zstd frame whose header starts head,
// or returns 0.
func zstdWindow(head []byte) int64 {
	if len(head) < 6 {
		return 0
	}
	fhd := head[4]
	if fhd&0x20 == 0 { // a window descriptor follows
		wd := head[5]
		base := int64(1) << (10 + wd>>3)
		return base + base/8*int64(wd&7)
	}
	// Single segment: the window is the content size.
	pos := 5 + [4]int{0, 1, 2, 4}[fhd&3]
	var fcs int64
	switch fhd >> 6 {
	case 0:
		if pos < len(head) {
			fcs = int64(head[pos])
		}
	case 1:
		if pos+2 <= len(head) {
			fcs = int64(binary.LittleEndian.Uint16(head[pos:])) + 256
		}
	case 2:
		if pos+4 <= len(head) {
			fcs = int64(binary.LittleEndian.Uint32(head[pos:]))
		}
	case 3:
		if pos+8 <= len(head) {
			fcs = int64(binary.LittleEndian.Uint64(head[pos:]) >> 1)
		}
	}
	return max(fcs, 1<<10)
}

func isBinaryName(path string) bool {
	name := strings.ToLower(path)
	for _, ext := range []string{".gz", ".zst", ".zstd", ".bz2", ".xz"} {
		name = strings.TrimSuffix(name, ext)
	}
	return strings.HasSuffix(name, ".bin") || strings.HasSuffix(name, ".tgb")
}

// extModel is what a run's memory depends on before its input is read.
type extModel struct {
	p, workers, cores int
	read              readCost
	// est bounds the raw edges the buckets are planned for; -1: unknown,
	// planned as the most the limit holds, up to four per byte of it.
	est int64
	// workMem is Config.WorkMem, the most the buffers take, when given;
	// 0 is its default, min(limit, DefaultWorkMem).
	workMem int64
}

// workFor is the most the buffers take under limit.
func (m extModel) workFor(limit int64) int64 {
	if m.workMem > 0 {
		return m.workMem
	}
	return min(limit, DefaultWorkMem)
}

// pass1Plan is how a limit is spent in pass 1.
type pass1Plan struct {
	readers, spillers int
	work              int64 // what spill buffers and buckets are sized by
	capPairs, buckets int
	est               int64 // the raw edges planned for
	index             int64 // the run index of that many
	idBudget          int64 // what the id set and the self-loops may hold
}

// plan1 spends limit on pass 1: the read gets up to half the room (its
// parsing goroutines are cut to fit), the spill buffers are sized by what
// is left, up to workMem, and the id set gets the rest. ok reports whether
// the limit holds pass 1 and the fixed part of pass 4 (the encoders and
// the blocks' metadata).
func (m extModel) plan1(limit int64) (pl pass1Plan, ok bool) {
	if m.est >= 0 {
		return m.plan1For(limit, m.est)
	}
	for est := 4 * limit; ; est /= 2 {
		if pl, ok = m.plan1For(limit, est); ok || est < 1<<16 {
			return pl, ok
		}
	}
}

// plan1For is plan1 for an input of at most est raw edges.
func (m extModel) plan1For(limit, est int64) (pl pass1Plan, ok bool) {
	pl.est = est
	room := roomOf(limit)
	pl.readers = 1
	if m.read.perWorker > 0 {
		pl.readers = int(min(max((room/2-m.read.fixed)/m.read.perWorker, 1), int64(m.workers)))
	}
	pl.spillers = int(min(max(room/8/(2*frameBufBytes+workerStack), 1), int64(m.workers)))
	rest := room - m.read.bytes(pl.readers) - int64(pl.spillers)*(2*frameBufBytes+workerStack)
	pl.work = min(m.workFor(limit), rest)
	if pl.work <= 0 {
		return pl, false
	}
	pl.capPairs, pl.buckets = spillSizes(est, pl.work, m.workers)
	nb, cp := int64(pl.buckets), int64(pl.capPairs)
	flushes := est/cp + 1
	pl.index = segBytes * (flushes*min(nb, cp) + 2*est/frameElems + nb)
	pl.idBudget = rest - 64*cp - pl.index - 32*(nb+1)
	pp := int64(m.p) * int64(m.p)
	fixed4 := encoderBytes(m.cores, 2*pp+1, 0) + pp*(shardMetaBytes+segBytes*nb) + 1<<20
	return pl, pl.idBudget >= minIDBudget && room >= fixed4
}

// encoderBytes is what the shard encoders of cores cores hold after calls
// sections, big of them larger than a zstd block. Each of storage's two
// sets (sections up to a zstd block, larger ones) makes its cores
// encoders, tables and all, at its first section; an encoder's history
// comes with the first section it compresses, and the encoders are
// handed out in turn, so each section may bring another history.
func encoderBytes(cores int, calls, big int64) int64 {
	c := int64(cores)
	set := func(sections, history int64) int64 {
		if sections <= 0 {
			return 0
		}
		return c*encoderTables + min(c, sections)*history
	}
	return set(calls-big, smallHistory) + set(big, encoderHistory)
}

// bigSections is how many of a block's two sections may be larger than a
// zstd block: storage writes its rows' degrees and its columns' gaps as
// uvarints, each below its cols columns.
func bigSections(rows, edges, cols int64) int64 {
	v, n := uvarintLen(uint64(cols)), int64(0)
	if v*edges > zstdBlockBytes {
		n++
	}
	if v*rows > zstdBlockBytes {
		n++
	}
	return n
}

// uvarintLen is the bytes of x as a uvarint.
func uvarintLen(x uint64) int64 { return int64(bits.Len64(x|1)+6) / 7 }

// least is the least limit, in whole MiB, that plan1 accepts.
func (m extModel) least() int64 {
	fits := func(l int64) bool { _, ok := m.plan1(l); return ok }
	lo, hi := int64(0), int64(16<<20)
	for !fits(hi) {
		lo, hi = hi, 2*hi
		if hi > 1<<50 {
			return hi
		}
	}
	for hi-lo > 1<<20 {
		mid := (lo + hi) / 2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return roundMiB(hi)
}

// cores is the number of storage's shard encoders.
func cores() int { return runtime.GOMAXPROCS(0) }

// idMapBytes bounds storage.WriteIDMap for n ids no larger than maxID:
// their varints (zigzag gaps of at most vlen bytes, in a slice grown by
// append) and the compressed copy.
func idMapBytes(n int64, maxID uint64) int64 {
	vlen := int64(bits.Len64(maxID)+1+6) / 7
	return 3*vlen*n + 64<<10
}

// layoutBytes bounds a Layout of p groups over n vertices.
func layoutBytes(p int, rangeScheme bool) int64 {
	if !rangeScheme {
		return 64 * int64(p)
	}
	return 2*maxSlots + 2 + 64*int64(p)*storage.MaxFold
}

// extShape is what the memory of passes 2 to 4 depends on, filled in as
// the run learns it; a zero figure not yet known is bounded from the
// others.
type extShape struct {
	p, cores    int
	rangeScheme bool
	room        int64 // what the run may hold at any time
	n           int64
	maxID       uint64
	idBytes     int64 // the id set, dropped at the rank
	pairsIndex  int64 // pass 1's run index
	buckets     int   // of passes 1 to 3
	pairs       int64 // pass 1's elements (two a pair)
	maxBucket   int64 // pass 1's largest bucket, in elements
	maxCompact  int64 // pass 2's largest bucket, in edges
	// compactIndex and blocksIndex are the run indexes of passes 2 and 3.
	compactIndex, blocksIndex int64
	blockNeed                 int64 // the largest block's blockBytes
	encoders                  int64 // the shard encoders pass 4 brings into use
}

func (s *extShape) pp() int64 { return int64(s.p) * int64(s.p) }

func (s *extShape) compactIdx() int64 {
	if s.compactIndex > 0 {
		return s.compactIndex
	}
	return segBytes*(int64(s.buckets)+s.pairs/2/frameElems+1) + 32*int64(s.buckets)
}

func (s *extShape) blocksIdx() int64 {
	if s.blocksIndex > 0 {
		return s.blocksIndex
	}
	e := s.pairs / 2
	return segBytes*(min(int64(s.buckets)*s.pp(), e)+e/frameElems+s.pp()) + 32*s.pp()
}

func (s *extShape) maxC() int64 {
	if s.maxCompact > 0 {
		return s.maxCompact
	}
	return s.maxBucket / 2
}

// perWorker is a bucket goroutine's frame buffers and stack.
const perWorker = 2*frameBufBytes + workerStack

// pass2Need is pass 2 on w goroutines: the id set, the runs' indexes and
// per goroutine a degree array and a loaded bucket.
func (s *extShape) pass2Need(w int) int64 {
	return s.idBytes + s.pairsIndex + s.compactIdx() + int64(w)*(4*s.n+8*s.maxBucket+perWorker)
}

// rankNeed is the rank: degrees, ranks, the counting sort's starts, the id
// map by rank and the id set it is filled from.
func (s *extShape) rankNeed() int64 { return s.idBytes + s.compactIdx() + 20*s.n + 16 }

// gridNeed is the range scheme's grid filled on w goroutines, each with a
// cell matrix and a loaded bucket: ranks, the id map, degrees in rank
// order, the bucket maps, the grid and its prefix sums, the fold search.
func (s *extShape) gridNeed(w int) int64 {
	if !s.rangeScheme {
		return 0
	}
	nb := int64(gridBuckets(s.n, s.p))
	cells := 8 * nb * nb
	return s.compactIdx() + 24*s.n + cells*int64(2+w) + 32*s.pp() + int64(w)*(8*s.maxC()+perWorker)
}

// pass3Need is pass 3 on w goroutines: ranks, the id map, the runs'
// indexes, the layout, and per goroutine a bucket's keys, their blocks,
// the routed copy and the blocks' starts.
func (s *extShape) pass3Need(w int) int64 {
	return 12*s.n + s.compactIdx() + s.blocksIdx() + layoutBytes(s.p, s.rangeScheme) +
		int64(w)*(20*s.maxC()+16*(s.pp()+1)+perWorker)
}

// pass4Need is pass 4 building par blocks at once: the id map and its
// encoding, the forward degrees, the blocks' index and metadata, the
// encoders, and the blocks.
func (s *extShape) pass4Need(par int) int64 {
	enc := s.encoders
	if enc == 0 {
		enc = encoderBytes(s.cores, 2*s.pp()+1, 0)
	}
	blk := s.blockNeed
	if blk == 0 {
		blk = 1 << 20
	}
	return 12*s.n + idMapBytes(s.n, s.maxID) + s.blocksIdx() + layoutBytes(s.p, s.rangeScheme) +
		s.pp()*shardMetaBytes + enc + int64(par)*blk
}

// withPass4Estimate is s with pass 4's largest block and encoders, where
// not yet known, estimated from the edges read (with their duplicates) as
// an even partition: for a least to state, not to refuse by.
func (s extShape) withPass4Estimate() extShape {
	e := s.pairs / 2
	if s.blockNeed == 0 {
		rows := (s.n + int64(s.p) - 1) / int64(s.p)
		if s.rangeScheme && s.p > 1 {
			rows = s.n
		}
		s.blockNeed = blockBytes(rows, e/s.pp()*23/20+1)
	}
	if s.encoders == 0 {
		rows := (s.n + int64(s.p) - 1) / int64(s.p)
		s.encoders = encoderBytes(s.cores, 2*s.pp()+1, s.pp()*bigSections(rows, e/s.pp()*23/20+1, rows)+1)
	}
	return s
}

// need is the most any phase from pass 2 on holds with w goroutines.
func (s *extShape) need(w int) int64 {
	return max(s.pass2Need(w), s.rankNeed(), s.gridNeed(w), s.pass3Need(w), s.pass4Need(w))
}

// fit is the most goroutines, up to most, whose need fits the room; 0 when
// not even one does.
func (s *extShape) fit(need func(int) int64, most int) int {
	w := 0
	for w < most && need(w+1) <= s.room {
		w++
	}
	return w
}
