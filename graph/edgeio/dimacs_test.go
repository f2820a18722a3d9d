package edgeio

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestDIMACS: arcs (sp) or edges (edge, col) between 1-based vertices.
func TestDIMACS(t *testing.T) {
	tests := []struct {
		name, in string
		want     []uint64
	}{
		{"sp", "c 9th DIMACS\np sp 3 4\nc arcs\na 1 2 7\na 2 1 7\na 2 3 1\na 3 1 2\n", []uint64{0, 1, 1, 0, 1, 2, 2, 0}},
		{"edge", "c clique\np edge 3 3\ne 1 2\ne 2 3\ne 3 1\n", []uint64{0, 1, 1, 2, 2, 0}},
		{"col, crlf, blank", "p col 2 1\r\n\r\ne 2 1\r\n", []uint64{1, 0}},
		{"comment without text", "c\nc\np sp 2 1\na 1 2 1\n", []uint64{0, 1}},
		{"no arcs", "p sp 5 0\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, st, err := readBoth(t, []byte(tc.in), "g.gr", ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, x := range e {
				got = append(got, x.U, x.V)
			}
			if !reflect.DeepEqual(got, tc.want) || st.Format != FormatDIMACS {
				t.Fatalf("got %v, stats %+v; want %v", got, st, tc.want)
			}
		})
	}
}

func TestDIMACSErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int64 // 0: no line
		has      string
	}{
		{"fewer arcs", "p sp 3 3\na 1 2 1\na 2 3 1\n", 1, "declares 3 arcs but the file has 2"},
		{"more arcs", "p sp 3 1\na 1 2 1\na 2 3 1\n", 3, "arc 2, but the problem line (line 1) declares 1"},
		{"vertex 0", "p sp 3 1\na 0 2 1\n", 2, "vertex 0"},
		{"vertex above n", "p sp 3 1\na 1 4 1\n", 2, "above the declared 3 vertices"},
		{"arc before p", "c x\na 1 2 1\np sp 2 1\n", 2, "before the problem line"},
		{"second p", "p sp 2 0\np sp 2 0\n", 2, "a second problem line"},
		{"max flow", "p max 4 5\nn 1 s\n", 1, `problem "max"`},
		{"e in sp", "p sp 2 1\ne 1 2\n", 2, `wants "a" lines`},
		{"unknown line", "p sp 2 1\nx 1 2\n", 2, `kind "x"`},
		{"short p", "p sp 2\n", 1, "needs 4 fields"},
		{"one vertex", "p sp 2 1\na 1\n", 2, "needs two vertices"},
		{"no p", "c only\n", 0, "without a problem line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readBoth(t, []byte(tc.in), "g.gr", ReadOptions{})
			var pe *ParseError
			if err == nil || !strings.Contains(err.Error(), tc.has) || !strings.Contains(err.Error(), "g.gr") ||
				(tc.line > 0 && (!errors.As(err, &pe) || pe.Line != tc.line)) {
				t.Fatalf("got %v, want an error at g.gr:%d saying %q", err, tc.line, tc.has)
			}
		})
	}
	// A bad arc given SkipBadLines is skipped but still one of the m.
	e, st, err := readBoth(t, []byte("p sp 3 2\na 1 x 1\na 2 3 1\n"), "g.gr", ReadOptions{SkipBadLines: true})
	if err != nil || !reflect.DeepEqual(e, ed(1, 2)) || st.BadLines != 1 {
		t.Fatalf("%v %+v %v", e, st, err)
	}
}
