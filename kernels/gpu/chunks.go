package gpu

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/parallel"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// Counting a subtask with JK in chunks of rows. Streaming rows keeps JK
// resident; when JK leaves no room beside it for the ranges (a P too small
// for the device), JK's rows are cut into chunks [a, b) and each chunk counts the
// edges (u, v) of IJ with v in [a, b): IJ's columns in [a, b), rebased to
// v - a, against rows [a, b) of JK, with IK's rows up to the last row that
// has such an edge. Every edge of IJ has its v in exactly one chunk, so
// the chunks' counts sum to the subtask's, and each edge is intersected
// once (a larger P would intersect it in P subtasks). A chunk's part of IJ
// is built on the host, the next one while the device counts the current
// one, into two page-locked buffers; IK and JK are read in place.

// ChunkShare is the share of the room (the device limit less the context)
// a chunk of JK takes by default: the rest holds the chunk's index, the
// kernel's scratch and the buffers of the ranges streamed beside it.
const ChunkShare = 0.4

// room is what the context may hold beside itself.
func (c *Counter) room() int64 {
	_, limit, _ := c.ctx.MemUsage()
	return int64(limit) - devmem.ContextBytes
}

// ChunkCuts cuts jk's rows into chunks whose blocks take at most target
// device bytes (devmem.BlockBytes), each as large as fits; a single row
// larger than target is a chunk of its own. cuts[0] = 0, cuts[len-1] =
// rows.
func ChunkCuts(jk *graph.CSR, target int64) []int64 {
	return cutRows(jk, target, func(a, b int64) int64 { return devmem.BlockBytes(b-a, int64(jk.Offsets[b]-jk.Offsets[a])) })
}

// cutRows cuts g's rows, in order, into the fewest runs whose rows [a, b)
// take at most target bytes by bytes(a, b), which grows with b, each as
// large as fits; a single row larger than target is a run of its own.
// cuts[0] = 0, cuts[len-1] = rows.
func cutRows(g *graph.CSR, target int64, bytes func(a, b int64) int64) []int64 {
	n := g.NumRows()
	cuts := []int64{0}
	for a := int64(0); a < n; {
		fits := func(b int64) bool { return bytes(a, b) <= target }
		// The largest b in (a, n] that fits, at least a + 1.
		b := a + int64(sort.Search(int(n-a), func(i int) bool { return !fits(a + 1 + int64(i)) }))
		b = max(b, a+1)
		cuts = append(cuts, b)
		a = b
	}
	return cuts
}

// chunkBuf is host memory, page-locked in place, that holds one chunk's
// part of IJ.
type chunkBuf struct {
	lib       *Library
	off       []uint64
	cols      []uint32
	regOff    *abi.Registration
	regCols   *abi.Registration
	rowSums   []int64 // per parallel.Dynamic chunk of rows: edges in the chunk
	rowLast   []int64 // per chunk of rows: the last row with one, or -1
	malformed []int64 // per chunk of rows: the first malformed row, or -1
}

// buildRows is the rows a goroutine takes at a time.
const buildRows = 1 << 14

// release unpins the buffers; no copy from them may be pending.
func (cb *chunkBuf) release() error {
	err := cb.regOff.Release()
	if e := cb.regCols.Release(); err == nil {
		err = e
	}
	cb.regOff, cb.regCols = nil, nil
	return err
}

// grow makes off hold at least n offsets and cols m columns, pinning
// what it makes (memory the host will not lock is used pageable). No copy
// from the buffers may be pending.
func (cb *chunkBuf) grow(n, m int64) {
	if int64(len(cb.off)) < n {
		if err := cb.regOff.Release(); err != nil {
			cb.lib.logger.Warn("releasing a chunk's buffer", "err", err)
		}
		cb.off = make([]uint64, n)
		cb.regOff, _ = devmem.Register(cb.lib.abi, cb.off)
	}
	if int64(len(cb.cols)) < m {
		if err := cb.regCols.Release(); err != nil {
			cb.lib.logger.Warn("releasing a chunk's buffer", "err", err)
		}
		cb.cols = make([]uint32, m+m/8)
		cb.regCols, _ = devmem.Register(cb.lib.abi, cb.cols)
	}
}

