package edgeio

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/trigrid/trigrid/graph"
)

// lineParser holds what a chunk parse needs to know about the file. It is
// read-only once parsing starts, so workers share it.
type lineParser struct {
	mtx        bool   // Matrix Market body: 1-based, bounded indices, no header line
	rows, cols uint64 // Matrix Market size line
	nnz        uint64
	sizeLine   int64 // line of the size line, for count mismatch errors
	sizeText   string
	skipBad    bool
}

// chunkResult is what parsing one chunk produced. Line numbers in it are
// relative to the chunk (1 = its first line); the collector adds the number
// of lines in earlier chunks.
type chunkResult struct {
	edges []graph.Edge
	// p32, when not nil, receives the edges instead of edges, as 32-bit
	// pairs (u, v); a first id of 2^32 or more stops the parse with wide
	// set (the caller reads the file again into edges).
	p32      []uint32
	wide     bool
	lines    int64
	comments int64
	bad      int64
	// content is true once the chunk has a line that is neither blank nor a
	// comment (an edge, a bad line or a header candidate).
	content bool
	// header is set when the chunk's first content line is not an edge but
	// looks like a column header. Only the collector knows whether any
	// earlier chunk had content, so it decides between header and bad line.
	header *ParseError
	// mistyped is set with header when the line is digits but for one
	// stray character ("O 2"): a first line like that is a bad line, not a
	// header.
	mistyped bool
	// err is the first bad line when bad lines are not skipped; parsing
	// stops there.
	err *ParseError
}

func (r *chunkResult) reset() {
	*r = chunkResult{edges: r.edges[:0]}
}

// n is the number of edges parsed.
func (r *chunkResult) n() int { return len(r.edges) + len(r.p32)/2 }

// isSep reports the bytes that separate fields. '\r' is a separator so that
// CRLF needs no special case: "1 2\r\n" is two fields and a separator.
func isSep(c byte) bool { return c == ' ' || c == '\t' || c == ',' || c == '\r' }

// parse parses a chunk of whole lines (the last may lack its '\n') into
// res. It never allocates per line: edges are appended to res.edges, which
// keeps its capacity across chunks.
func (p *lineParser) parse(data []byte, res *chunkResult) {
	edges, p32 := res.edges, res.p32
	narrow := p32 != nil
	n := len(data)
	i := 0
	var line int64
	for i < n {
		line++
		start := i
		for i < n && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r') {
			i++
		}
		if i == n {
			break // trailing blanks without a newline
		}
		c := data[i]
		if c == '\n' {
			i++
			continue
		}
		if c == '#' || c == '%' {
			res.comments++
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				i = n
				break
			}
			i += j + 1
			continue
		}

		// First id: digits accumulate without an overflow check; more than
		// 19 digits go to the careful path.
		f0 := i
		var u uint64
		for i < n {
			d := data[i] - '0'
			if d > 9 {
				break
			}
			u = u*10 + uint64(d)
			i++
		}
		f0end := i
		if f0end-f0 > 19 || f0end == f0 {
			goto slow
		}
		if i < n && isSep(data[i]) {
			i++
			for i < n && isSep(data[i]) {
				i++
			}
		} else {
			goto slow
		}
		{
			f1 := i
			var v uint64
			for i < n {
				d := data[i] - '0'
				if d > 9 {
					break
				}
				v = v*10 + uint64(d)
				i++
			}
			if i-f1 > 19 || i == f1 || (i < n && data[i] != '\n' && !isSep(data[i])) {
				goto slow
			}
			if p.mtx {
				if u == 0 || v == 0 || u > p.rows || v > p.cols {
					goto slow
				}
				u--
				v--
			}
			if narrow {
				if (u|v)>>32 != 0 {
					res.wide = true
					break
				}
				p32 = append(p32, uint32(u), uint32(v))
			} else {
				edges = append(edges, graph.Edge{U: u, V: v})
			}
			res.content = true
			// Skip extra columns and the line ending.
			if i < n && data[i] == '\n' {
				i++
				continue
			}
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				i = n
				break
			}
			i += j + 1
			continue
		}

	slow:
		// Rare lines (long ids, bad lines) are parsed again carefully so
		// that the fast path above stays branch-light.
		var stop bool
		edges, p32, i, stop = p.slowLine(data, start, line, res, edges, p32)
		if stop {
			if res.err != nil {
				return
			}
			break
		}
	}
	res.edges, res.p32 = edges, p32
	res.lines = line
}

