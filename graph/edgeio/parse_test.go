package edgeio

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// chunkings puts chunk boundaries everywhere: a 1-byte chunk size makes
// every line its own chunk (the buffer grows to one line).
var chunkings = []struct {
	size, workers int
}{{0, 0}, {1, 1}, {1, 3}, {5, 2}, {17, 4}, {64, 3}}

func readString(t testing.TB, text, name string, opts ReadOptions) ([]graph.Edge, ReadStats, error) {
	t.Helper()
	return Read(context.Background(), strings.NewReader(text), name, opts)
}

func TestEdgeListCases(t *testing.T) {
	tests := []struct {
		name, in string
		want     []graph.Edge
		comments int64
		headers  int64
		lines    int64
	}{
		{"empty", "", nil, 0, 0, 0},
		{"blank lines only", "\n\n  \n\t\r\n", nil, 0, 0, 4},
		{"space", "1 2\n3 4\n", ed(1, 2, 3, 4), 0, 0, 2},
		{"no final newline", "1 2\n3 4", ed(1, 2, 3, 4), 0, 0, 2},
		{"tab crlf", "1\t2\r\n3\t4\r\n", ed(1, 2, 3, 4), 0, 0, 2},
		{"commas", "src,dst\n1,2\n3, 4\n", ed(1, 2, 3, 4), 0, 1, 3},
		{"snap header", "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n", ed(0, 1), 2, 0, 3},
		{"konect", "% sym unweighted\n% 3 4 4\n1 2\n2 3\n", ed(1, 2, 2, 3), 2, 0, 4},
		{"header line", "FromNodeId ToNodeId\n5 6\n", ed(5, 6), 0, 1, 2},
		{"header after comments", "# c\n\nsource target weight\n5 6 0.5\n", ed(5, 6), 1, 1, 4},
		{"extra columns", "1 2 3.5 x y\n4 5\t\t17\n", ed(1, 2, 4, 5), 0, 0, 2},
		{"leading blanks", "   1   2\n\t3\t4\n", ed(1, 2, 3, 4), 0, 0, 2},
		{"max id", "18446744073709551615 0\n", ed(1<<64-1, 0), 0, 0, 1},
		{"leading zeros", "000000000000000000000000007 08\n", ed(7, 8), 0, 0, 1},
		{"20 digits", "10000000000000000000 12345678901234567890\n", ed(1e19, 12345678901234567890), 0, 0, 1},
		{"self loop and dup", "1 1\n1 1\n", ed(1, 1, 1, 1), 0, 0, 2},
		{"cr only line", "\r\n1 2\r\n", ed(1, 2), 0, 0, 2},
		{"trailing comment", "1 2 # note\n", ed(1, 2), 0, 0, 1},
	}
	for _, tc := range tests {
		for _, ck := range chunkings {
			t.Run(fmt.Sprintf("%s/chunk%d-w%d", tc.name, ck.size, ck.workers), func(t *testing.T) {
				got, st, err := readString(t, tc.in, "x.txt", ReadOptions{chunkSize: ck.size, Workers: ck.workers})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("edges %v, want %v", got, tc.want)
				}
				if st.Edges != int64(len(tc.want)) || st.Comments != tc.comments || st.HeaderLines != tc.headers || st.Lines != tc.lines {
					t.Fatalf("stats %+v, want edges %d comments %d headers %d lines %d", st, len(tc.want), tc.comments, tc.headers, tc.lines)
				}
				if st.Bytes != int64(len(tc.in)) {
					t.Fatalf("Bytes %d, want %d", st.Bytes, len(tc.in))
				}
			})
		}
	}
}

func TestBadLines(t *testing.T) {
	tests := []struct {
		name, in string
		line     int64
		text     string
		reason   string
		edges    int64 // with SkipBadLines
		bad      int64
	}{
		{"letters", "1 2\n1 x\n3 4\n", 2, "1 x", `not an edge: id "x" is not a non-negative integer`, 2, 1},
		{"single column", "1 2\n7\n3 4\n", 2, "7", "only one column", 2, 1},
		{"single column crlf", "1 2\r\n7 \r\n", 2, "7 ", "only one column", 1, 1},
		{"negative", "1 2\n-3 4\n", 2, "-3 4", `negative id "-3"`, 1, 1},
		{"negative second", "1 -2\n", 1, "1 -2", `negative id "-2"`, 0, 1},
		{"overflow", "18446744073709551616 1\n", 1, "18446744073709551616 1", "id above 2^64-1", 0, 1},
		{"overflow long", "1 99999999999999999999999\n", 1, "1 99999999999999999999999", "id above 2^64-1", 0, 1},
		{"glued", "12x 3\n", 1, "12x 3", `id "12x"`, 0, 1},
		{"float", "1.0 2.0\n", 1, "1.0 2.0", `id "1.0"`, 0, 1},
		{"plus", "1 2\n+1 2\n", 2, "+1 2", `id "+1"`, 1, 1},
		{"second header", "a b\n1 2\nc d\n", 3, "c d", `id "c"`, 1, 1},
		{"header after edge", "# x\n1 2\nsrc dst\n", 3, "src dst", `id "src"`, 1, 1},
		{"leading comma", ",1,2\n", 1, ",1,2", "no ids", 0, 1},
		{"second after header", "src dst\nfoo bar\n1 2\n", 2, "foo bar", `id "foo"`, 1, 1},
		{"binary garbage", "1 2\n\x00\x01\x02 3\n", 2, "\x00\x01\x02 3", "not a non-negative integer", 1, 1},
	}
	for _, tc := range tests {
		for _, ck := range chunkings {
			t.Run(fmt.Sprintf("%s/chunk%d-w%d", tc.name, ck.size, ck.workers), func(t *testing.T) {
				_, _, err := readString(t, tc.in, "data.txt", ReadOptions{chunkSize: ck.size, Workers: ck.workers})
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("got %v, want a *ParseError", err)
				}
				if pe.Path != "data.txt" || pe.Line != tc.line || pe.Text != tc.text || !strings.Contains(pe.Reason, tc.reason) || !pe.BadLine {
					t.Fatalf("got %#v, want line %d text %q reason ~%q", pe, tc.line, tc.text, tc.reason)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, fmt.Sprintf("graph/edgeio: data.txt:%d: %q: ", tc.line, tc.text)) || !strings.HasSuffix(msg, "(use --skip-bad-lines to skip such lines)") {
					t.Fatalf("message %q", msg)
				}

				got, st, err := readString(t, tc.in, "data.txt", ReadOptions{chunkSize: ck.size, Workers: ck.workers, SkipBadLines: true})
				if err != nil {
					t.Fatalf("with SkipBadLines: %v", err)
				}
				if st.Edges != tc.edges || int64(len(got)) != tc.edges || st.BadLines != tc.bad {
					t.Fatalf("with SkipBadLines: %d edges (%d in stats), %d bad; want %d, %d", len(got), st.Edges, st.BadLines, tc.edges, tc.bad)
				}
			})
		}
	}
}

