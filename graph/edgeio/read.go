package edgeio

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/trigrid/trigrid/graph"
)

// ReadOptions tune a read. The zero value detects everything and uses all
// cores.
type ReadOptions struct {
	// Format forces a format; FormatAuto detects it from the content and
	// then the extension. FormatTSV reads like FormatEdgeList.
	Format Format
	// SkipBadLines skips (and counts in ReadStats.BadLines) text lines that
	// are not edges instead of failing on the first one.
	SkipBadLines bool
	// Workers is the number of parsing goroutines; 0 means
	// runtime.GOMAXPROCS(0). Memory grows with it: about 2*Workers chunks
	// are in flight.
	Workers int
	// Progress, if not nil, is called after each delivered batch with the
	// bytes of the (compressed) input consumed so far and the total (-1 if
	// unknown). It is called from the goroutine that called the read.
	Progress func(done, total int64)
	// Pairs32, if not nil, watches ReadBinaryPairs32 (and ReadFileIDs of
	// such a file) fill its result, so that a caller can use the parts
	// already read while the rest is read.
	Pairs32 PairsWatcher

	// chunkSize overrides the text chunk size; tests set it tiny to put
	// chunk boundaries everywhere.
	chunkSize int
	// midRead, if not nil, is called by the parallel readers once the
	// file is measured (a text file's lines counted), before its edges are
	// read; tests change the file there.
	midRead func()
	// keepBatches lets fn keep the text batches it is given: each chunk's
	// edges go to a new slice, sized by the chunk's line count, instead of
	// a buffer reused for the next chunk.
	keepBatches bool
	// wholeLines makes a text input whose last line has no newline an
	// error. The readers of standard input and of files that are not
	// regular (pipes, FIFOs) set it, and it holds for their plain text
	// (not compressed, not archived), where a missing newline is the mark
	// of a writer that died mid-line (see
	// docs/decisions/2026-12-01-cut-text-streams.md).
	wholeLines bool
}

// ReadStats describes what a read saw.
type ReadStats struct {
	Path   string
	Format Format
	// Compression is "", "gzip", "zstd", "bzip2" or "xz"; nested layers
	// are joined outermost first ("gzip+xz").
	Compression string
	Bytes       int64 // bytes read from the file (compressed size)
	Lines       int64 // text lines seen (0 for binary)
	Edges       int64
	Comments    int64
	// HeaderLines is 1 when the first line that is neither blank nor a
	// comment was not an edge but a column header ("FromNodeId ToNodeId")
	// and was skipped; HeaderLine and Header are then its line number and
	// its text (truncated like the text in a ParseError).
	HeaderLines int64
	HeaderLine  int64
	Header      string
	BadLines    int64
	// DeclaredVertices is the vertex count a file declares: max(rows,
	// cols) of a Matrix Market size line, n of a METIS or DIMACS header,
	// the nodes of a GAP graph; else 0.
	DeclaredVertices uint64
	// Archive is "tar" when the graph is a member of a tar archive, and
	// Member is then that member's name (OUTER/INNER for a member of an
	// archive inside the archive).
	Archive string
	Member  string
}

const (
	defaultChunkSize = 8 << 20
	minChunkSize     = 64 << 10
	// maxLineLen bounds a single line so that a file without newlines
	// cannot grow a chunk without limit.
	maxLineLen = 64 << 20
	sniffSize  = 64 << 10
)

