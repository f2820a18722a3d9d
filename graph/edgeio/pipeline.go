package edgeio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/trigrid/trigrid/graph"
)

// A chunk is a run of whole lines. One goroutine reads chunks, Workers
// goroutines parse them, and the caller's goroutine takes them back in file
// order, turns relative line numbers into absolute ones and hands the edges
// to fn. A fixed set of chunks circulates (free -> read -> parse -> deliver
// -> free), which bounds memory and gives back-pressure.
type chunk struct {
	buf  []byte // backing store, reused
	data []byte // whole lines within buf
	err  error  // read error met after the previous chunk
	res  chunkResult
	done chan struct{}
}

var (
	errLineTooLong = errors.New("line too long")
	newline        = []byte{'\n'}
)

// runText parses a text body (edge list or Matrix Market entries) read from
// r. lineBase is the number of lines already consumed (a Matrix Market
// header).
func runText(ctx context.Context, r io.Reader, name string, p *lineParser, lineBase int64, opts ReadOptions, st *ReadStats, fn func([]graph.Edge) error, progress func()) error {
	size := opts.chunkSize
	if size <= 0 {
		size = defaultChunkSize
	}
	nw := workers(opts)
	inflight := 2 * nw

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	free := make(chan *chunk, inflight)
	for range inflight {
		free <- &chunk{}
	}
	work := make(chan *chunk, inflight)
	ordered := make(chan *chunk, inflight)

	var wg sync.WaitGroup
	wg.Add(1 + nw)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(ordered)
		readChunks(ctx, r, size, free, work, ordered)
	}()
	for range nw {
		go func() {
			defer wg.Done()
			for c := range work {
				if opts.keepBatches {
					// Every line holds at most one edge.
					c.res.edges = make([]graph.Edge, 0, bytes.Count(c.data, newline)+1)
				}
				p.parse(c.data, &c.res)
				close(c.done)
			}
		}()
	}
	// Whatever way the collector leaves, the goroutines are stopped and
	// waited for before r is closed by the caller.
	defer wg.Wait()
	defer cancel()

	col := &collector{p: p, name: name, st: st, lines: lineBase}
	var cut []byte // the input's text after its last newline
	for c := range ordered {
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if c.err == errLineTooLong {
			return fmt.Errorf("graph/edgeio: %s:%d: a line is longer than %d MiB: not a text edge list?", name, col.lines+1, maxLineLen>>20)
		}
		if c.err != nil {
			return fmt.Errorf("graph/edgeio: %s: reading: %w", name, c.err)
		}
		res := &c.res
		if err := col.admit(res, c.data); err != nil {
			return err
		}
		if n := len(c.data); n > 0 && opts.wholeLines {
			cut = append(cut[:0], c.data[bytes.LastIndexByte(c.data, '\n')+1:]...)
		}
		if len(res.edges) > 0 {
			if err := fn(res.edges); err != nil {
				return err
			}
		}
		progress()
		free <- c
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := col.finish(); err != nil {
		return err
	}
	if len(bytes.TrimSpace(cut)) > 0 {
		return &ParseError{Path: name, Line: col.lines, Text: quoteText(cut),
			Reason: "the stream ends in the middle of this line, without its newline: it was cut short (did its writer fail?); a complete text stream ends with a newline (a whole file without one reads by its name, or append it: (cat FILE; echo) | ...)"}
	}
	if p.mtx && uint64(col.entries) != p.nnz {
		return &ParseError{Path: name, Line: p.sizeLine, Text: p.sizeText,
			Reason: fmt.Sprintf("size line declares %d entries but the file has %d", p.nnz, col.entries)}
	}
	return nil
}

// collector takes parsed chunks in file order: it turns their relative
// line numbers into absolute ones, decides whether a first line that is
// no edge is a header, counts Matrix Market entries and adds each chunk's
// counts to st.
type collector struct {
	p           *lineParser
	name        string
	st          *ReadStats
	lines       int64 // lines before the next chunk
	seenContent bool
	entries     int64       // Matrix Market entries, good or bad
	header      *ParseError // the line skipped as a header, if any
}

