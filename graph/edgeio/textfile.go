package edgeio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trigrid/trigrid/graph"
)

// errNotFast says a text file is not for readTextFile (it holds a line
// longer than textLongLine or a lone CR); the streaming reader takes it.
var errNotFast = errors.New("not for the parallel text reader")

// textLongLine bounds the search for a line end past a chunk boundary: a
// file with longer lines goes to the streaming reader, which has the
// messages for them.
const textLongLine = 1 << 20

// textChunk is one run of whole lines of a text file: bytes [start, end),
// lines lines (the '\\n's in it, plus one when it is the file's last run
// and does not end in '\\n'), whose edges are parsed to out[off:].
type textChunk struct {
	start, end int64
	lines      int64
	off        int64
	res        chunkResult
}

// readTextFile reads an uncompressed edge-list file (not Matrix Market)
// with parallel positioned reads: the file is cut into runs of whole lines,
// their lines are counted, which gives each run its place in the result,
// and each run is parsed straight there. No goroutine reads the whole file
// alone and no batch is copied into the result. Errors, headers, comments
// and line numbers are those of the streaming reader, which takes every
// file this one does not (ok false): standard input, compressed or small
// files, other formats, lines longer than textLongLine, lone CRs.
func readTextFile(ctx context.Context, path string, opts ReadOptions) (edges []graph.Edge, st ReadStats, ok bool, err error) {
	edges, _, st, ok, _, err = readText(ctx, path, opts, false)
	return edges, st, ok, err
}

// errWide stops a narrow parse at the first id of 2^32 or more.
var errWide = errors.New("an id needs 64 bits")

// readText is readTextFile, which with narrow parses into 32-bit pairs
// (p32) instead, unless some id needs 64 bits: then wide is set and
// nothing is returned (the file has to be read again into edges).
func readText(ctx context.Context, path string, opts ReadOptions, narrow bool) (edges []graph.Edge, p32 []uint32, st ReadStats, ok, wide bool, err error) {
	edges, p32, st, ok, err = readTextInto(ctx, path, opts, narrow)
	if err == errWide {
		return nil, nil, ReadStats{}, true, true, nil
	}
	return edges, p32, st, ok, false, err
}

