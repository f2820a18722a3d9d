package edgeio

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/trigrid/trigrid/graph"
)

// readMETIS reads a METIS graph file: `%` comment lines anywhere, a header
// line `n m [fmt [ncon]]`, then one line per vertex, in order, listing its
// neighbours (1-based; a blank line is a vertex without neighbours).
// fmt's digits say whether each line starts with a vertex size (100s) and
// ncon vertex weights (10s), and whether each neighbour is followed by an
// edge weight (1s); sizes and weights are skipped. Vertex i becomes id
// i-1 and every neighbour entry an edge. The file must have exactly n
// vertex lines and 2m neighbour entries, as METIS itself requires; any
// mismatch is an error naming the line. SkipBadLines does not apply: every
// line is a vertex.
func readMETIS(ctx context.Context, r io.Reader, name string, opts ReadOptions, st *ReadStats, fn func([]graph.Edge) error, progress func()) error {
	s := newFieldScanner(r, false)
	perr := func(text, format string, args ...any) error {
		return &ParseError{Path: name, Line: s.line, Text: quoteText([]byte(text)), Reason: fmt.Sprintf(format, args...)}
	}
	h, err := readMETISHeader(s, name, st, perr)
	if err != nil {
		return err
	}
	n, m, lead, hasEWeights, hasSize := h.n, h.m, h.lead, h.eWeights, h.size
	hdrLine, hdrText := h.line, h.text
	st.DeclaredVertices = n
	b := newBatcher(opts, fn, progress)
	var vertex, entries uint64
	for vertex < n {
		if vertex&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if !s.nextLine() {
			if s.Err() != nil {
				return s.readErr(name)
			}
			return &ParseError{Path: name, Line: hdrLine, Text: quoteText([]byte(hdrText)),
				Reason: fmt.Sprintf("the header declares %d vertices but the file has %d vertex lines (to line %d)", n, vertex, s.line)}
		}
		if s.first() == '%' {
			st.Comments++
			continue
		}
		u := vertex
		vertex++
		for k := uint64(0); k < lead; k++ {
			if s.field() == nil {
				if s.Err() != nil {
					return s.readErr(name)
				}
				return perr("", "vertex %d: missing its %s (the header's fmt asks for them)", vertex, leadName(hasSize, k))
			}
		}
		for {
			tok := s.field()
			if tok == nil {
				break
			}
			v, reason, ok := parseIndex(tok, n)
			if !ok {
				return perr(string(tok), "vertex %d: neighbour %s", vertex, reason)
			}
			if hasEWeights && s.field() == nil {
				if s.Err() != nil {
					return s.readErr(name)
				}
				return perr(string(tok), "vertex %d: neighbour %d has no edge weight (the header's fmt asks for one after each neighbour)", vertex, v+1)
			}
			entries++
			if err := b.add(u, v); err != nil {
				return err
			}
		}
		if s.Err() != nil {
			return s.readErr(name)
		}
	}
	// After the vertices, only blank and comment lines.
	for s.nextLine() {
		switch s.first() {
		case '\n':
			continue
		case '%':
			st.Comments++
			continue
		}
		return perr(string(s.field()), "a line after the %d vertex lines the header (line %d) declares", n, hdrLine)
	}
	if s.Err() != nil {
		return s.readErr(name)
	}
	if entries != 2*m {
		return &ParseError{Path: name, Line: hdrLine, Text: quoteText([]byte(hdrText)),
			Reason: fmt.Sprintf("the header declares %d edges but the vertex lines list %d neighbours, not %d (each edge is listed by both its ends)", m, entries, 2*m)}
	}
	if err := b.flush(); err != nil {
		return err
	}
	st.Lines = s.line
	st.Edges = b.n
	return nil
}

// metisHeader is what a METIS header line declares: n vertices, m edges,
// lead fields (size, weights) before each vertex line's neighbours, and
// whether each neighbour is followed by an edge weight.
type metisHeader struct {
	n, m     uint64
	lead     uint64
	size     bool
	eWeights bool
	line     int64
	text     string
}

// readMETISHeader reads up to and including the header: the first line
// that is neither blank nor a comment.
func readMETISHeader(s *fieldScanner, name string, st *ReadStats, perr func(text, format string, args ...any) error) (metisHeader, error) {
	// The header: the first line that is neither blank nor a comment.
	var h0 metisHeader
	var hdr [][]byte
	for len(hdr) == 0 {
		if !s.nextLine() {
			if err := s.Err(); err != nil {
				return h0, s.readErr(name)
			}
			return h0, fmt.Errorf("graph/edgeio: %s: METIS file without a header line (n m [fmt [ncon]])", name)
		}
		if s.first() == '%' {
			st.Comments++
			continue
		}
		for f := s.field(); f != nil; f = s.field() {
			hdr = append(hdr, append([]byte(nil), f...))
		}
		if s.err != nil && s.err != io.EOF {
			return h0, s.readErr(name)
		}
	}
	h := metisHeader{line: s.line, text: string(joinFields(hdr))}
	hdrText := h.text
	if len(hdr) < 2 || len(hdr) > 4 {
		return h0, perr(hdrText, "METIS header needs 2 to 4 numbers (n m [fmt [ncon]]), found %d fields", len(hdr))
	}
	var nums [4]uint64
	for k, tok := range hdr {
		v, reason, ok := parseID(tok)
		if !ok {
			return h0, perr(hdrText, "METIS header: %s", reason)
		}
		nums[k] = v
	}
	h.n, h.m = nums[0], nums[1]
	var hasVWeights bool
	ncon := uint64(1)
	if len(hdr) >= 3 {
		f := string(hdr[2])
		if len(f) > 3 || !onlyBinaryDigits(f) {
			return h0, perr(hdrText, "METIS fmt %q: want up to three digits, each 0 or 1 (vertex sizes, vertex weights, edge weights)", f)
		}
		f = strings.Repeat("0", 3-len(f)) + f
		h.size, hasVWeights, h.eWeights = f[0] == '1', f[1] == '1', f[2] == '1'
	}
	if len(hdr) == 4 {
		ncon = nums[3]
		if !hasVWeights || ncon == 0 {
			return h0, perr(hdrText, "METIS ncon %d needs vertex weights in fmt (its middle digit 1) and at least 1", ncon)
		}
	}
	if !hasVWeights {
		ncon = 0
	}
	h.lead = ncon
	if h.size {
		h.lead++
	}
	return h, nil
}

func leadName(hasSize bool, k uint64) string {
	if hasSize && k == 0 {
		return "vertex size"
	}
	return "vertex weights"
}

func onlyBinaryDigits(s string) bool {
	for _, c := range s {
		if c != '0' && c != '1' {
			return false
		}
	}
	return true
}

func joinFields(fs [][]byte) []byte {
	var b []byte
	for i, f := range fs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, f...)
	}
	return b
}