// admit takes the next chunk's result (data is its text, read only on
// errors): an error is the file's first bad line, a header that is not
// one, or an entry beyond a Matrix Market file's count.
func (col *collector) admit(res *chunkResult, data []byte) error {
	p, name, st := col.p, col.name, col.st
	if h := res.header; h != nil {
		h.Path, h.Line = name, col.lines+h.Line
		switch {
		case !col.seenContent && !res.mistyped:
			st.HeaderLines++
			st.HeaderLine, st.Header = h.Line, h.Text
			col.header = h
		case !col.seenContent && !p.skipBad:
			h.Reason += "; a first line of digits with one stray character is taken for a mistyped edge, not a header"
			return h
		case p.skipBad:
			st.BadLines++
		default:
			return h
		}
	}
	// The entry count is checked first: a parse error stops the chunk,
	// so its counts cover only earlier lines, and an extra entry among
	// them comes before the error.
	if p.mtx {
		nb := int64(res.n()) + res.bad
		if uint64(col.entries+nb) > p.nnz {
			k := int64(p.nnz) - col.entries // entries of this chunk that fit
			at := col.lines + nthEntryLine(data, k+1)
			return &ParseError{Path: name, Line: at, Text: quoteText(lineAt(data, at-col.lines)),
				Reason: fmt.Sprintf("entry %d, but the size line (line %d) declares %d entries", p.nnz+1, p.sizeLine, p.nnz)}
		}
		col.entries += nb
	}
	if res.err != nil {
		res.err.Path, res.err.Line = name, col.lines+res.err.Line
		return res.err
	}
	col.seenContent = col.seenContent || res.content
	col.lines += res.lines
	st.Lines = col.lines
	st.Comments += res.comments
	st.BadLines += res.bad
	st.Edges += int64(res.n())
	return nil
}

// finish ends a read: a line skipped as a header was one only if edges
// follow it. Without any, it was the file's only content (a one-line file
// of another format, as a JSON array or GraphML on one line), and it is a
// bad line: an error, or skipped and counted with SkipBadLines.
func (col *collector) finish() error {
	st := col.st
	if st.HeaderLines == 0 || st.Edges > 0 {
		return nil
	}
	st.HeaderLines, st.HeaderLine, st.Header = 0, 0, ""
	if col.p.skipBad {
		st.BadLines++
		return nil
	}
	h := col.header
	h.Reason += "; a first line that is not an edge is skipped as a column header only when edges follow it"
	return h
}

// readChunks fills chunks with whole lines and sends them, in order, to the
// workers and the collector. A read error travels as a chunk of its own so
// that it is reported after the lines before it.
func readChunks(ctx context.Context, r io.Reader, size int, free <-chan *chunk, work, ordered chan<- *chunk) {
	var carry []byte
	// Buffers start small and double up to size, so that a small input
	// costs kilobytes, not 2*workers full chunks, and the first chunks of
	// a mid-sized file are spread over several workers.
	target := min(size, minChunkSize)
	for {
		var c *chunk
		select {
		case c = <-free:
		case <-ctx.Done():
			return
		}
		c.res.reset()
		c.err = nil
		c.done = make(chan struct{})
		if cap(c.buf) < target || cap(c.buf) < 2*len(carry) {
			c.buf = make([]byte, max(target, 2*len(carry)))
		}
		target = min(2*target, size)
		buf := c.buf[:cap(c.buf)]
		n := copy(buf, carry)
		carry = carry[:0]
		last := false
		for {
			m, err := fill(r, buf[n:])
			n += m
			if err == io.EOF {
				last = true
				break
			}
			if err != nil {
				c.err = err
				close(c.done)
				send(ctx, ordered, c)
				return
			}
			if k := bytes.LastIndexByte(buf[:n], '\n'); k >= 0 {
				carry = append(carry, buf[k+1:n]...)
				n = k + 1
				break
			}
			if n >= maxLineLen {
				c.err = errLineTooLong
				close(c.done)
				send(ctx, ordered, c)
				return
			}
			// One line fills the whole buffer: grow it rather than split
			// the line.
			nb := make([]byte, 2*len(buf))
			copy(nb, buf[:n])
			buf, c.buf = nb, nb
		}
		c.data = buf[:n]
		if !send(ctx, ordered, c) || !send(ctx, work, c) || last {
			return
		}
	}
}

func send(ctx context.Context, ch chan<- *chunk, c *chunk) bool {
	select {
	case ch <- c:
		return true
	case <-ctx.Done():
		return false
	}
}

// fill reads until p is full or the input ends. Unlike io.ReadFull it keeps
// io.ErrUnexpectedEOF from a decompressor distinct from a clean end.
func fill(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// nthEntryLine returns the 1-based line of the k-th content line (neither
// blank nor comment) of data. It runs only on the error path.
func nthEntryLine(data []byte, k int64) int64 {
	var line int64
	for len(data) > 0 {
		line++
		end := bytes.IndexByte(data, '\n')
		l := data
		if end >= 0 {
			l, data = data[:end], data[end+1:]
		} else {
			data = nil
		}
		t := bytes.TrimLeft(l, " \t\r")
		if len(t) == 0 || t[0] == '#' || t[0] == '%' {
			continue
		}
		if k--; k == 0 {
			return line
		}
	}
	return line
}

// lineAt returns the 1-based line l of data.
func lineAt(data []byte, l int64) []byte {
	for ; l > 1 && len(data) > 0; l-- {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			return nil
		}
		data = data[end+1:]
	}
	if end := bytes.IndexByte(data, '\n'); end >= 0 {
		data = data[:end]
	}
	return data
}