// slowLine parses the line that starts at data[start] carefully and
// returns the grown edge buffers and the offset of the next line. stop is
// set when parsing must end: a wide id in a narrow parse (res.wide), or a bad
// line that is not skipped (res.err, with res's buffers and line count set).
func (p *lineParser) slowLine(data []byte, start int, line int64, res *chunkResult, edges []graph.Edge, p32 []uint32) ([]graph.Edge, []uint32, int, bool) {
	n := len(data)
	end := bytes.IndexByte(data[start:], '\n')
	if end < 0 {
		end = n
	} else {
		end += start
	}
	e, reason, ok := p.parseLineSlow(data[start:end])
	switch {
	case ok && p32 != nil:
		if (e.U|e.V)>>32 != 0 {
			res.wide = true
			return edges, p32, end, true
		}
		p32 = append(p32, uint32(e.U), uint32(e.V))
	case ok:
		edges = append(edges, e)
	default:
		pe := &ParseError{Line: line, Text: quoteText(data[start:end]), Reason: reason, BadLine: true}
		if !p.mtx && !res.content && looksLikeHeader(data[start:end]) {
			res.header = pe
			res.mistyped = looksLikeMistypedEdge(data[start:end])
		} else if p.skipBad {
			res.bad++
		} else {
			res.err = pe
			res.edges, res.p32 = edges, p32
			res.lines = line
			return edges, p32, end, true
		}
	}
	res.content = true
	if end < n {
		end++
	}
	return edges, p32, end, false
}

// looksLikeHeader accepts a line whose first field starts with something
// other than a digit or sign: "FromNodeId ToNodeId", "src,dst". "1 x" or
// "-1 2" are bad edges, not headers, and so is a line holding a control
// byte other than tab and CR (NUL, ESC, DEL...): binary data, or UTF-16
// text, is no column header.
func looksLikeHeader(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\t' && c != '\r') || c == 0x7f {
			return false
		}
	}
	for _, c := range b {
		if c == ' ' || c == '\t' || c == '\r' {
			continue
		}
		return !(c >= '0' && c <= '9') && c != '-' && c != '+' && c != ','
	}
	return false
}

// looksLikeMistypedEdge reports a line whose first two fields are digits
// but for exactly one character, as in "O 2" typed for "0 2" or "l 5" for
// "1 5". Real headers ("FromNodeId ToNodeId", "src,dst", "u v") have more
// than one letter. Characters are counted as UTF-8 runes, so a stray "Ο"
// (Greek omicron) counts once.
func looksLikeMistypedEdge(b []byte) bool {
	stray := 0
	for k := 0; k < 2; k++ {
		for len(b) > 0 && isSep(b[0]) {
			b = b[1:]
		}
		j := 0
		for j < len(b) && !isSep(b[j]) {
			j++
		}
		if j == 0 {
			return false
		}
		for tok := b[:j]; len(tok) > 0; {
			if tok[0] >= '0' && tok[0] <= '9' {
				tok = tok[1:]
				continue
			}
			_, size := utf8.DecodeRune(tok)
			tok = tok[size:]
			stray++
		}
		b = b[j:]
	}
	return stray == 1
}

// parseLineSlow parses one line (without its '\n') with full checking and
// explains what is wrong when it is not an edge.
func (p *lineParser) parseLineSlow(b []byte) (graph.Edge, string, bool) {
	var ids [2]uint64
	rest := b
	for k := 0; k < 2; k++ {
		j := 0
		if k == 0 {
			for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t' || rest[j] == '\r') {
				j++
			}
		} else {
			for j < len(rest) && isSep(rest[j]) {
				j++
			}
		}
		rest = rest[j:]
		j = 0
		for j < len(rest) && !isSep(rest[j]) {
			j++
		}
		tok := rest[:j]
		rest = rest[j:]
		if len(tok) == 0 {
			if k == 1 {
				return graph.Edge{}, "not an edge: only one column (an edge needs two ids)", false
			}
			return graph.Edge{}, "not an edge: no ids", false
		}
		id, reason, ok := parseID(tok)
		if !ok {
			return graph.Edge{}, reason, false
		}
		ids[k] = id
	}
	if p.mtx {
		for k, bound := range [2]uint64{p.rows, p.cols} {
			what := [2]string{"row", "column"}[k]
			if ids[k] == 0 {
				return graph.Edge{}, fmt.Sprintf("%s index 0 (Matrix Market indices start at 1)", what), false
			}
			if ids[k] > bound {
				return graph.Edge{}, fmt.Sprintf("%s index %d above the declared %d %ss", what, ids[k], bound, what), false
			}
			ids[k]--
		}
	}
	return graph.Edge{U: ids[0], V: ids[1]}, "", true
}

// parseID parses a non-negative decimal id up to 2^64-1.
func parseID(tok []byte) (uint64, string, bool) {
	if tok[0] == '-' && len(tok) > 1 && tok[1] >= '0' && tok[1] <= '9' {
		return 0, "negative id " + quoteToken(tok), false
	}
	var v uint64
	for _, c := range tok {
		d := c - '0'
		if d > 9 {
			return 0, "not an edge: id " + quoteToken(tok) + " is not a non-negative integer", false
		}
		if v > (1<<64-1)/10 || (v == (1<<64-1)/10 && uint64(d) > (1<<64-1)%10) {
			for _, c := range tok {
				if c-'0' > 9 {
					return 0, "not an edge: id " + quoteToken(tok) + " is not a non-negative integer", false
				}
			}
			return 0, "id above 2^64-1: " + quoteToken(tok), false
		}
		v = v*10 + uint64(d)
	}
	return v, "", true
}
