package edgeio

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestAdjList: each line is an edge from its first id to each other id,
// ids kept as they are.
func TestAdjList(t *testing.T) {
	tests := []struct {
		name, in string
		want     []uint64
		lines    int64
	}{
		{"k4 upper", "1 2 3 4\n2 3 4\n3 4\n", []uint64{1, 2, 1, 3, 1, 4, 2, 3, 2, 4, 3, 4}, 3},
		{"isolated vertex", "7\n7 9\n", []uint64{7, 9}, 2},
		{"comments, blanks, crlf", "# networkx\r\n% k\r\n\r\n5 6 7\r\n", []uint64{5, 6, 5, 7}, 4},
		{"commas and tabs", "1,2,3\n4\t5, 6\n", []uint64{1, 2, 1, 3, 4, 5, 4, 6}, 2},
		{"cr only", "1 2\r2 3\r", []uint64{1, 2, 2, 3}, 2},
		{"large ids", "18446744073709551615 0\n", []uint64{1<<64 - 1, 0}, 1},
		{"no final newline", "1 2 3", []uint64{1, 2, 1, 3}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, st, err := readBoth(t, []byte(tc.in), "g.adjlist", ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, x := range e {
				got = append(got, x.U, x.V)
			}
			if !reflect.DeepEqual(got, tc.want) || st.Lines != tc.lines || st.Format != FormatAdjList {
				t.Fatalf("got %v, stats %+v; want %v, %d lines", got, st, tc.want, tc.lines)
			}
		})
	}
}

// TestAdjListBadLines: a field that is no id fails the read at its line,
// or, with SkipBadLines, drops that whole line.
func TestAdjListBadLines(t *testing.T) {
	in := "1 2 3\n4 x 6\n7 8\n"
	_, _, err := readBoth(t, []byte(in), "g.adj", ReadOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.Path != "g.adj" || !pe.BadLine || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("got %v, want a bad line at g.adj:2", err)
	}
	e, st, err := readBoth(t, []byte(in), "g.adj", ReadOptions{SkipBadLines: true})
	if err != nil || !reflect.DeepEqual(e, ed(1, 2, 1, 3, 7, 8)) || st.BadLines != 1 {
		t.Fatalf("with SkipBadLines: %v, %+v, %v", e, st, err)
	}
	if _, _, err := readBoth(t, []byte("source targets\n1 2\n"), "g.adj", ReadOptions{}); err == nil {
		t.Fatal("a header line in an adjacency list was read")
	}
}

// TestAdjListHub: a line longer than the reader's buffer.
func TestAdjListHub(t *testing.T) {
	var b strings.Builder
	b.WriteString("0")
	for v := 1; v <= 100000; v++ {
		b.WriteString(" " + itoa(v))
	}
	b.WriteString("\n1 2\n")
	e, st, err := readBoth(t, []byte(b.String()), "hub.adjlist", ReadOptions{})
	if err != nil || len(e) != 100001 || e[99999].V != 100000 || e[100000] != ed(1, 2)[0] || st.Lines != 2 {
		t.Fatalf("%d edges, %+v, %v", len(e), st, err)
	}
}
