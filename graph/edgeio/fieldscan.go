package edgeio

import (
	"errors"
	"fmt"
	"io"

	"github.com/trigrid/trigrid/graph"
)

// fieldScanner reads text one line and one field at a time, for the
// formats whose lines have no length bound (an adjacency line lists every
// neighbour of a vertex): memory is its buffer, whatever the line length.
// Lines end with '\n' (the input has been through a crReader); '\r' is a
// blank. Fields are separated by blanks and, with commas set, commas.
type fieldScanner struct {
	r      io.Reader
	buf    []byte
	i, n   int
	err    error // r's error once met (io.EOF at the end)
	commas bool
	line   int64 // the current line, 1-based; 0 before the first
	inLine bool  // the current line's '\n' is not consumed yet
}

// maxField bounds a field: no id, weight or keyword is longer, and a
// longer run of bytes is not text of these formats.
const maxField = 4096

var errFieldTooLong = errors.New("a field is longer than 4096 bytes: not a text graph file?")

func newFieldScanner(r io.Reader, commas bool) *fieldScanner {
	return &fieldScanner{r: r, buf: make([]byte, sniffSize), commas: commas}
}

// fill makes s.i < s.n unless the input has ended; keep is the start of
// bytes that must stay in the buffer (a field being read), moved to its
// front (keep = s.n keeps nothing). It returns false at the end of the
// input or on a read error.
func (s *fieldScanner) fill(keep int) bool {
	if s.i < s.n {
		return true
	}
	if s.err != nil {
		return false
	}
	copy(s.buf, s.buf[keep:s.n])
	s.n -= keep
	s.i -= keep
	for s.i >= s.n {
		if s.err != nil {
			return false
		}
		if s.n == len(s.buf) {
			s.err = errFieldTooLong
			return false
		}
		m, err := s.r.Read(s.buf[s.n:])
		s.n += m
		if err != nil {
			s.err = err
		}
	}
	return true
}

// Err returns the read error that ended the input, nil at a clean end.
func (s *fieldScanner) Err() error {
	if s.err == io.EOF {
		return nil
	}
	return s.err
}

func (s *fieldScanner) isSep(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || (s.commas && c == ',')
}

// nextLine moves to the start of the next line, skipping what is left of
// the current one, and reports whether there is one.
func (s *fieldScanner) nextLine() bool {
	for s.inLine {
		if !s.fill(s.n) {
			s.inLine = false
			return false
		}
		for s.i < s.n {
			c := s.buf[s.i]
			s.i++
			if c == '\n' {
				s.inLine = false
				break
			}
		}
	}
	if !s.fill(s.n) {
		return false
	}
	s.line++
	s.inLine = true
	return true
}

// first returns the first byte of the current line that is not a blank,
// without consuming it; '\n' when the line has none.
func (s *fieldScanner) first() byte {
	for s.inLine && s.fill(s.n) {
		c := s.buf[s.i]
		if c != ' ' && c != '\t' && c != '\r' {
			return c
		}
		s.i++
	}
	return '\n'
}

// field returns the next field of the current line, valid until the next
// call; nil at the line's end (its '\n' is then consumed) or on an error
// (see Err).
func (s *fieldScanner) field() []byte {
	if !s.inLine {
		return nil
	}
	for {
		if !s.fill(s.n) {
			s.inLine = false
			return nil
		}
		c := s.buf[s.i]
		if c == '\n' {
			s.i++
			s.inLine = false
			return nil
		}
		if !s.isSep(c) {
			break
		}
		s.i++
	}
	start := s.i
	for {
		for s.i < s.n {
			c := s.buf[s.i]
			if c == '\n' || s.isSep(c) {
				return s.buf[start:s.i]
			}
			s.i++
		}
		if s.i-start > maxField {
			s.err = errFieldTooLong
			s.inLine = false
			return nil
		}
		n0 := s.n
		if !s.fill(start) {
			if s.err != nil && s.err != io.EOF {
				s.inLine = false
				return nil
			}
			// The input ends inside the field: it ends the line too.
			return s.buf[s.i-(n0-start) : s.i]
		}
		start = s.i - (n0 - start)
	}
}

// readErr turns the scanner's error into the read's error.
func (s *fieldScanner) readErr(name string) error {
	if errors.Is(s.err, errFieldTooLong) {
		return fmt.Errorf("graph/edgeio: %s:%d: %w", name, s.line, s.err)
	}
	return fmt.Errorf("graph/edgeio: %s: reading: %w", name, s.err)
}

// parseIndex parses a 1-based index of at most bound (a vertex of a METIS
// or DIMACS file) into a 0-based id.
func parseIndex(tok []byte, bound uint64) (uint64, string, bool) {
	id, reason, ok := parseID(tok)
	if !ok {
		return 0, reason, false
	}
	if id == 0 {
		return 0, "vertex 0 (vertices are numbered from 1)", false
	}
	if id > bound {
		return 0, fmt.Sprintf("vertex %d above the declared %d vertices", id, bound), false
	}
	return id - 1, "", true
}

// batcher collects edges and hands them to fn in batches, for the readers
// that produce edges one at a time.
type batcher struct {
	buf   []graph.Edge
	limit int
	keep  bool // fn keeps its batches: each batch is a new slice
	fn    func([]graph.Edge) error
	after func() // called after each batch (progress)
	n     int64  // edges handed over
}

func newBatcher(opts ReadOptions, fn func([]graph.Edge) error, progress func()) *batcher {
	limit := binBatchEdges
	if opts.chunkSize > 0 {
		limit = max(1, opts.chunkSize/16)
	}
	return &batcher{limit: limit, keep: opts.keepBatches, fn: fn, after: progress}
}

func (b *batcher) add(u, v uint64) error {
	b.buf = append(b.buf, graph.Edge{U: u, V: v})
	if len(b.buf) >= b.limit {
		return b.flush()
	}
	return nil
}

func (b *batcher) flush() error {
	if len(b.buf) == 0 {
		return nil
	}
	b.n += int64(len(b.buf))
	if err := b.fn(b.buf); err != nil {
		return err
	}
	if b.keep {
		b.buf = nil
	} else {
		b.buf = b.buf[:0]
	}
	b.after()
	return nil
}
