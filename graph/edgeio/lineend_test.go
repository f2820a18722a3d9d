package edgeio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/trigrid/trigrid/graph"
)

const bom = "\xef\xbb\xbf"

// TestBOM reads a byte-order mark before the first line of every text
// format, plain and compressed, detected and forced.
func TestBOM(t *testing.T) {
	const mtxBody = "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n3 1\n"
	tests := []struct {
		name, file, in string
		force          Format
		want           []graph.Edge
		headers        int64
		format         Format
	}{
		{"edge list", "b.txt", bom + "1 2\n2 3\n3 1\n", FormatAuto, ed(1, 2, 2, 3, 3, 1), 0, FormatEdgeList},
		{"no extension", "b", bom + "1 2\n2 3\n3 1\n", FormatAuto, ed(1, 2, 2, 3, 3, 1), 0, FormatEdgeList},
		{"tsv", "b.tsv", bom + "1\t2\r\n2\t3\r\n", FormatAuto, ed(1, 2, 2, 3), 0, FormatTSV},
		{"forced tsv", "b", bom + "1\t2\n", FormatTSV, ed(1, 2), 0, FormatTSV},
		{"before header", "b.csv", bom + "src,dst\n1,2\n", FormatAuto, ed(1, 2), 1, FormatEdgeList},
		{"before comment", "b.txt", bom + "# c\n1 2\n", FormatAuto, ed(1, 2), 0, FormatEdgeList},
		{"mtx detected", "b", bom + mtxBody, FormatAuto, ed(0, 1, 1, 2, 2, 0), 0, FormatMTX},
		{"mtx forced", "b.txt", bom + mtxBody, FormatMTX, ed(0, 1, 1, 2, 2, 0), 0, FormatMTX},
		{"only a bom", "b.txt", bom, FormatAuto, nil, 0, FormatEdgeList},
	}
	for _, tc := range tests {
		for _, comp := range []string{"", "gzip", "zstd"} {
			data := []byte(tc.in)
			if comp != "" {
				data = compress(t, data, comp)
			}
			t.Run(tc.name+"/"+comp, func(t *testing.T) {
				got, st, err := readBoth(t, data, tc.file, ReadOptions{Format: tc.force})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) || st.HeaderLines != tc.headers || st.Format != tc.format {
					t.Fatalf("edges %v, stats %+v; want %v, %d headers, format %v", got, st, tc.want, tc.headers, tc.format)
				}
			})
		}
	}
	// A BOM is only skipped at the start: later it is a bad line.
	_, _, err := readString(t, "1 2\n"+bom+"2 3\n", "b.txt", ReadOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Fatalf("BOM on line 2: got %v, want a bad line 2", err)
	}
}