// build writes into cb the part of ij whose columns lie in [a, b), rebased
// to column - a, over rows up to the last that has one (the chunk's block
// IJ; ncols b - a). With check it also checks every row of ij (columns
// strictly increasing and below ij.NCols) and fails naming the first
// malformed row: the chunks read each row only where its columns fall, so
// a malformed row would otherwise go unnoticed.
func (cb *chunkBuf) build(ij *graph.CSR, a, b int64, check bool) (*graph.CSR, error) {
	n := ij.NumRows()
	cb.grow(n+1, 0)
	parts := (int(n) + buildRows - 1) / buildRows
	cb.rowSums = slices.Grow(cb.rowSums[:0], parts)[:parts]
	cb.rowLast = slices.Grow(cb.rowLast[:0], parts)[:parts]
	cb.malformed = slices.Grow(cb.malformed[:0], parts)[:parts]
	lo32, hi32 := uint32(min(a, 1<<32-1)), uint32(min(b, 1<<32-1))
	// The count of row r's columns in [a, b) goes to off[r+1].
	parallel.Dynamic(int(n), buildRows, 0, func(lo, hi int) {
		p := lo / buildRows
		sum, last, bad := int64(0), int64(-1), int64(-1)
		for r := lo; r < hi; r++ {
			s, e := ij.Offsets[r], ij.Offsets[r+1]
			if e < s || e > uint64(len(ij.Cols)) {
				if bad < 0 {
					bad = int64(r)
				}
				cb.off[r+1] = 0
				continue
			}
			row := ij.Cols[s:e]
			if check && bad < 0 && !rowOK(row, ij.NCols) {
				bad = int64(r)
			}
			x, _ := slices.BinarySearch(row, lo32)
			y, _ := slices.BinarySearch(row[x:], hi32)
			cb.off[r+1] = uint64(y)
			if y > 0 {
				sum += int64(y)
				last = int64(r)
			}
		}
		cb.rowSums[p], cb.rowLast[p], cb.malformed[p] = sum, last, bad
	})
	total, last := int64(0), int64(-1)
	for p := range parts {
		if bad := cb.malformed[p]; bad >= 0 {
			return nil, fmt.Errorf("gpu: count in chunks: row %d of ij is malformed (offsets out of order, or columns not strictly increasing below %d)", bad, ij.NCols)
		}
		s := cb.rowSums[p]
		cb.rowSums[p] = total
		total += s
		last = max(last, cb.rowLast[p])
	}
	rows := last + 1
	cb.grow(0, total)
	cb.off[0] = 0
	parallel.Dynamic(int(rows), buildRows, 0, func(lo, hi int) {
		at := uint64(cb.rowSums[lo/buildRows])
		for r := lo; r < hi; r++ {
			k := cb.off[r+1]
			if k > 0 {
				row := ij.Cols[ij.Offsets[r]:ij.Offsets[r+1]]
				x, _ := slices.BinarySearch(row, lo32)
				for i, v := range row[x : x+int(k)] {
					cb.cols[at+uint64(i)] = v - lo32
				}
			}
			at += k
			cb.off[r+1] = at
		}
	})
	return &graph.CSR{Offsets: cb.off[:rows+1], Cols: cb.cols[:total], NCols: b - a}, nil
}

// badOffset is the first row of b whose offsets run backwards or past its
// columns (or 0 when the first offset is not 0), -1 when there is none:
// the chunks slice b's arrays by them.
func badOffset(b *graph.CSR) int64 {
	if len(b.Offsets) > 0 && b.Offsets[0] != 0 {
		return 0
	}
	for r := 1; r < len(b.Offsets); r++ {
		if b.Offsets[r] < b.Offsets[r-1] || b.Offsets[r] > uint64(len(b.Cols)) {
			return int64(r - 1)
		}
	}
	return -1
}

// rowOK reports whether row is strictly increasing below ncols.
func rowOK(row []uint32, ncols int64) bool {
	for i, v := range row {
		if int64(v) >= ncols || i > 0 && row[i-1] >= v {
			return false
		}
	}
	return true
}

// prefixRows is rows [0, r) of b, sharing its arrays.
func prefixRows(b *graph.CSR, r int64) *graph.CSR {
	return &graph.CSR{Offsets: b.Offsets[:r+1], Cols: b.Cols[:b.Offsets[r]], NCols: b.NCols}
}

