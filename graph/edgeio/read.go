package edgeio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

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
	// keepBatches lets fn keep the text batches it is given: each chunk's
	// edges go to a new slice, sized by the chunk's line count, instead of
	// a buffer reused for the next chunk.
	keepBatches bool
}

// ReadStats describes what a read saw.
type ReadStats struct {
	Path        string
	Format      Format
	Compression string // "", "gzip", "zstd"
	Bytes       int64  // bytes read from the file (compressed size)
	Lines       int64  // text lines seen (0 for binary)
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
	// DeclaredVertices is max(rows, cols) of a Matrix Market size line, else 0.
	DeclaredVertices uint64
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
	st, err := streamReader(ctx, r, name, -1, opts, func(b []graph.Edge) error {
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
		return streamReader(ctx, os.Stdin, "-", -1, opts, fn)
	}
	f, err := os.Open(path)
	if err != nil {
		return ReadStats{Path: path}, fmt.Errorf("graph/edgeio: %w", err)
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return streamReader(ctx, f, path, size, opts, fn)
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

func streamReader(ctx context.Context, r io.Reader, name string, size int64, opts ReadOptions, fn func([]graph.Edge) error) (st ReadStats, err error) {
	st.Path = name
	dn := displayName(name)
	if !opts.Format.valid() {
		return st, fmt.Errorf("graph/edgeio: %s: invalid format %d", dn, int(opts.Format))
	}
	// fn's own errors are returned untouched; remembering them tells them
	// apart from errors about the content.
	var fnErr error
	userFn := fn
	fn = func(b []graph.Edge) error {
		fnErr = userFn(b)
		return fnErr
	}
	cr := &countingReader{r: r}
	defer func() { st.Bytes = cr.n.Load() }()
	progress := func() {}
	if opts.Progress != nil {
		progress = func() { opts.Progress(cr.n.Load(), size) }
	}

	raw := bufio.NewReaderSize(cr, sniffSize)
	head, _ := raw.Peek(4)
	st.Compression = sniffCompression(head)
	var content io.Reader = raw
	switch st.Compression {
	case compGzip:
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return st, decompressError(dn, st.Compression, cr, err)
		}
		defer zr.Close()
		content = zr
	case compZstd:
		zr, err := zstd.NewReader(raw, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return st, fmt.Errorf("graph/edgeio: %s: zstd: %w", dn, err)
		}
		defer zr.Close()
		content = zr
	}
	// Errors of the decompressor are relabelled once, here, whichever
	// stage of the read meets them.
	defer func() {
		var de *decompressErr
		if errors.As(err, &de) {
			err = decompressError(dn, st.Compression, cr, de.err)
		}
	}()
	if st.Compression != compNone {
		content = &errTagger{r: content}
	}

	br := bufio.NewReaderSize(content, sniffSize)
	if opts.Format != FormatBin {
		skipBOM(br)
	}
	head, perr := br.Peek(len(mmBanner))
	if len(head) == 0 && perr != nil {
		if perr == io.EOF {
			st.Format = orDefault(opts.Format, formatFromName(name))
			progress()
			return st, nil // empty file: an empty graph
		}
		return st, fmt.Errorf("graph/edgeio: %s: reading: %w", dn, perr)
	}
	format := opts.Format
	if format == FormatAuto {
		format = sniffFormat(head)
	}
	if format == FormatAuto {
		format = orDefault(FormatAuto, formatFromName(name))
	}
	st.Format = format
	defer progress()

	switch format {
	case FormatBin:
		err = readBinary(ctx, br, dn, opts, &st, fn, progress)
	case FormatMTX:
		var p *lineParser
		var lines int64
		tr := bufio.NewReaderSize(newCRReader(br), sniffSize)
		p, lines, err = readMTXHeader(tr, dn, &st)
		if err == nil {
			p.skipBad = opts.SkipBadLines
			err = runText(ctx, tr, dn, p, lines, opts, &st, fn, progress)
		}
	default:
		p := &lineParser{skipBad: opts.SkipBadLines}
		err = runText(ctx, newCRReader(br), dn, p, 0, opts, &st, fn, progress)
	}
	if st.Compression != compNone && err != nil && err != fnErr && ctx.Err() == nil {
		// A corrupt stream decompresses to garbage before its checksum is
		// reached, so a format error in compressed input may be a symptom:
		// read on to the checksum and report the cause if there is one.
		if derr := drain(ctx, br); derr != nil {
			return st, derr
		}
	}
	return st, err
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
