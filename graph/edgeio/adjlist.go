package edgeio

import (
	"context"
	"io"
	"strings"

	"github.com/trigrid/trigrid/graph"
)

// readAdjList reads an adjacency list: `v n1 n2 ...` per line, an edge
// from v to each ni, fields separated as in an edge list (blanks and
// commas), ids as in an edge list. A line with v alone gives no edge.
// Blank lines and lines starting with '#' or '%' are skipped. A line with
// a field that is not an id is a bad line: an error, or skipped whole
// with SkipBadLines.
func readAdjList(ctx context.Context, r io.Reader, name string, opts ReadOptions, st *ReadStats, fn func([]graph.Edge) error, progress func()) error {
	s := newFieldScanner(r, true)
	b := newBatcher(opts, fn, progress)
	// With SkipBadLines, line holds the edges of the current line until
	// it has all parsed, so that a bad line adds none.
	var line []graph.Edge
	for s.nextLine() {
		if s.line&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		switch s.first() {
		case '\n':
			continue
		case '#', '%':
			st.Comments++
			continue
		}
		line = line[:0]
		var u uint64
		bad := ""
		var badTok []byte
		for k := 0; ; k++ {
			tok := s.field()
			if tok == nil {
				if k == 0 {
					bad = "no ids" // separators alone
				}
				break
			}
			id, reason, ok := parseID(tok)
			if !ok {
				bad, badTok = reason, tok
				break
			}
			switch {
			case k == 0:
				u = id
			case opts.SkipBadLines:
				line = append(line, graph.Edge{U: u, V: id})
			default:
				if err := b.add(u, id); err != nil {
					return err
				}
			}
		}
		if s.Err() != nil {
			return s.readErr(name)
		}
		if bad != "" {
			if !opts.SkipBadLines {
				return &ParseError{Path: name, Line: s.line, Text: quoteText(badTok),
					Reason: "not an adjacency line: " + strings.TrimPrefix(bad, "not an edge: "), BadLine: true}
			}
			st.BadLines++
			continue
		}
		for _, e := range line {
			if err := b.add(e.U, e.V); err != nil {
				return err
			}
		}
		if len(line) > 1<<20 {
			line = nil // a hub's line is not kept for the next
		}
	}
	if s.Err() != nil {
		return s.readErr(name)
	}
	if err := b.flush(); err != nil {
		return err
	}
	st.Lines = s.line
	st.Edges = b.n
	return nil
}