// countChunked counts t with JK in chunks of its rows, each taking share
// of room. c.mu is held.
func (c *Counter) countChunked(t kernels.Subtask, room int64) (kernels.Result, error) {
	start := time.Now()
	kernel, id, err := c.kernelFor(t)
	if err != nil {
		return kernels.Result{}, err
	}
	for _, b := range []struct {
		name string
		csr  *graph.CSR
	}{{"ik", t.IK}, {"jk", t.JK}} {
		if r := badOffset(b.csr); r >= 0 {
			return kernels.Result{}, fmt.Errorf("gpu: count in chunks: row %d of %s is malformed (offsets out of order or past its %d columns)", r, b.name, len(b.csr.Cols))
		}
	}
	share := c.chunkShare
	if share <= 0 {
		share = ChunkShare
	}
	cuts := ChunkCuts(t.JK, int64(share*float64(room)))
	// Every slot gives way to the chunks and their ranges; IK and JK are
	// pinned in place for the whole count, the chunks' blocks are not.
	c.slots.ReleaseAll()
	keep := c.slots.Keeper(t)
	var reading []*graph.CSR
	for _, b := range []*graph.CSR{t.IK, t.JK} {
		if !slices.Contains(reading, b) && c.lib.pins.StartLoad(b, keep) {
			reading = append(reading, b)
		}
	}
	was := c.slots.SetCut(true)
	defer c.slots.SetCut(was)
	bufs := [2]*chunkBuf{{lib: c.lib}, {lib: c.lib}}
	defer func() {
		for _, b := range bufs {
			if err := b.release(); err != nil {
				c.lib.logger.Warn("releasing a chunk's buffers", "err", err)
			}
		}
		for _, b := range reading {
			c.lib.pins.EndLoad(b)
		}
	}()
	// The chunks are counted from the last rows to the first: in a degree
	// order the last rows are the longest, whose chunk has the largest
	// index (the dense rows' bitmaps), and the first call sizes the
	// ranges' buffers from the memory that chunk leaves, so that every
	// later chunk finds room for its index where this one's was.
	last := len(cuts) - 2
	ij, err := bufs[0].build(t.IJ, cuts[last], cuts[last+1], true)
	c.stalled += time.Since(start)
	if err != nil {
		return kernels.Result{}, err
	}
	var sum kernels.Result
	for j := last; j >= 0; j-- {
		var (
			next    *graph.CSR
			nextErr error
		)
		done := make(chan struct{})
		if j > 0 {
			go func() {
				defer close(done)
				next, nextErr = bufs[(last-j+1)%2].build(t.IJ, cuts[j-1], cuts[j], false)
			}()
		} else {
			close(done)
		}
		res, err := c.countChunk(t, ij, cuts[j], cuts[j+1], id, kernel)
		<-done
		if err == nil {
			err = nextErr
		}
		if err != nil {
			return kernels.Result{}, err
		}
		sum.Triangles += res.Triangles
		sum.KernelTime += res.KernelTime
		ij = next
	}
	c.last = kernel
	return sum, nil
}

// countChunk counts the chunk [a, b) of JK with ij, its part of IJ
// (chunkBuf.build), streamed with IK's rows beside rows [a, b) of JK
// resident. c.mu is held.
func (c *Counter) countChunk(t kernels.Subtask, ij *graph.CSR, a, b int64, id int32, kernel string) (kernels.Result, error) {
	if ij.NumEdges() == 0 || t.JK.Offsets[b] == t.JK.Offsets[a] {
		return kernels.Result{}, nil
	}
	ik := prefixRows(t.IK, ij.NumRows())
	if ik.NumEdges() == 0 {
		return kernels.Result{}, nil
	}
	jk := sliceRows(t.JK, a, b)
	start := time.Now()
	var keep devmem.Keep
	s, err := c.slots.For(jk, &keep, kernels.Subtask{})
	if err == nil {
		err = c.slots.Complete([3]int32{s, s, s})
	}
	c.stalled += time.Since(start)
	if err != nil {
		if errors.Is(err, ErrOutOfMemory) {
			return kernels.Result{}, fmt.Errorf("gpu: count: rows [%d, %d) of jk (one chunk): %w", a, b, err)
		}
		return kernels.Result{}, fmt.Errorf("gpu: count: %w", err)
	}
	sub := []abi.RowsSubtask{{IJOff: ij.Offsets, IJCols: ij.Cols, IKOff: ik.Offsets, IKCols: ik.Cols}}
	var (
		tri [1]uint64
		ms  [1]float64
	)
	t0 := time.Now()
	parts, err := c.ctx.CountRows(id, s, sub, tri[:], ms[:])
	c.calls += time.Since(t0)
	// The chunk is not needed again: its slot is free for the next.
	_ = c.slots.Free(int(s))
	if err != nil {
		return kernels.Result{}, fmt.Errorf("gpu: count rows [%d, %d) of jk with %s: %w", a, b, kernel, err)
	}
	c.ranges += int(parts)
	c.streamed++
	c.copied += uint64(devmem.CopyBytes(ij.NumRows(), ij.NumEdges()) + devmem.CopyBytes(ik.NumRows(), ik.NumEdges()))
	kt := time.Duration(ms[0] * float64(time.Millisecond))
	c.busy += kt
	return kernels.Result{Triangles: tri[0], KernelTime: kt}, nil
}