func compress(t *testing.T, data []byte, comp string) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	switch comp {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "zstd":
		zw, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCROnlyLineEndings: CR alone ends a line, CRLF is one line end, and
// line numbers count either.
func TestCROnlyLineEndings(t *testing.T) {
	tests := []struct {
		name, in string
		want     []graph.Edge
		lines    int64
		comments int64
		headers  int64
	}{
		{"cr only", "1 2\r2 3\r3 1\r", ed(1, 2, 2, 3, 3, 1), 3, 0, 0},
		{"cr no final", "1 2\r2 3\r3 1", ed(1, 2, 2, 3, 3, 1), 3, 0, 0},
		{"mixed", "1 2\r\n3 4\r5 6\n7 8\r\r\n9 10", ed(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 6, 0, 0},
		{"cr blank lines", "\r\r1 2\r\r", ed(1, 2), 4, 0, 0},
		{"cr comments", "# a\r% b\r1 2 # c\r3 4\r", ed(1, 2, 3, 4), 4, 2, 0},
		{"cr header", "src dst\r1 2\r", ed(1, 2), 2, 0, 1},
		{"cr extra columns", "1 2 0.5\r3 4 x\r", ed(1, 2, 3, 4), 2, 0, 0},
		{"crcrlf", "1 2\r\r\n3 4\r\n", ed(1, 2, 3, 4), 3, 0, 0},
	}
	for _, tc := range tests {
		for _, ck := range chunkings {
			t.Run(fmt.Sprintf("%s/chunk%d-w%d", tc.name, ck.size, ck.workers), func(t *testing.T) {
				got, st, err := readString(t, tc.in, "cr.txt", ReadOptions{chunkSize: ck.size, Workers: ck.workers})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("edges %v, want %v", got, tc.want)
				}
				if st.Lines != tc.lines || st.Comments != tc.comments || st.HeaderLines != tc.headers || st.Bytes != int64(len(tc.in)) {
					t.Fatalf("stats %+v, want %d lines, %d comments, %d headers", st, tc.lines, tc.comments, tc.headers)
				}
			})
		}
	}
	// Bad lines are named by their exact number whatever the line ends.
	for _, tc := range []struct {
		in   string
		line int64
		text string
	}{
		{"1 2\r1 x\r3 4\r", 2, "1 x"},
		{"1 2\r\n\r3 4\n5\r6 7\r", 4, "5"},
		{"1 2\r3\r\n", 2, "3"},
	} {
		for _, ck := range chunkings {
			_, _, err := readString(t, tc.in, "cr.txt", ReadOptions{chunkSize: ck.size, Workers: ck.workers})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tc.line || pe.Text != tc.text {
				t.Fatalf("%q chunk %d: got %v, want line %d %q", tc.in, ck.size, err, tc.line, tc.text)
			}
		}
	}
}

func TestMatrixMarketCROnly(t *testing.T) {
	in := "%%MatrixMarket matrix coordinate pattern symmetric\r% c\r3 3 2\r2 1\r3 2\r"
	for _, ck := range chunkings {
		got, st, err := readString(t, in, "m.mtx", ReadOptions{chunkSize: ck.size, Workers: ck.workers})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ed(1, 0, 2, 1)) || st.Lines != 5 || st.DeclaredVertices != 3 {
			t.Fatalf("chunk %d: %v %+v", ck.size, got, st)
		}
	}
	_, _, err := readString(t, "%%MatrixMarket matrix coordinate pattern general\r2 2 1\r1 3\r", "m.mtx", ReadOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 {
		t.Fatalf("got %v, want an error on line 3", err)
	}
}

// refLoneCR is crReader's contract written the obvious way.
func refLoneCR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' && (i+1 == len(s) || s[i+1] != '\n') {
			b.WriteByte('\n')
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// randReader returns at most a random number of bytes per call.
type randReader struct {
	r   io.Reader
	rng *rand.Rand
}

func (r *randReader) Read(p []byte) (int, error) {
	return r.r.Read(p[:min(len(p), 1+r.rng.IntN(5))])
}

func TestCRReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	alphabet := []byte("\r\r\n\na")
	for iter := range 2000 {
		in := make([]byte, rng.IntN(24))
		for i := range in {
			in[i] = alphabet[rng.IntN(len(alphabet))]
		}
		want := refLoneCR(string(in))
		for name, r := range map[string]io.Reader{
			"whole":   bytes.NewReader(in),
			"onebyte": iotest.OneByteReader(bytes.NewReader(in)),
			"half":    iotest.HalfReader(bytes.NewReader(in)),
			"dataerr": iotest.DataErrReader(bytes.NewReader(in)),
			"random":  &randReader{bytes.NewReader(in), rng},
		} {
			cr := newCRReader(r)
			var got []byte
			for {
				// Reads of 1 to 4 bytes exercise the held CR with no room.
				p := make([]byte, 1+rng.IntN(4))
				n, err := cr.Read(p)
				got = append(got, p[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if string(got) != want {
				t.Fatalf("iter %d %s: %q gave %q, want %q", iter, name, in, got, want)
			}
		}
	}
	// A source error is passed on after the data before it.
	boom := errors.New("boom")
	got, err := io.ReadAll(newCRReader(io.MultiReader(strings.NewReader("1\r"), iotest.ErrReader(boom))))
	if !errors.Is(err, boom) || string(got) != "1\n" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestBytesEqual(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		var w [8]byte
		for k := range w {
			w[k] = []byte{'\r', '\n', 0, 0x80, 0x8d, 0xff, 0x0c, 0x0e, byte(rng.Uint32())}[rng.IntN(9)]
		}
		c := []byte{'\r', '\n', 0, 0xff}[rng.IntN(4)]
		var want uint64
		for k := range w {
			if w[k] == c {
				want |= 0x80 << (8 * k)
			}
		}
		if got := bytesEqual(binary.LittleEndian.Uint64(w[:]), c); got != want {
			t.Fatalf("bytesEqual(%q, %q) = %#x, want %#x", w, c, got, want)
		}
	}
}

// TestConvertLoneCR checks the word-at-a-time conversion on long random
// text, where most of it runs, against the obvious loop.
func TestConvertLoneCR(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("\r\r\n\n1 ")
	for range 3000 {
		in := make([]byte, rng.IntN(100))
		for i := range in {
			in[i] = alphabet[rng.IntN(len(alphabet))]
		}
		for _, more := range []bool{false, true} {
			got := bytes.Clone(in)
			convertLoneCR(got, more)
			want := refLoneCR(string(in))
			if more && len(in) > 0 && in[len(in)-1] == '\r' {
				want = want[:len(want)-1] + "\n"
			} else if !more && len(in) > 0 && in[len(in)-1] == '\r' {
				want = want[:len(want)-1] + "\r"
			}
			if string(got) != want {
				t.Fatalf("convertLoneCR(%q, %v) = %q, want %q", in, more, got, want)
			}
		}
	}
}