// ReadFile reads a whole file ("-" = standard input) into memory.
func ReadFile(ctx context.Context, path string, opts ReadOptions) ([]graph.Edge, ReadStats, error) {
	if f, ok, err := openStream(path); ok {
		if err != nil {
			return nil, ReadStats{Path: path}, err
		}
		defer f.Close()
		opts.wholeLines = true
		return Read(ctx, f, path, opts)
	}
	if edges, st, ok, err := readBinaryFile(ctx, path, opts); ok {
		return edges, st, err
	}
	if edges, st, ok, err := readTextFile(ctx, path, opts); ok {
		return edges, st, err
	}
	// Batches are kept as they come (text batches are not reused, so no
	// copy is needed) and joined once at the end: growing one slice by
	// appending copies the edges again at every doubling and faults in
	// each new array, which cost more than the parsing itself on large
	// text files.
	opts.keepBatches = true
	var parts [][]graph.Edge
	var n int
	st, err := Stream(ctx, path, opts, func(b []graph.Edge) error {
		parts = append(parts, b)
		n += len(b)
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	return join(parts, n, workers(opts)), st, nil
}

// Read reads edges from r; name is used in messages and for detecting the
// format from its extension.
func Read(ctx context.Context, r io.Reader, name string, opts ReadOptions) ([]graph.Edge, ReadStats, error) {
	opts.keepBatches = true // see ReadFile
	var parts [][]graph.Edge
	var n int
	st, err := streamReader(ctx, r, name, -1, nil, opts, func(b []graph.Edge) error {
		parts = append(parts, b)
		n += len(b)
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	return join(parts, n, workers(opts)), st, nil
}

// Stream delivers the edges of path ("-" = standard input) in file order in
// batches. A batch is only valid during the call: the next batch reuses its
// memory. Memory stays bounded by the chunks in flight, whatever the file
// size. An error from fn stops the read and is returned as is.
func Stream(ctx context.Context, path string, opts ReadOptions, fn func(batch []graph.Edge) error) (ReadStats, error) {
	if path == "-" {
		opts.wholeLines = true
		return streamReader(ctx, os.Stdin, "-", -1, nil, opts, fn)
	}
	f, err := os.Open(path)
	if err != nil {
		return ReadStats{Path: path}, fmt.Errorf("graph/edgeio: %w", err)
	}
	defer f.Close()
	size := int64(-1)
	var watch *fileWatch
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
		watch = watchFile(f, fi)
	} else {
		opts.wholeLines = true // a pipe, a FIFO, a device
	}
	return streamReader(ctx, f, path, size, watch, opts, fn)
}

// openStream opens path once when it names no regular file but a FIFO, a
// character device (/dev/stdin, /dev/fd/N of a pipe) or a socket: such a
// path reads as standard input does, once and in order, since the readers
// of files look at a file more than once (its header, then its body; its
// chunks at offsets) and a second open of a FIFO waits for a writer that
// is gone. ok is false for "-", a regular file, a directory or a path
// that cannot be looked up (the file readers report those).
func openStream(path string) (f *os.File, ok bool, err error) {
	if path == "-" {
		return nil, false, nil
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		return nil, false, nil
	}
	f, err = os.Open(path)
	if err != nil {
		return nil, true, fmt.Errorf("graph/edgeio: %w", err)
	}
	return f, true, nil
}

// isRegular reports whether path names a regular file, without opening it
// (an open of a FIFO waits for a writer and takes what it writes).
func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// countingReader counts the raw bytes read and remembers the raw source's
// own errors, so that a failing disk is not reported as corrupt gzip.
type countingReader struct {
	r   io.Reader
	n   atomic.Int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

func displayName(name string) string {
	if name == "-" || name == "" {
		return "stdin"
	}
	return name
}

func streamReader(ctx context.Context, r io.Reader, name string, size int64, watch *fileWatch, opts ReadOptions, fn func([]graph.Edge) error) (st ReadStats, err error) {
	st.Path = name
	dn := displayName(name)
	if !opts.Format.valid() {
		return st, fmt.Errorf("graph/edgeio: %s: invalid format %d", dn, int(opts.Format))
	}
	// fn's own errors are returned untouched; remembering them tells them
	// apart from errors about the content.
	rd := &contentReader{ctx: ctx, opts: opts, st: &st, stream: opts.wholeLines}
	rd.fn = func(b []graph.Edge) error {
		rd.fnErr = fn(b)
		return rd.fnErr
	}
	cr := &countingReader{r: r}
	rd.cr = cr
	defer func() { st.Bytes = cr.n.Load() }()
	rd.progress = func() {}
	if opts.Progress != nil {
		rd.progress = func() { opts.Progress(cr.n.Load(), size) }
	}
	// A file that changed while it was read gives no count, whatever was
	// read: this is checked last, over any other outcome but fn's errors
	// and a cancelled read.
	defer func() {
		if watch != nil && (err == nil || (err != rd.fnErr && ctx.Err() == nil)) && watch.changed() {
			err = changedError(dn)
		}
	}()
	// Errors of a decompressor are relabelled once, here, whichever stage
	// of the read meets them.
	defer func() {
		var de *decompressErr
		if errors.As(err, &de) {
			err = decompressError(dn, st.Compression, cr, de.err)
		}
	}()
	return st, rd.read(bufio.NewReaderSize(cr, sniffSize), name, dn, size, 0)
}

// contentReader reads one input through its layers: compression, a tar
// archive, then the format.
type contentReader struct {
	ctx      context.Context
	opts     ReadOptions
	st       *ReadStats
	fn       func([]graph.Edge) error
	fnErr    error
	progress func()
	cr       *countingReader
	// stream is set for standard input or another file that is not a
	// regular one (ReadOptions.wholeLines).
	stream bool
}

// maxLayers bounds the compressions and archives nested in one input.
const maxLayers = 4

// read reads br, whose first bytes decide what it is: compressed, a tar
// archive or a graph file. name gives the extension, dn names it in
// messages and size is its bytes when known (-1 otherwise).
func (rd *contentReader) read(br *bufio.Reader, name, dn string, size int64, depth int) error {
	st, opts := rd.st, rd.opts
	head, perr := br.Peek(sniffSize)
	if perr != nil && perr != io.EOF && perr != bufio.ErrBufferFull {
		return fmt.Errorf("graph/edgeio: %s: reading: %w", dn, perr)
	}
	if comp := sniffCompression(head); comp != compNone || isTar(head) {
		if depth == maxLayers {
			return fmt.Errorf("graph/edgeio: %s: more than %d layers of compression and archives", dn, maxLayers)
		}
		if comp == compNone {
			return rd.readTar(br, dn, depth+1)
		}
		if st.Compression != compNone {
			comp = st.Compression + "+" + comp
		}
		st.Compression = comp
		zr, closeZ, err := decompressor(comp[strings.LastIndexByte(comp, '+')+1:], br)
		if err != nil {
			return decompressError(dn, comp, rd.cr, err)
		}
		defer closeZ()
		return rd.read(bufio.NewReaderSize(&errTagger{r: zr}, sniffSize), name, dn, -1, depth+1)
	}
	if !opts.Format.binary() && bytes.HasPrefix(head, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
		head = head[len(utf8BOM):]
		size -= int64(len(utf8BOM))
	}
	if len(head) == 0 {
		st.Format = orDefault(opts.Format, formatFromName(name))
		rd.progress()
		return nil // empty input: an empty graph
	}
	format, err := detectFormat(head, name, dn, size, opts.Format)
	if err != nil {
		return err
	}
	st.Format = format
	defer rd.progress()
	// A compressor or an archive frames its data (a cut is an error of
	// theirs): only a plain stream can be cut between lines unseen.
	rd.opts.wholeLines = rd.stream && st.Compression == compNone && st.Archive == ""
	err = rd.readFormat(br, dn, format)
	if st.Compression != compNone && st.Archive == "" && err != nil && err != rd.fnErr && rd.ctx.Err() == nil {
		// A corrupt stream decompresses to garbage before its checksum is
		// reached, so a format error in compressed input may be a symptom:
		// read on to the checksum and report the cause if there is one.
		// (Not through an archive member, which may be sparse: its holes
		// read as zeros of any length.)
		if derr := drain(rd.ctx, br); derr != nil {
			return derr
		}
	}
	return err
}

// readFormat reads a graph file of the given format from br.
func (rd *contentReader) readFormat(br *bufio.Reader, dn string, format Format) error {
	ctx, opts, st, fn, progress := rd.ctx, rd.opts, rd.st, rd.fn, rd.progress
	switch format {
	case FormatBin:
		return readBinary(ctx, br, dn, opts, st, fn, progress)
	case FormatSG, FormatWSG:
		return readGAP(ctx, br, dn, format == FormatWSG, opts, st, fn, progress)
	case FormatMETIS:
		return readMETIS(ctx, newCRReader(br), dn, opts, st, fn, progress)
	case FormatAdjList:
		return readAdjList(ctx, newCRReader(br), dn, opts, st, fn, progress)
	case FormatDIMACS:
		return readDIMACS(ctx, newCRReader(br), dn, opts, st, fn, progress)
	case FormatMTX:
		tr := bufio.NewReaderSize(newCRReader(br), sniffSize)
		p, lines, err := readMTXHeader(tr, dn, st)
		if err != nil {
			return err
		}
		p.skipBad = opts.SkipBadLines
		return runText(ctx, tr, dn, p, lines, opts, st, fn, progress)
	}
	p := &lineParser{skipBad: opts.SkipBadLines}
	return runText(ctx, newCRReader(br), dn, p, 0, opts, st, fn, progress)
}

// decompressor undoes comp on r; closeZ releases it.
func decompressor(comp string, r io.Reader) (zr io.Reader, closeZ func(), err error) {
	switch comp {
	case compGzip:
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		return z, func() { z.Close() }, nil
	case compZstd:
		z, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, err
		}
		return z, z.Close, nil
	case compBzip2:
		return bzip2.NewReader(r), func() {}, nil
	case compXz:
		z, err := xz.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		return z, func() {}, nil
	}
	return nil, nil, fmt.Errorf("unknown compression %q", comp)
}

func drain(ctx context.Context, r io.Reader) error {
	buf := make([]byte, 1<<20)
	for ctx.Err() == nil {
		if _, err := r.Read(buf); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
	return nil
}

func orDefault(f, fromName Format) Format {
	if f != FormatAuto {
		return f
	}
	if fromName != FormatAuto {
		return fromName
	}
	return FormatEdgeList
}

// decompressErr marks an error that came out of the decompressor.
type decompressErr struct{ err error }

func (e *decompressErr) Error() string { return e.err.Error() }
func (e *decompressErr) Unwrap() error { return e.err }

type errTagger struct{ r io.Reader }

func (t *errTagger) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		err = &decompressErr{err}
	}
	return n, err
}

func decompressError(name, comp string, cr *countingReader, err error) error {
	if cr.err != nil {
		return fmt.Errorf("graph/edgeio: %s: reading: %w", name, cr.err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("graph/edgeio: %s: truncated %s stream after %d compressed bytes: %w", name, comp, cr.n.Load(), err)
	}
	return fmt.Errorf("graph/edgeio: %s: corrupt %s stream: %w", name, comp, err)
}

// join concatenates parts, n edges in all, copying on up to w goroutines.
// No edges give nil.
func join(parts [][]graph.Edge, n, w int) []graph.Edge {
	if n == 0 {
		return nil
	}
	if len(parts) == 1 {
		return parts[0]
	}
	out := make([]graph.Edge, n)
	var wg sync.WaitGroup
	var next atomic.Int64
	offs := make([]int, len(parts))
	for i, off := 0, 0; i < len(parts); i++ {
		offs[i] = off
		off += len(parts[i])
	}
	for range min(w, len(parts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(parts) {
					return
				}
				copy(out[offs[i]:], parts[i])
				parts[i] = nil
			}
		}()
	}
	wg.Wait()
	return out
}

func workers(opts ReadOptions) int {
	if opts.Workers > 0 {
		return opts.Workers
	}
	return runtime.GOMAXPROCS(0)
}
