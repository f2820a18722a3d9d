package edgeio

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// TestHeaderLine: a first line that is not an edge is skipped as a header
// and recorded with its line number and text.
func TestHeaderLine(t *testing.T) {
	tests := []struct {
		name, in string
		want     []graph.Edge
		line     int64 // 0: no header
		text     string
	}{
		{"source target", "source target\n1 2\n", ed(1, 2), 1, "source target"},
		{"snap columns", "FromNodeId\tToNodeId\n0 1\n", ed(0, 1), 1, "FromNodeId\tToNodeId"},
		{"after comments", "# c\n\nsource target weight\r\n5 6 0.5\r\n", ed(5, 6), 3, "source target weight"},
		{"csv", "src,dst\n1,2\n", ed(1, 2), 1, "src,dst"},
		{"two letters", "u v\n1 2\n", ed(1, 2), 1, "u v"},
		{"one word", "edges\n1 2\n", ed(1, 2), 1, "edges"},
		{"konect comment", "% bip unweighted\n1 2\n", ed(1, 2), 0, ""},
		{"weight column typo", "1 2 3x\n", ed(1, 2), 0, ""}, // extra columns are ignored
		{"no header", "1 2\n", ed(1, 2), 0, ""},
	}
	for _, tc := range tests {
		for _, ck := range chunkings {
			t.Run(fmt.Sprintf("%s/chunk%d-w%d", tc.name, ck.size, ck.workers), func(t *testing.T) {
				got, st, err := readString(t, tc.in, "h.txt", ReadOptions{chunkSize: ck.size, Workers: ck.workers})
				if err != nil {
					t.Fatal(err)
				}
				headers := int64(0)
				if tc.line > 0 {
					headers = 1
				}
				if !reflect.DeepEqual(got, tc.want) || st.HeaderLines != headers || st.HeaderLine != tc.line || st.Header != tc.text {
					t.Fatalf("edges %v, stats %+v; want %v, header %d %q", got, st, tc.want, tc.line, tc.text)
				}
			})
		}
	}
}

// TestMistypedFirstLine: a first line of digits with one stray character
// is an edge with a typo, not a header: an error naming the line, or a
// skipped bad line with SkipBadLines.
func TestMistypedFirstLine(t *testing.T) {
	tests := []struct {
		name, in string
		line     int64
		text     string
		edges    int64 // with SkipBadLines
	}{
		{"O for 0", "O 2\n2 3\n3 0\n", 1, "O 2", 2},
		{"l for 1", "l 5\n1 2\n", 1, "l 5", 1},
		{"second field", "0 O\n", 1, "0 O", 0},
		{"glued letter", "x1 2\n1 2\n", 1, "x1 2", 1},
		{"greek omicron", "\u039f 2\n1 2\n", 1, "\u039f 2", 1},
		{"after comments", "# g\n\n% k\nO 2\n1 2\n", 4, "O 2", 1},
		{"comma separated", "O,2\n1,2\n", 1, "O,2", 1},
		{"digit first", "1 2x\n1 2\n", 1, "1 2x", 1},
		{"crlf", "O 2\r\n1 2\r\n", 1, "O 2", 1},
		{"cr only", "O 2\r1 2\r", 1, "O 2", 1},
	}
	for _, tc := range tests {
		for _, ck := range chunkings {
			t.Run(fmt.Sprintf("%s/chunk%d-w%d", tc.name, ck.size, ck.workers), func(t *testing.T) {
				_, _, err := readString(t, tc.in, "data.txt", ReadOptions{chunkSize: ck.size, Workers: ck.workers})
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Path != "data.txt" || pe.Line != tc.line || pe.Text != tc.text {
					t.Fatalf("got %v, want a bad line %d %q", err, tc.line, tc.text)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("data.txt:%d:", tc.line)) || !strings.Contains(err.Error(), "--skip-bad-lines") {
					t.Fatalf("message %q", err)
				}
				got, st, err := readString(t, tc.in, "data.txt", ReadOptions{chunkSize: ck.size, Workers: ck.workers, SkipBadLines: true})
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(got)) != tc.edges || st.BadLines != 1 || st.HeaderLines != 0 || st.Header != "" {
					t.Fatalf("with SkipBadLines: %d edges, stats %+v; want %d edges, 1 bad line, no header", len(got), st, tc.edges)
				}
			})
		}
	}
	_, _, err := readString(t, "O 2\n", "data.txt", ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "mistyped edge") {
		t.Fatalf("the message does not say why the line is no header: %v", err)
	}
}

// TestHeaderNeedsEdges: a line is skipped as a header only when edges
// follow it, and never when it holds control bytes. A file whose only
// content is such a line is an error naming its line (or, with
// SkipBadLines, one bad line), not a graph without edges.
func TestHeaderNeedsEdges(t *testing.T) {
	tests := []struct {
		name, in, file string
		format         Format
		line           int64
	}{
		{"header only", "source target\n", "h.txt", FormatAuto, 1},
		{"header, comments after", "# c\nsrc,dst\n# more\n\n", "h.csv", FormatAuto, 2},
		{"one-line description", `edges (1,2) (2,3) (3,1)`, "e.txt", FormatAuto, 1},
		{"one line forced", `nodes=3;edges=1-2,2-3,3-1`, "g.dat", FormatTSV, 1},
		{"binary forced", "\x89\x01\x02garbage\x00\x7f", "b.dat", FormatEdgeList, 1},
		{"escape in header", "\x1b[1mfrom to\n1 2\n", "h.txt", FormatEdgeList, 1},
		{"nul in header", "from\x00to\n1 2\n", "h.txt", FormatEdgeList, 1},
	}
	for _, tc := range tests {
		for _, ck := range chunkings {
			t.Run(fmt.Sprintf("%s/chunk%d-w%d", tc.name, ck.size, ck.workers), func(t *testing.T) {
				opts := ReadOptions{Format: tc.format, chunkSize: ck.size, Workers: ck.workers}
				_, _, err := readString(t, tc.in, tc.file, opts)
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != tc.line || !pe.BadLine {
					t.Fatalf("got %v, want a bad line %d", err, tc.line)
				}
				opts.SkipBadLines = true
				_, st, err := readString(t, tc.in, tc.file, opts)
				if err != nil || st.HeaderLines != 0 || st.Header != "" || st.BadLines < 1 {
					t.Fatalf("with SkipBadLines: %+v, %v", st, err)
				}
			})
		}
	}
	// On the parallel reader too: a file of one header line and padding.
	in := "src dst\n" + strings.Repeat("\n", 3<<16)
	path := writeBytes(t, "big.txt", []byte(in))
	if _, _, err := ReadFile(t.Context(), path, ReadOptions{chunkSize: 1 << 16}); err == nil || !strings.Contains(err.Error(), "big.txt:1:") {
		t.Fatalf("parallel reader: got %v", err)
	}
}
