package edgeio

import (
	"strconv"
	"strings"

	"github.com/trigrid/trigrid/graph"
)

// refResult is what refParse, an obviously correct line-at-a-time parser
// built on strings and strconv, finds in an edge list.
type refResult struct {
	edges                             []graph.Edge
	lines, comments, headers, badLine int64 // badLine: first bad line (1-based), 0 if none
	bad                               int64
}

func isRefSep(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' }

// refParse parses text with the documented edge list rules; a CR not
// followed by LF ends a line like LF. It does not support a leading comma,
// which the fast parser rejects as "no ids".
func refParse(text string, skipBad bool) refResult {
	var r refResult
	lines := strings.Split(refLoneCR(text), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	content := false
	headerLine := 0
	for i, l := range lines {
		r.lines++
		t := strings.TrimLeft(l, " \t\r")
		if t == "" {
			continue
		}
		if t[0] == '#' || t[0] == '%' {
			r.comments++
			continue
		}
		f := strings.FieldsFunc(l, isRefSep)
		ok := len(f) >= 2
		var u, v uint64
		if ok {
			var e1, e2 error
			u, e1 = strconv.ParseUint(f[0], 10, 64)
			v, e2 = strconv.ParseUint(f[1], 10, 64)
			ok = e1 == nil && e2 == nil
		}
		switch {
		case ok:
			r.edges = append(r.edges, graph.Edge{U: u, V: v})
		case !content && !strings.ContainsAny(t[:1], "0123456789-+") && !refMistyped(f) && !refControl(l):
			r.headers++
			headerLine = i + 1
		case skipBad:
			r.bad++
		default:
			if r.badLine == 0 {
				r.badLine = int64(i + 1)
			}
			return r
		}
		content = true
	}
	// A header is one only when edges follow it.
	if r.headers > 0 && len(r.edges) == 0 {
		r.headers = 0
		if skipBad {
			r.bad++
		} else {
			r.badLine = int64(headerLine)
		}
	}
	return r
}

// refControl reports a control byte other than tab and CR: a line with
// one is no header.
func refControl(l string) bool {
	return strings.ContainsFunc(l, func(r rune) bool { return (r < 0x20 && r != '\t' && r != '\r') || r == 0x7f })
}

// refMistyped reports fields whose first two hold exactly one rune that
// is not a decimal digit: an edge with a typo rather than a header.
func refMistyped(f []string) bool {
	if len(f) < 2 {
		return false
	}
	stray := 0
	for _, field := range f[:2] { // each on its own: two halves may join into one rune
		for _, r := range field {
			if r < '0' || r > '9' {
				stray++
			}
		}
	}
	return stray == 1
}

// ed builds edges from u, v pairs.
func ed(pairs ...uint64) []graph.Edge {
	e := make([]graph.Edge, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		e = append(e, graph.Edge{U: pairs[i], V: pairs[i+1]})
	}
	return e
}