func readTextInto(ctx context.Context, path string, opts ReadOptions, narrow bool) (edges []graph.Edge, p32 []uint32, st ReadStats, ok bool, err error) {
	size := opts.chunkSize
	if size <= 0 {
		size = defaultChunkSize
	}
	f, fi, base, format := openFastText(path, opts, size)
	if f == nil {
		return nil, nil, st, false, nil
	}
	defer f.Close()
	watch := watchFile(f, fi)
	defer func() {
		if ok && err != errWide && ctx.Err() == nil && watch.changed() {
			edges, p32, err = nil, nil, changedError(path)
		}
	}()
	chunks, err := cutLines(f, base, fi.Size(), int64(size))
	if err == errNotFast {
		return nil, nil, st, false, nil
	}
	if err != nil {
		return nil, nil, st, true, fmt.Errorf("graph/edgeio: %s: reading: %w", path, err)
	}
	st = ReadStats{Path: path, Format: format, Bytes: fi.Size()}
	nw := workers(opts)
	// Lines of each run, which place its edges, and a lone CR anywhere
	// sends the file to the streaming reader (it makes such CRs line ends).
	var total int64
	lone := false
	if err := forChunks(ctx, f, chunks, nw, nil, func(c *textChunk, b []byte) error {
		c.lines = runLines(b)
		if cr := bytes.Count(b, []byte{'\r'}); cr > 0 && bytes.Count(b, []byte{'\r', '\n'}) != cr {
			lone = true
		}
		return nil
	}); err != nil {
		return nil, nil, st, true, fmt.Errorf("graph/edgeio: %s: reading: %w", path, err)
	}
	if lone {
		return nil, nil, st, false, nil
	}
	if opts.midRead != nil {
		opts.midRead()
	}
	for i := range chunks {
		chunks[i].off = total
		total += chunks[i].lines
	}
	var out []graph.Edge
	var out32 []uint32
	if narrow {
		out32 = make([]uint32, 2*total)
	} else {
		out = make([]graph.Edge, total)
	}
	p := &lineParser{skipBad: opts.SkipBadLines}
	var done atomic.Int64
	progress := func() {}
	if opts.Progress != nil {
		progress = func() { opts.Progress(base+done.Load(), fi.Size()) }
	}
	err = forChunks(ctx, f, chunks, nw, progress, func(c *textChunk, b []byte) error {
		if runLines(b) != c.lines {
			return changedError(path) // the run was counted from other bytes
		}
		if narrow {
			c.res.p32 = out32[2*c.off : 2*c.off : 2*(c.off+c.lines)]
		} else {
			c.res.edges = out[c.off : c.off : c.off+c.lines]
		}
		p.parse(b, &c.res)
		if c.res.wide {
			return errWide
		}
		if (len(c.res.edges) > 0 && &c.res.edges[0] != &out[c.off]) || (len(c.res.p32) > 0 && &c.res.p32[0] != &out32[2*c.off]) {
			// The lines were counted in an earlier read of the same
			// bytes: they are other bytes now.
			return changedError(path)
		}
		done.Add(c.end - c.start)
		return nil
	})
	if err == errWide {
		return nil, nil, st, true, err
	}
	if errors.Is(err, ErrChanged) {
		return nil, nil, st, true, err
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, st, true, ctx.Err()
		}
		return nil, nil, st, true, fmt.Errorf("graph/edgeio: %s: reading: %w", path, err)
	}
	if opts.Progress != nil {
		opts.Progress(fi.Size(), fi.Size())
	}
	col := &collector{p: p, name: path, st: &st}
	for i := range chunks {
		if err := col.admit(&chunks[i].res, nil); err != nil {
			return nil, nil, st, true, err
		}
	}
	if err := col.finish(); err != nil {
		return nil, nil, st, true, err
	}
	if narrow {
		return nil, closeGaps(out32, 2, chunks), st, true, nil
	}
	return closeGaps(out, 1, chunks), nil, st, true, nil
}

