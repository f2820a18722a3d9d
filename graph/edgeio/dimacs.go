package edgeio

import (
	"context"
	"fmt"
	"io"

	"github.com/trigrid/trigrid/graph"
)

// readDIMACS reads a DIMACS graph: `c` comment lines, one problem line
// `p sp n m` (shortest paths, `.gr`) or `p edge n m` (`p col n m`;
// cliques and colouring), then m arc lines `a u v [w]` (for sp) or edge
// lines `e u v` (for edge), vertices numbered 1 to n. Vertex i becomes id
// i-1; weights are ignored. Blank lines are skipped. A line of another
// kind, a second problem line, an arc before the problem line or a number
// of arcs other than m is an error; a malformed arc is a bad line (an
// error, or skipped with SkipBadLines and still counted as one of the m).
func readDIMACS(ctx context.Context, r io.Reader, name string, opts ReadOptions, st *ReadStats, fn func([]graph.Edge) error, progress func()) error {
	s := newFieldScanner(r, false)
	b := newBatcher(opts, fn, progress)
	var n, m, arcs uint64
	var pLine int64
	var pText string
	var arcWord string
	perr := func(fields [][]byte, bad bool, format string, args ...any) error {
		return &ParseError{Path: name, Line: s.line, Text: quoteText(joinFields(fields)), Reason: fmt.Sprintf(format, args...), BadLine: bad}
	}
	var lf lineFields
	for s.nextLine() {
		if s.line&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if s.first() == 'c' {
			st.Comments++
			continue
		}
		fields := lf.read(s, 8)
		if s.Err() != nil {
			return s.readErr(name)
		}
		if len(fields) == 0 {
			continue
		}
		switch kind := string(fields[0]); {
		case kind == "p":
			if pLine != 0 {
				return perr(fields, false, "a second problem line (the first is line %d)", pLine)
			}
			if len(fields) != 4 {
				return perr(fields, false, "DIMACS problem line needs 4 fields (p sp n m), found %d", len(fields))
			}
			switch string(fields[1]) {
			case "sp":
				arcWord = "a"
			case "edge", "col":
				arcWord = "e"
			default:
				return perr(fields, false, "DIMACS problem %q is not a graph trigrid reads (want sp, edge or col)", fields[1])
			}
			var ok bool
			var reason string
			if n, reason, ok = parseID(fields[2]); !ok {
				return perr(fields, false, "DIMACS problem line: %s", reason)
			}
			if m, reason, ok = parseID(fields[3]); !ok {
				return perr(fields, false, "DIMACS problem line: %s", reason)
			}
			pLine, pText = s.line, quoteText(joinFields(fields))
			st.DeclaredVertices = n
		case kind == "a" || kind == "e":
			if pLine == 0 {
				return perr(fields, false, "an arc before the problem line (p sp n m)")
			}
			if kind != arcWord {
				return perr(fields, false, "a %q line in a file whose problem line (line %d) wants %q lines", kind, pLine, arcWord)
			}
			arcs++
			if arcs > m {
				return perr(fields, false, "arc %d, but the problem line (line %d) declares %d", arcs, pLine, m)
			}
			if len(fields) < 3 {
				if opts.SkipBadLines {
					st.BadLines++
					continue
				}
				return perr(fields, true, "an arc needs two vertices")
			}
			u, reason, ok := parseIndex(fields[1], n)
			var v uint64
			if ok {
				v, reason, ok = parseIndex(fields[2], n)
			}
			if !ok {
				if opts.SkipBadLines {
					st.BadLines++
					continue
				}
				return perr(fields, true, "%s", reason)
			}
			if err := b.add(u, v); err != nil {
				return err
			}
		default:
			return perr(fields, false, "a line of kind %q: a DIMACS graph has c, p and %s lines", fields[0], orA(arcWord))
		}
	}
	if s.Err() != nil {
		return s.readErr(name)
	}
	if pLine == 0 {
		return fmt.Errorf("graph/edgeio: %s: DIMACS file without a problem line (p sp n m)", name)
	}
	if arcs != m {
		return &ParseError{Path: name, Line: pLine, Text: pText,
			Reason: fmt.Sprintf("the problem line declares %d arcs but the file has %d", m, arcs)}
	}
	if err := b.flush(); err != nil {
		return err
	}
	st.Lines = s.line
	st.Edges = b.n
	return nil
}

func orA(w string) string {
	if w == "" {
		return "a"
	}
	return w
}

// lineFields holds the fields of one line in memory of its own, reused
// from line to line.
type lineFields struct {
	buf    []byte
	ends   []int
	fields [][]byte
}

// read returns up to max fields of s's current line (the rest of the line
// is left unread).
func (lf *lineFields) read(s *fieldScanner, max int) [][]byte {
	lf.buf, lf.ends, lf.fields = lf.buf[:0], lf.ends[:0], lf.fields[:0]
	for len(lf.ends) < max {
		f := s.field()
		if f == nil {
			break
		}
		lf.buf = append(lf.buf, f...)
		lf.ends = append(lf.ends, len(lf.buf))
	}
	start := 0
	for _, e := range lf.ends {
		lf.fields = append(lf.fields, lf.buf[start:e])
		start = e
	}
	return lf.fields
}
