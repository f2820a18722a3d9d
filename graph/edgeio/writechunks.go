package edgeio

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/atomicfile"
)

// Chunks is an edge list that writers take piece by piece, so that it
// need not be held in memory: Len edges in chunks of ChunkLen (the last
// one shorter). Chunk(c, buf) returns chunk c, filled into buf (which
// holds ChunkLen edges) or from storage of its own; it is called from
// several goroutines at once, each with its own buf, and must give the
// same edges whenever it is called (gen.Source is one).
type Chunks interface {
	Len() int64
	ChunkLen() int
	Chunk(c int, buf []graph.Edge) []graph.Edge
}

// idBounder is a Chunks that knows a bound on its ids (gen.Source): the
// binary width follows from it without a pass over the edges.
type idBounder interface{ MaxIDBound() uint64 }

// sliceChunks is an edge list in memory as Chunks.
type sliceChunks struct {
	edges []graph.Edge
	piece int
}

func (s sliceChunks) Len() int64    { return int64(len(s.edges)) }
func (s sliceChunks) ChunkLen() int { return s.piece }
func (s sliceChunks) Chunk(c int, _ []graph.Edge) []graph.Edge {
	lo := c * s.piece
	return s.edges[lo:min(lo+s.piece, len(s.edges))]
}

// WriteChunksFileContext is WriteFileContext for edges given as Chunks.
func WriteChunksFileContext(ctx context.Context, path string, src Chunks, opts WriteOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if path == "-" {
		return WriteChunks(ctxWriter{ctx, os.Stdout}, src, opts)
	}
	base, comp := splitCompression(path)
	if opts.Compression == "" {
		opts.Compression = comp
	}
	if opts.Format == FormatAuto {
		opts.Format = formatFromName(base)
	}
	// The temporary file beside path is swept by the next write into the
	// directory if this process dies; a new file gets 0666 less the umask,
	// a replaced one keeps its mode, and a symlink is written through.
	err := atomicfile.Write(path, func(f *os.File) error {
		if err := WriteChunks(ctxWriter{ctx, f}, src, opts); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("graph/edgeio: %w", err)
	}
	return nil
}

// WriteChunks is Write for edges given as Chunks: chunks are encoded in
// parallel (opts.Workers) and written in order in large writes, at most
// 2 x workers of them in memory at a time. A binary file's id width and a
// Matrix Market header need the largest id: where src gives no bound that
// settles it, a first pass over the chunks finds it.
func WriteChunks(w io.Writer, src Chunks, opts WriteOptions) (err error) {
	comp, err := parseCompression(opts.Compression)
	if err != nil {
		return err
	}
	if !opts.Format.valid() {
		return fmt.Errorf("graph/edgeio: invalid format %d", int(opts.Format))
	}
	if !opts.Format.writable() {
		return fmt.Errorf("graph/edgeio: %s is read, not written: write edgelist, tsv, mtx or bin", opts.Format)
	}
	if src.ChunkLen() < 1 {
		return fmt.Errorf("graph/edgeio: chunks of %d edges", src.ChunkLen())
	}
	var closer io.Closer
	switch comp {
	case compGzip:
		zw, _ := gzip.NewWriterLevel(w, gzip.DefaultCompression)
		w, closer = zw, zw
	case compZstd:
		zw, err := zstd.NewWriter(w)
		if err != nil {
			return fmt.Errorf("graph/edgeio: zstd: %w", err)
		}
		w, closer = zw, zw
	}
	err = writeChunksAs(w, src, opts)
	if closer != nil {
		err = errors.Join(err, closer.Close())
	}
	return err
}

func writeChunksAs(w io.Writer, src Chunks, opts WriteOptions) error {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	switch opts.Format {
	case FormatBin:
		wd, err := chunksWidth(src, opts.IDWidth, workers)
		if err != nil {
			return err
		}
		hdr := binHeader{version: binVersion, width: wd, edges: uint64(src.Len())}.encode()
		if wd == 4 {
			return encodeChunks(w, hdr, src, workers, opts.Progress, appendBin4)
		}
		return encodeChunks(w, hdr, src, workers, opts.Progress, appendBin8)
	case FormatMTX:
		n, err := chunksMaxID(src, workers)
		if err != nil {
			return err
		}
		if n == math.MaxUint64 {
			return fmt.Errorf("graph/edgeio: id 2^64-1 has no 1-based Matrix Market index")
		}
		if src.Len() > 0 {
			n++
		}
		hdr := fmt.Appendf(nil, "%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n", n, n, src.Len())
		return encodeChunks(w, hdr, src, workers, opts.Progress, textAppender(' ', 1))
	case FormatTSV:
		return encodeChunks(w, nil, src, workers, opts.Progress, textAppender('\t', 0))
	default:
		return encodeChunks(w, nil, src, workers, opts.Progress, textAppender(' ', 0))
	}
}

// chunksWidth is the binary id width for writing src: the requested one,
// checked, or the smallest that holds every id.
func chunksWidth(src Chunks, want, workers int) (uint32, error) {
	if want != 0 && want != 4 && want != 8 {
		return 0, fmt.Errorf("graph/edgeio: binary id width %d, want 0 (auto), 4 or 8", want)
	}
	if want == 8 {
		return 8, nil
	}
	if b, ok := src.(idBounder); ok && b.MaxIDBound() <= math.MaxUint32 {
		return 4, nil
	}
	maxID, err := chunksMaxID(src, workers)
	if err != nil {
		return 0, err
	}
	switch {
	case maxID <= math.MaxUint32:
		return 4, nil
	case want == 4:
		return 0, fmt.Errorf("graph/edgeio: id width 4 cannot hold id %d", maxID)
	}
	return 8, nil
}

// chunksMaxID is the largest id of src (0 when it is empty), a pass over
// its chunks on workers goroutines.
func chunksMaxID(src Chunks, workers int) (uint64, error) {
	n := chunkCount(src)
	if n < 0 {
		return 0, fmt.Errorf("graph/edgeio: %d edges in chunks of %d: too many chunks", src.Len(), src.ChunkLen())
	}
	var top atomic.Uint64
	var cursor atomic.Int64
	var wg sync.WaitGroup
	workers = max(1, min(workers, n))
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			buf := chunkBuffer(src)
			var m uint64
			for c := int(cursor.Add(1) - 1); c < n; c = int(cursor.Add(1) - 1) {
				for _, e := range src.Chunk(c, buf) {
					m = max(m, e.U, e.V)
				}
			}
			for old := top.Load(); m > old && !top.CompareAndSwap(old, m); old = top.Load() {
			}
		}()
	}
	wg.Wait()
	return top.Load(), nil
}

