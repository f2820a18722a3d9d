package edgeio

import (
	"fmt"
	"unicode/utf8"
)

// ParseError reports a line of a text file that could not be used. Line is
// 1-based and exact, whatever chunking the parser used.
type ParseError struct {
	Path   string // file name as given (or "stdin")
	Line   int64
	Text   string // the offending line (or field), truncated if long; "" names none
	Reason string
	// BadLine is true when ReadOptions.SkipBadLines would have skipped the
	// line instead of failing.
	BadLine bool
}

func (e *ParseError) Error() string {
	hint := ""
	if e.BadLine {
		hint = " (use --skip-bad-lines to skip such lines)"
	}
	if e.Text == "" {
		return fmt.Sprintf("graph/edgeio: %s:%d: %s%s", e.Path, e.Line, e.Reason, hint)
	}
	return fmt.Sprintf("graph/edgeio: %s:%d: %q: %s%s", e.Path, e.Line, e.Text, e.Reason, hint)
}

// maxQuoted bounds how much of a bad line goes into an error message: enough
// to recognise it, not a megabyte of binary garbage.
const maxQuoted = 80

// quoteText trims the line ending and truncates long lines at a rune
// boundary.
func quoteText(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	if len(b) <= maxQuoted {
		return string(b)
	}
	cut := maxQuoted
	for cut > maxQuoted-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + "..."
}

// quoteToken is quoteText for a single field inside a reason.
func quoteToken(b []byte) string {
	const maxTok = 40
	if len(b) > maxTok {
		return fmt.Sprintf("%q...", b[:maxTok])
	}
	return fmt.Sprintf("%q", b)
}
