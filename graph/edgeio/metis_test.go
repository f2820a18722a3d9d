package edgeio

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// readMETISString reads a METIS file in one batch and in tiny ones, which
// must agree, and flattens its edges.
func readMETISString(t *testing.T, in string) ([]uint64, ReadStats, error) {
	t.Helper()
	e, st, err := readBoth(t, []byte(in), "g.graph", ReadOptions{})
	var flat []uint64
	for _, x := range e {
		flat = append(flat, x.U, x.V)
	}
	return flat, st, err
}

// TestMETIS: every neighbour entry is an edge from its line's vertex,
// 1-based ids made 0-based; fmt's sizes and weights are skipped.
func TestMETIS(t *testing.T) {
	k4 := []uint64{0, 1, 0, 2, 0, 3, 1, 0, 1, 2, 1, 3, 2, 0, 2, 1, 2, 3, 3, 0, 3, 1, 3, 2}
	tests := []struct {
		name, in string
		want     []uint64
		n        uint64
	}{
		{"k4", "4 6\n2 3 4\n1 3 4\n1 2 4\n1 2 3\n", k4, 4},
		{"k4 fmt 0", "% c\n4 6 0\n2 3 4\n1 3 4\n1 2 4\n1 2 3\n", k4, 4},
		{"k4 edge weights", "4 6 1\n2 5 3 1 4 2\n1 5 3 1 4 1\n1 1 2 1 4 1\n1 2 2 1 3 1\n", k4, 4},
		{"k4 fmt 001", "4 6 001\n2 5 3 1 4 2\n1 5 3 1 4 1\n1 1 2 1 4 1\n1 2 2 1 3 1\n", k4, 4},
		{"k4 vertex weights", "4 6 10\n7 2 3 4\n7 1 3 4\n7 1 2 4\n7 1 2 3\n", k4, 4},
		{"k4 two vertex weights", "4 6 10 2\n7 8 2 3 4\n7 8 1 3 4\n7 8 1 2 4\n7 8 1 2 3\n", k4, 4},
		{"k4 sizes, weights", "4 6 111\n1 9 2 5 3 1 4 2\n1 9 1 5 3 1 4 1\n1 9 1 1 2 1 4 1\n1 9 1 2 2 1 3 1\n", k4, 4},
		{"comments, crlf", "% k4\r\n4 6\r\n2 3 4\r\n% between\r\n1 3 4\r\n1 2 4\r\n1 2 3\r\n% end\r\n\r\n", k4, 4},
		{"isolated vertices", "4 1\n\n3\n2\n\n", []uint64{1, 2, 2, 1}, 4},
		{"no edges", "3 0\n\n\n\n", nil, 3},
		{"tabs, no final newline", "2\t1\n2\n1", []uint64{0, 1, 1, 0}, 2},
		{"blank lines before the header", "\n\n2 1\n2\n1\n", []uint64{0, 1, 1, 0}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := readMETISString(t, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) || st.DeclaredVertices != tc.n || st.Format != FormatMETIS {
				t.Fatalf("got %v, stats %+v; want %v, %d vertices", got, st, tc.want, tc.n)
			}
		})
	}
}

// TestMETISErrors: a file that does not hold what its header declares is
// an error naming the file and line, never a count.
func TestMETISErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int64
		has      string
	}{
		{"fewer vertex lines", "4 6\n2 3 4\n1 3 4\n1 2 4\n", 1, "declares 4 vertices but the file has 3 vertex lines"},
		{"more vertex lines", "3 3\n2 3\n1 3\n1 2\n1 2\n", 5, "after the 3 vertex lines"},
		{"too few edges", "3 3\n2\n1 3\n2\n", 1, "declares 3 edges but the vertex lines list 4 neighbours"},
		{"each edge once", "3 3\n2 3\n3\n\n", 1, "declares 3 edges but the vertex lines list 3 neighbours"},
		{"vertex 0", "2 1\n0\n1\n", 2, "vertex 0"},
		{"vertex above n", "2 1\n3\n1\n", 2, "above the declared 2 vertices"},
		{"not a number", "2 1\nx\n1\n", 2, `"x" is not a non-negative integer`},
		{"missing edge weight", "2 1 1\n2\n1 1\n", 2, "has no edge weight"},
		{"missing vertex weight", "2 1 10\n\n1 1\n", 2, "missing its vertex weights"},
		{"header one field", "4\n", 1, "needs 2 to 4 numbers"},
		{"header five fields", "4 6 0 1 2\n", 1, "needs 2 to 4 numbers"},
		{"bad fmt", "2 1 2\n2\n1\n", 1, "METIS fmt"},
		{"ncon without vertex weights", "2 1 1 2\n2 1\n1 1\n", 1, "ncon 2 needs vertex weights"},
		{"edge list named .graph", "1 2\n2 3\n3 1\n", 2, "above the declared 1 vertices"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readMETISString(t, tc.in)
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tc.line || pe.Path != "g.graph" || !strings.Contains(err.Error(), tc.has) {
				t.Fatalf("got %v, want an error at g.graph:%d saying %q", err, tc.line, tc.has)
			}
		})
	}
	if _, _, err := readMETISString(t, "% only comments\n"); err == nil || !strings.Contains(err.Error(), "without a header") {
		t.Fatalf("got %v", err)
	}
}

// TestMETISLongLine: a vertex whose line is longer than any buffer.
func TestMETISLongLine(t *testing.T) {
	const n = 60000
	var b strings.Builder
	b.WriteString("60001 60000\n")
	for v := 2; v <= n+1; v++ {
		b.WriteString(" ")
		b.WriteString(itoa(v))
	}
	b.WriteString("\n")
	for range n {
		b.WriteString("1\n")
	}
	got, st, err := readMETISString(t, b.String())
	if err != nil || len(got) != 4*n || st.Edges != 2*n {
		t.Fatalf("%d ids, %+v, %v", len(got), st, err)
	}
}

func itoa(v int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}