// chunkBuffer is a buffer for src's chunks, none for an edge list in
// memory, whose chunks are its own.
func chunkBuffer(src Chunks) []graph.Edge {
	if _, ok := src.(sliceChunks); ok {
		return nil
	}
	return make([]graph.Edge, src.ChunkLen())
}

// chunkCount is the number of chunks of src, -1 when it is not an int.
func chunkCount(src Chunks) int {
	n, k := src.Len(), int64(src.ChunkLen())
	c := n / k
	if n%k != 0 {
		c++
	}
	if int64(int(c)) != c {
		return -1
	}
	return int(c)
}

func appendBin4(b []byte, edges []graph.Edge) []byte {
	off := len(b)
	b = growBytes(b, 8*len(edges))
	for i, e := range edges {
		binary.LittleEndian.PutUint64(b[off+8*i:], uint64(uint32(e.U))|uint64(e.V)<<32)
	}
	return b
}

func appendBin8(b []byte, edges []graph.Edge) []byte {
	off := len(b)
	b = growBytes(b, 16*len(edges))
	for i, e := range edges {
		binary.LittleEndian.PutUint64(b[off+16*i:], e.U)
		binary.LittleEndian.PutUint64(b[off+16*i+8:], e.V)
	}
	return b
}

// growBytes extends b by n bytes (their contents undefined).
func growBytes(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// textAppender formats edges as lines "u<sep>v\n", ids plus add.
func textAppender(sep byte, add uint64) func([]byte, []graph.Edge) []byte {
	return func(b []byte, edges []graph.Edge) []byte {
		for _, e := range edges {
			b = strconv.AppendUint(b, e.U+add, 10)
			b = append(b, sep)
			b = strconv.AppendUint(b, e.V+add, 10)
			b = append(b, '\n')
		}
		return b
	}
}

// encodeChunks writes head, then every chunk of src encoded by enc, in
// order. workers goroutines take chunks from a cursor and encode them;
// the calling goroutine writes the encoded chunks as they complete, in
// order, and reports progress (edges written, total) after each. At most
// 2 x workers encoded chunks exist at a time. A write error stops the
// workers and is returned.
func encodeChunks(w io.Writer, head []byte, src Chunks, workers int, progress func(done, total int64),
	enc func([]byte, []graph.Edge) []byte) error {
	n := chunkCount(src)
	if n < 0 {
		return fmt.Errorf("graph/edgeio: %d edges in chunks of %d: too many chunks", src.Len(), src.ChunkLen())
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(head); err != nil {
		return err
	}
	workers = max(1, min(workers, n))
	type piece struct {
		buf   []byte
		edges int
		ready chan struct{}
	}
	// slots[c % window] carries chunk c from its worker to the writer;
	// free hands a slot back once written, so no worker runs more than
	// window chunks ahead of the writer.
	window := 2 * workers
	slots := make([]piece, window)
	free := make(chan struct{}, window)
	for i := range slots {
		slots[i].ready = make(chan struct{}, 1)
		free <- struct{}{}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// Chunk c's ticket is handed out only after c+1 slots were freed,
	// window of them at the start: chunk c - window was written, so its
	// slot, c % window, is free.
	tickets := make(chan int, window)
	go func() {
		for c := range n {
			select {
			case <-free:
			case <-stop:
				close(tickets)
				return
			}
			tickets <- c
		}
		close(tickets)
	}()
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			buf := chunkBuffer(src)
			for c := range tickets {
				s := &slots[c%window]
				edges := src.Chunk(c, buf)
				s.buf = enc(s.buf[:0], edges)
				s.edges = len(edges)
				s.ready <- struct{}{}
			}
		}()
	}
	defer func() {
		close(stop)
		// Drain so that no worker blocks on a ticket or a slot.
		for range tickets {
		}
		wg.Wait()
	}()
	var done int64
	for c := range n {
		s := &slots[c%window]
		<-s.ready
		if _, err := bw.Write(s.buf); err != nil {
			return err
		}
		done += int64(s.edges)
		if progress != nil {
			progress(done, src.Len())
		}
		free <- struct{}{}
	}
	return bw.Flush()
}