func TestErrorMessageExample(t *testing.T) {
	_, _, err := readString(t, "1 2\n"+strings.Repeat("# c\n", 10)+"1 x\n", "data.txt", ReadOptions{})
	want := `graph/edgeio: data.txt:12: "1 x": not an edge: id "x" is not a non-negative integer (use --skip-bad-lines to skip such lines)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestLongBadLineTruncated(t *testing.T) {
	long := "1 " + strings.Repeat("y", 5000)
	_, _, err := readString(t, long+"\n", "a.txt", ReadOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	if len(pe.Text) > maxQuoted+3 || !strings.HasSuffix(pe.Text, "...") || len(err.Error()) > 300 {
		t.Fatalf("not truncated: %d bytes of text, message %d bytes", len(pe.Text), len(err.Error()))
	}
}

// randomText builds an edge list with every feature the parser handles, in
// random order, so that chunk boundaries fall in every kind of place.
func randomText(rng *rand.Rand, nlines int, withBad bool) string {
	var b strings.Builder
	seps := []string{" ", "\t", ",", " , ", "  \t", ", "}
	ends := []string{"\n", "\r\n", " \n", "\t\r\n", "\r", " \r", "\r\r\n"}
	id := func() string {
		switch rng.IntN(10) {
		case 0:
			return fmt.Sprint(rng.Uint64())
		case 1:
			return "18446744073709551615"
		case 2:
			return "00" + fmt.Sprint(rng.IntN(100))
		default:
			return fmt.Sprint(rng.IntN(1 << 20))
		}
	}
	switch rng.IntN(4) {
	case 0:
		b.WriteString("FromNodeId\tToNodeId\n")
	case 1:
		b.WriteString("O 2\n") // a mistyped edge, not a header
	}
	for range nlines {
		switch k := rng.IntN(40); {
		case k == 0:
			b.WriteString("# comment 1 2\n")
		case k == 1:
			b.WriteString("% konect 3 4\r\n")
		case k == 2:
			b.WriteString(" \t\n")
		case k == 3 && withBad:
			bad := []string{"1 x", "7", "-3 4", "99999999999999999999 1", "a b", "1.5 2", "\x00 1"}
			b.WriteString(bad[rng.IntN(len(bad))])
			b.WriteString(ends[rng.IntN(len(ends))])
		default:
			if rng.IntN(8) == 0 {
				b.WriteString("  ")
			}
			b.WriteString(id())
			b.WriteString(seps[rng.IntN(len(seps))])
			b.WriteString(id())
			if rng.IntN(5) == 0 {
				b.WriteString(seps[rng.IntN(len(seps))])
				b.WriteString("0.25 extra")
			}
			b.WriteString(ends[rng.IntN(len(ends))])
		}
	}
	if rng.IntN(2) == 0 {
		b.WriteString("5 6") // no final newline
	}
	return b.String()
}

// TestAgainstReference compares the chunked parallel parser with refParse
// on random messy text: same edges in the same order, same counts, and the
// same first bad line.
func TestAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 60 {
		withBad := iter%2 == 1
		text := randomText(rng, 1+rng.IntN(400), withBad)
		for _, skip := range []bool{false, true} {
			ref := refParse(text, skip)
			for _, ck := range chunkings {
				got, st, err := readString(t, text, "r.txt", ReadOptions{chunkSize: ck.size, Workers: ck.workers, SkipBadLines: skip})
				if ref.badLine != 0 {
					var pe *ParseError
					if !errors.As(err, &pe) || pe.Line != ref.badLine {
						t.Fatalf("iter %d chunk %d: got %v, want a bad line at %d", iter, ck.size, err, ref.badLine)
					}
					continue
				}
				if err != nil {
					t.Fatalf("iter %d chunk %d skip %v: %v", iter, ck.size, skip, err)
				}
				if !reflect.DeepEqual(got, ref.edges) {
					t.Fatalf("iter %d chunk %d skip %v: %d edges differ from the reference's %d", iter, ck.size, skip, len(got), len(ref.edges))
				}
				if st.Lines != ref.lines || st.Comments != ref.comments || st.HeaderLines != ref.headers || st.BadLines != ref.bad || st.Edges != int64(len(ref.edges)) {
					t.Fatalf("iter %d chunk %d skip %v: stats %+v, reference %+v", iter, ck.size, skip, st, ref)
				}
			}
		}
	}
}
