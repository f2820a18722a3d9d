package edgeio

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

func TestMatrixMarket(t *testing.T) {
	tests := []struct {
		name, in string
		want     []graph.Edge
		declared uint64
		lines    int64
		comments int64
	}{
		{"pattern general", "%%MatrixMarket matrix coordinate pattern general\n% a comment\n3 3 3\n1 2\n2 3\n3 1\n",
			ed(0, 1, 1, 2, 2, 0), 3, 6, 2},
		{"real symmetric crlf", "%%MatrixMarket matrix coordinate real symmetric\r\n4 4 2\r\n2 1 0.5\r\n4 3 -1e3\r\n",
			ed(1, 0, 3, 2), 4, 4, 1},
		{"integer rectangular", "%%matrixmarket MATRIX Coordinate Integer General\n\n2 5 2\n1 5 7\n2 1 8\n",
			ed(0, 4, 1, 0), 5, 5, 1},
		{"empty body", "%%MatrixMarket matrix coordinate pattern symmetric\n10 10 0\n", nil, 10, 2, 1},
		{"comments in body", "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n% mid\n\n2 1\n",
			ed(0, 1, 1, 0), 2, 6, 2},
	}
	for _, tc := range tests {
		for _, ck := range chunkings {
			t.Run(fmt.Sprintf("%s/chunk%d-w%d", tc.name, ck.size, ck.workers), func(t *testing.T) {
				got, st, err := readString(t, tc.in, "m.mtx", ReadOptions{chunkSize: ck.size, Workers: ck.workers})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("edges %v, want %v", got, tc.want)
				}
				if st.Format != FormatMTX || st.DeclaredVertices != tc.declared || st.Lines != tc.lines || st.Comments != tc.comments || st.Edges != int64(len(tc.want)) {
					t.Fatalf("stats %+v", st)
				}
			})
		}
	}
}

func TestMatrixMarketErrors(t *testing.T) {
	const banner = "%%MatrixMarket matrix coordinate pattern general\n"
	tests := []struct {
		name, in string
		line     int64 // 0: not a line error
		want     string
		badLine  bool
	}{
		{"array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "array (dense) format", false},
		{"short banner", "%%MatrixMarket matrix coordinate\n", 1, "needs 5 words", false},
		{"bad field", "%%MatrixMarket matrix coordinate bogus general\n", 1, "field \"bogus\"", false},
		{"bad symmetry", "%%MatrixMarket matrix coordinate real odd\n", 1, "symmetry \"odd\"", false},
		{"vector", "%%MatrixMarket vector coordinate real general\n", 1, "object \"vector\"", false},
		{"no size line", banner + "% only comments\n", 0, "ends before its size line", false},
		{"size two fields", banner + "3 3\n", 2, "needs 3 numbers", false},
		{"size not numeric", banner + "3 x 3\n", 2, `"x" is not a non-negative integer`, false},
		{"size negative", banner + "3 3 -1\n", 2, "negative id", false},
		{"index zero", banner + "3 3 2\n1 2\n0 1\n", 4, "row index 0 (Matrix Market indices start at 1)", true},
		{"column zero", banner + "3 3 1\n1 0\n", 3, "column index 0", true},
		{"row too big", banner + "3 4 2\n1 2\n4 1\n", 4, "row index 4 above the declared 3 rows", true},
		{"column too big", banner + "3 4 1\n1 5\n", 3, "column index 5 above the declared 4 columns", true},
		{"too many entries", banner + "3 3 2\n1 2\n% c\n2 3\n3 1\n1 1\n", 6, "entry 3, but the size line (line 2) declares 2 entries", false},
		{"too few entries", banner + "% c\n3 3 4\n1 2\n2 3\n", 3, "size line declares 4 entries but the file has 2", false},
		{"bad entry", banner + "3 3 1\n1 two\n", 3, `id "two"`, true},
		{"header words in body", banner + "3 3 1\nrow col\n1 2\n", 3, `id "row"`, true},
		{"forced mtx without banner", "1 2\n", 1, "not a Matrix Market file", false},
	}
	for _, tc := range tests {
		for _, ck := range chunkings {
			t.Run(fmt.Sprintf("%s/chunk%d-w%d", tc.name, ck.size, ck.workers), func(t *testing.T) {
				_, _, err := readString(t, tc.in, "m.mtx", ReadOptions{Format: FormatMTX, chunkSize: ck.size, Workers: ck.workers})
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "m.mtx") {
					t.Fatalf("got %v, want an error naming m.mtx containing %q", err, tc.want)
				}
				var pe *ParseError
				if tc.line == 0 {
					return
				}
				if !errors.As(err, &pe) || pe.Line != tc.line || pe.BadLine != tc.badLine {
					t.Fatalf("got %#v, want a ParseError at line %d (bad line %v)", err, tc.line, tc.badLine)
				}
			})
		}
	}
}

func TestMatrixMarketSkipBadCountsEntries(t *testing.T) {
	// A skipped entry still counts against nnz: the size line describes the
	// file, not what survived.
	in := "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n9 9\n2 3\n"
	got, st, err := readString(t, in, "m.mtx", ReadOptions{SkipBadLines: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || st.BadLines != 1 {
		t.Fatalf("%d edges, %d bad lines; want 2, 1", len(got), st.BadLines)
	}
}
