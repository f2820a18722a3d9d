package edgeio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/atomicfile"
)

// WriteOptions tune a write. The zero value writes a space-separated edge
// list, uncompressed (WriteFile takes both from the extension).
type WriteOptions struct {
	// Format: FormatEdgeList (space), FormatTSV (tab), FormatMTX, FormatBin;
	// FormatAuto means the file extension decides (edge list for Write).
	// The other formats are read only: writing them is an error.
	Format Format
	// Compression: "", "none", "gzip" or "zstd"; empty means the file
	// extension decides in WriteFile (".gz", ".zst").
	Compression string
	// IDWidth is the binary id width, 4 or 8; 0 picks the smallest that
	// holds every id.
	IDWidth int
	// Workers formats text in parallel; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Progress, when set, is told the edges handed to the writer so far
	// and the total, from the writing goroutine, every piece of edges.
	Progress func(done, total int64)

	// pieceEdges overrides textPiece; tests set it small.
	pieceEdges int
}

// WriteFile writes edges to path atomically: a temporary file in the same
// directory is written, synced and renamed, so readers never see half a
// file. Format and compression come from opts or else the extension. "-"
// writes to standard output.
func WriteFile(path string, edges []graph.Edge, opts WriteOptions) (err error) {
	return WriteFileContext(context.Background(), path, edges, opts)
}

// WriteFileContext is WriteFile stopped by ctx: a cancelled write returns
// ctx's error and removes its temporary file, leaving path as it was.
func WriteFileContext(ctx context.Context, path string, edges []graph.Edge, opts WriteOptions) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if path == "-" {
		return Write(ctxWriter{ctx, os.Stdout}, edges, opts)
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
	err = atomicfile.Write(path, func(f *os.File) error {
		if err := Write(ctxWriter{ctx, f}, edges, opts); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("graph/edgeio: %w", err)
	}
	return nil
}

// Write writes edges to w in opts.Format (FormatAuto = space-separated
// edge list), compressed as opts.Compression says.
func Write(w io.Writer, edges []graph.Edge, opts WriteOptions) (err error) {
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
	switch opts.Format {
	case FormatBin:
		err = writeBinary(w, edges, opts.IDWidth, opts.Progress)
	case FormatMTX:
		err = writeMTX(w, edges, opts)
	case FormatTSV:
		err = writeText(w, edges, '\t', 0, opts)
	default:
		err = writeText(w, edges, ' ', 0, opts)
	}
	if closer != nil {
		err = errors.Join(err, closer.Close())
	}
	return err
}

func writeMTX(w io.Writer, edges []graph.Edge, opts WriteOptions) error {
	var n uint64
	for _, e := range edges {
		if e.U == math.MaxUint64 || e.V == math.MaxUint64 {
			return fmt.Errorf("graph/edgeio: id 2^64-1 has no 1-based Matrix Market index")
		}
		n = max(n, e.U+1, e.V+1)
	}
	hdr := fmt.Sprintf("%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n", n, n, len(edges))
	if _, err := io.WriteString(w, hdr); err != nil {
		return err
	}
	return writeText(w, edges, ' ', 1, opts)
}

// textPiece is the number of edges one formatting task handles: big enough
// to amortise the hand-off, small enough to keep all workers busy.
const textPiece = 1 << 16

// writeText formats pieces of edges in parallel and writes them in order;
// at most 2*workers formatted pieces exist at a time.
func writeText(w io.Writer, edges []graph.Edge, sep byte, add uint64, opts WriteOptions) error {
	nw := opts.Workers
	if nw <= 0 {
		nw = runtime.GOMAXPROCS(0)
	}
	step := textPiece
	if opts.pieceEdges > 0 {
		step = opts.pieceEdges
	}
	type piece struct {
		lo, hi int
		buf    []byte
		done   chan struct{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inflight := 2 * nw
	free := make(chan *piece, inflight)
	for range inflight {
		free <- &piece{}
	}
	work := make(chan *piece, inflight)
	ordered := make(chan *piece, inflight)
	var wg sync.WaitGroup
	wg.Add(1 + nw)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(ordered)
		for lo := 0; lo < len(edges); lo += step {
			var p *piece
			select {
			case p = <-free:
			case <-ctx.Done():
				return
			}
			p.lo, p.hi, p.done = lo, min(lo+step, len(edges)), make(chan struct{})
			ordered <- p
			work <- p
		}
	}()
	for range nw {
		go func() {
			defer wg.Done()
			for p := range work {
				b := p.buf[:0]
				for _, e := range edges[p.lo:p.hi] {
					b = strconv.AppendUint(b, e.U+add, 10)
					b = append(b, sep)
					b = strconv.AppendUint(b, e.V+add, 10)
					b = append(b, '\n')
				}
				p.buf = b
				close(p.done)
			}
		}()
	}
	defer wg.Wait()
	defer cancel()
	bw := bufio.NewWriterSize(w, 1<<20)
	for p := range ordered {
		<-p.done
		if _, err := bw.Write(p.buf); err != nil {
			return err
		}
		if opts.Progress != nil {
			opts.Progress(int64(p.hi), int64(len(edges)))
		}
		free <- p
	}
	return bw.Flush()
}

// ctxWriter fails every Write once ctx is done, so that a long write stops
// at its next buffer.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
