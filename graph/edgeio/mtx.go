package edgeio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// readMTXHeader consumes the banner, the comments and the size line of a
// Matrix Market file and returns a parser for its entries plus the number
// of lines consumed. Values are ignored whatever the field type, and a
// symmetric file yields its stored triangle only: cleaning symmetrizes.
func readMTXHeader(br *bufio.Reader, name string, st *ReadStats) (*lineParser, int64, error) {
	var line int64
	next := func() ([]byte, error) {
		b, err := br.ReadSlice('\n')
		if len(b) == 0 && err != nil {
			return nil, err
		}
		line++
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("graph/edgeio: %s:%d: Matrix Market header line longer than %d KiB", name, line, sniffSize>>10)
		}
		return bytes.TrimRight(b, "\r\n"), nil
	}
	perr := func(text []byte, format string, args ...any) error {
		return &ParseError{Path: name, Line: line, Text: quoteText(text), Reason: fmt.Sprintf(format, args...)}
	}

	banner, err := next()
	if err != nil {
		return nil, 0, fmt.Errorf("graph/edgeio: %s: reading Matrix Market banner: %w", name, err)
	}
	f := strings.Fields(strings.ToLower(string(banner)))
	if len(f) < 1 || f[0] != "%%matrixmarket" {
		return nil, 0, perr(banner, "not a Matrix Market file: the first line must start with %%%%MatrixMarket")
	}
	if len(f) != 5 {
		return nil, 0, perr(banner, "Matrix Market banner needs 5 words (%%%%MatrixMarket matrix coordinate <field> <symmetry>), found %d", len(f))
	}
	if f[1] != "matrix" {
		return nil, 0, perr(banner, "Matrix Market object %q is not supported (want matrix)", f[1])
	}
	if f[2] == "array" {
		return nil, 0, perr(banner, "Matrix Market array (dense) format is not an edge list; want coordinate")
	}
	if f[2] != "coordinate" {
		return nil, 0, perr(banner, "Matrix Market format %q is not supported (want coordinate)", f[2])
	}
	switch f[3] {
	case "pattern", "integer", "real", "complex":
	default:
		return nil, 0, perr(banner, "Matrix Market field %q is not one of pattern, integer, real, complex", f[3])
	}
	switch f[4] {
	case "general", "symmetric", "skew-symmetric", "hermitian":
	default:
		return nil, 0, perr(banner, "Matrix Market symmetry %q is not one of general, symmetric, skew-symmetric, hermitian", f[4])
	}
	st.Comments++ // the banner is a '%' line

	for {
		b, err := next()
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, 0, err
			}
			return nil, 0, fmt.Errorf("graph/edgeio: %s:%d: Matrix Market file ends before its size line: %w", name, line+1, err)
		}
		t := bytes.TrimLeft(b, " \t")
		if len(t) == 0 {
			continue
		}
		if t[0] == '%' {
			st.Comments++
			continue
		}
		p := &lineParser{mtx: true, sizeLine: line, sizeText: quoteText(b)}
		fs := bytes.Fields(t)
		if len(fs) != 3 {
			return nil, 0, perr(b, "Matrix Market size line needs 3 numbers (rows cols entries), found %d fields", len(fs))
		}
		var vals [3]uint64
		for k, tok := range fs {
			v, reason, ok := parseID(tok)
			if !ok {
				return nil, 0, perr(b, "Matrix Market size line: %s", strings.TrimPrefix(reason, "not an edge: id "))
			}
			vals[k] = v
		}
		p.rows, p.cols, p.nnz = vals[0], vals[1], vals[2]
		st.DeclaredVertices = max(p.rows, p.cols)
		st.Lines = line
		return p, line, nil
	}
}