// runLines counts the lines of a run: its '\n's, and one more for a last
// line without one.
func runLines(b []byte) int64 {
	n := int64(bytes.Count(b, newline))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// cutLines cuts [base, size) of f into runs of whole lines of about size
// bytes each: a run ends after the first '\\n' at or past its nominal end.
func cutLines(f *os.File, base, fileSize, size int64) ([]textChunk, error) {
	var chunks []textChunk
	buf := make([]byte, 4096)
	start := base
	for start < fileSize {
		end := start + size
		if end >= fileSize {
			chunks = append(chunks, textChunk{start: start, end: fileSize})
			break
		}
		// The first '\n' at or after end-1 closes the run.
		at := end - 1
		found := int64(-1)
		for found < 0 {
			if at-(end-1) > textLongLine {
				return nil, errNotFast
			}
			n, err := f.ReadAt(buf, at)
			if n == 0 && err != nil {
				if err == io.EOF {
					break
				}
				return nil, err
			}
			if k := bytes.IndexByte(buf[:n], '\n'); k >= 0 {
				found = at + int64(k)
				break
			}
			at += int64(n)
		}
		if found < 0 || found+1 >= fileSize {
			chunks = append(chunks, textChunk{start: start, end: fileSize})
			break
		}
		chunks = append(chunks, textChunk{start: start, end: found + 1})
		start = found + 1
	}
	return chunks, nil
}

// forChunks reads each run into a buffer of the worker's own and calls fn
// on it, on w goroutines; progress, if not nil, is called from this
// goroutine while they work. The first error stops the others.
func forChunks(ctx context.Context, f *os.File, chunks []textChunk, w int, progress func(), fn func(*textChunk, []byte) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	stop := func(err error) {
		once.Do(func() { firstErr = err })
		next.Store(int64(len(chunks)))
	}
	for range min(w, len(chunks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				i := next.Add(1) - 1
				if i >= int64(len(chunks)) {
					return
				}
				if err := ctx.Err(); err != nil {
					stop(err)
					return
				}
				c := &chunks[i]
				n := int(c.end - c.start)
				if cap(buf) < n {
					buf = make([]byte, n)
				}
				b := buf[:n]
				if _, err := f.ReadAt(b, c.start); err != nil {
					if err == io.EOF {
						err = io.ErrUnexpectedEOF // the file shrank while read
					}
					stop(err)
					return
				}
				if err := fn(c, b); err != nil {
					stop(err)
					return
				}
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	if progress != nil {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case <-finished:
				break wait
			case <-tick.C:
				progress()
			}
		}
	}
	<-finished
	return firstErr
}

// closeGaps returns the edges of all runs, in order, as one slice of out
// (per elements an edge): a run with fewer edges than lines (comments,
// blank or bad lines, a header) leaves a gap after its edges. Runs move
// right, from the last to the first, by the gaps at or after them, so
// runs after the last gap stay where they are (a file whose only comments
// are at its top moves its first run alone).
func closeGaps[T any](out []T, per int64, chunks []textChunk) []T {
	var shift, total int64
	for i := len(chunks) - 1; i >= 0; i-- {
		c := &chunks[i]
		e := int64(c.res.n())
		total += e
		shift += c.lines - e
		if shift > 0 && e > 0 {
			copy(out[per*(c.off+shift):per*(c.off+shift+e)], out[per*c.off:per*(c.off+e)])
		}
		c.res.edges, c.res.p32 = nil, nil
	}
	if total == 0 {
		return nil
	}
	return out[per*shift : per*(shift+total) : per*(shift+total)]
}

// ReadFileIDs reads path as ReadFile does, for a consumer that takes
// 32-bit ids: a binary file of 32-bit ids, or an uncompressed edge list
// that the parallel reader takes and whose ids are all below 2^32, comes
// as 32-bit pairs (p32: u0, v0, u1, v1, ... in file order, half the memory
// of edges), and so does a binary list of 32-bit ids on standard input
// ("-"); anything else as edges (an edge list with a larger id is parsed
// again for them). At most one of p32 and edges is not nil.
func ReadFileIDs(ctx context.Context, path string, opts ReadOptions) (p32 []uint32, edges []graph.Edge, st ReadStats, err error) {
	if path == "-" {
		return readStreamIDs(ctx, os.Stdin, path, opts)
	}
	if f, ok, err := openStream(path); ok {
		if err != nil {
			return nil, nil, ReadStats{Path: path}, err
		}
		defer f.Close()
		return readStreamIDs(ctx, f, path, opts)
	}
	if pairs, st, ok, err := ReadBinaryPairs32(ctx, path, opts); ok {
		return pairs, nil, st, err
	}
	if _, pairs, st, ok, wide, err := readText(ctx, path, opts, true); ok && !wide {
		return pairs, nil, st, err
	}
	edges, st, err = ReadFile(ctx, path, opts)
	return nil, edges, st, err
}

// openFastText opens path for the parallel reader when it can take it: a
// regular file of at least two chunks, not compressed or a tar archive, that
// the streaming reader would read as an edge list or TSV. It returns a nil
// file otherwise (the streaming reader then reads it, and reports any error).
// base is the offset past a UTF-8 byte order mark.
func openFastText(path string, opts ReadOptions, size int) (*os.File, os.FileInfo, int64, Format) {
	if path == "-" || (opts.Format != FormatAuto && opts.Format != FormatEdgeList && opts.Format != FormatTSV) {
		return nil, nil, 0, FormatAuto
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, FormatAuto
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 2*int64(size) {
		f.Close()
		return nil, nil, 0, FormatAuto
	}
	head := make([]byte, sniffSize)
	nh, _ := f.ReadAt(head, 0)
	head = head[:nh]
	base := int64(0)
	if bytes.HasPrefix(head, utf8BOM) {
		base = int64(len(utf8BOM))
	}
	if sniffCompression(head) != compNone || isTar(head) {
		f.Close()
		return nil, nil, 0, FormatAuto
	}
	format, err := detectFormat(head[base:], path, path, fi.Size()-base, opts.Format)
	if err != nil || (format != FormatEdgeList && format != FormatTSV) {
		f.Close()
		return nil, nil, 0, FormatAuto
	}
	return f, fi, base, format
}
