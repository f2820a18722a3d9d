package edgeio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// readBoth reads data with one big chunk and with tiny chunks on several
// workers; the results must not depend on where chunks are cut.
func readBoth(t *testing.T, data []byte, name string, opts ReadOptions) ([]graph.Edge, ReadStats, error) {
	opts.Workers = 1
	e1, s1, err1 := Read(t.Context(), bytes.NewReader(data), name, opts)
	opts.Workers, opts.chunkSize = 3, 7
	e2, s2, err2 := Read(t.Context(), bytes.NewReader(data), name, opts)
	if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
		t.Fatalf("chunking changed the error: %v vs %v", err1, err2)
	}
	if err1 == nil && (!reflect.DeepEqual(e1, e2) || s1 != s2) {
		t.Fatalf("chunking changed the result: %d edges %+v vs %d edges %+v", len(e1), s1, len(e2), s2)
	}
	if err1 == nil && s1.Edges != int64(len(e1)) {
		t.Fatalf("stats say %d edges, got %d", s1.Edges, len(e1))
	}
	return e1, s1, err1
}

func FuzzEdgeList(f *testing.F) {
	for _, s := range []string{
		"1 2\n3 4\n", "# c\n% k\nsrc,dst\n1,2\r\n", "1 x\n", "7\n", "-1 2\n", "18446744073709551616 1\n",
		"18446744073709551615 0 9 9\n", "\n\n \t\r\n", "a b\n1 2\nc d\n", "1 2", ",1,2\n", "00001 2.5\n",
		// Byte-order marks, CR line ends, headers and mistyped first edges.
		bom + "1 2\n2 3\n3 1\n", bom + "src,dst\r1,2\r", bom, bom + bom + "1 2\n", "1 2\r2 3\r3 1\r",
		"1 2\r\r\n3 4\r\n5 6\r", "\r\r1 2\r", "# c\r1 x\r", "O 2\n2 3\n", "source target\n1 2\n", "l 5\r1 2",
		"1 2 3x\n", "\u039f 2\n", "x1 2\n1 2\n", "# c\n\nO,2\n", "edges\n1 2\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, skip bool) {
		edges, st, err := readBoth(t, data, "f.txt", ReadOptions{Format: FormatEdgeList, SkipBadLines: skip})
		var pe *ParseError
		var re *RefusedError
		if errors.As(err, &re) {
			return // text of a kind no edge list is (JSON, XML...): docs/formats.md
		}
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("text input gave a non-line error: %v", err)
		}
		if skip && err != nil {
			t.Fatalf("SkipBadLines still failed: %v", err)
		}
		checkAgainstReference(t, data, skip, edges, st, err)
		if err != nil {
			return
		}
		// What was read writes and reads back the same.
		var b bytes.Buffer
		if err := Write(&b, edges, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		back, _, err := Read(t.Context(), &b, "f.txt", ReadOptions{})
		if err != nil || len(back) != len(edges) || (len(edges) > 0 && !reflect.DeepEqual(back, edges)) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// checkAgainstReference compares a read of data with refParse, for input
// that refParse covers (no line starting with a comma).
func checkAgainstReference(t *testing.T, data []byte, skip bool, edges []graph.Edge, st ReadStats, err error) {
	text := strings.TrimPrefix(string(data), bom)
	for _, l := range strings.Split(refLoneCR(text), "\n") {
		if t := strings.TrimLeft(l, " \t\r"); t != "" && t[0] == ',' {
			return
		}
	}
	ref := refParse(text, skip)
	if ref.badLine != 0 {
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != ref.badLine {
			t.Fatalf("got %v, the reference has a bad line %d", err, ref.badLine)
		}
		return
	}
	if err != nil {
		t.Fatalf("got %v, the reference reads %d edges", err, len(ref.edges))
	}
	if len(edges) != len(ref.edges) || (len(edges) > 0 && !reflect.DeepEqual(edges, ref.edges)) {
		t.Fatalf("%d edges, the reference reads %d", len(edges), len(ref.edges))
	}
	if st.Lines != ref.lines || st.Comments != ref.comments || st.HeaderLines != ref.headers || st.BadLines != ref.bad {
		t.Fatalf("stats %+v, reference %+v", st, ref)
	}
}

func FuzzMatrixMarket(f *testing.F) {
	const banner = "%%MatrixMarket matrix coordinate pattern general\n"
	for _, s := range []string{
		banner + "3 3 2\n1 2\n3 1\n", banner + "% c\n2 2 1\n2 2 1.5\n", banner + "3 3 1\n0 1\n",
		banner + "3 3 3\n1 2\n", banner + "1 1 0\n", "%%MatrixMarket matrix array real general\n2 2\n",
		"%%MatrixMarket matrix coordinate real symmetric\r\n4 4 1\r\n4 3 2\r\n", banner,
		bom + banner + "3 3 1\n1 2\n", "%%MatrixMarket matrix coordinate pattern general\r3 3 2\r1 2\r\r3 1\r",
		bom + "%%MatrixMarket matrix coordinate pattern general\r\n% c\r2 2 1\r\n2 1", banner + "9 9 1\n1 1\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, skip bool) {
		edges, st, err := readBoth(t, data, "f.mtx", ReadOptions{Format: FormatMTX, SkipBadLines: skip})
		if err != nil {
			return
		}
		for _, e := range edges {
			if e.U >= st.DeclaredVertices || e.V >= st.DeclaredVertices {
				t.Fatalf("edge %v outside the declared %d vertices", e, st.DeclaredVertices)
			}
		}
	})
}

func FuzzBinary(f *testing.F) {
	for _, w := range []int{4, 8} {
		var b bytes.Buffer
		if err := Write(&b, ed(1, 2, 3, 4, 1<<31, 7), WriteOptions{Format: FormatBin, IDWidth: w}); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
		f.Add(b.Bytes()[:b.Len()-3])
		f.Add(append(b.Bytes(), 1))
	}
	f.Add([]byte("TGEDGES\x00\x01\x00\x00\x00\x04\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"))
	// Edge counts whose bytes of pairs overflow 64 bits or exceed any file.
	f.Add([]byte("TGEDGES\x00\x01\x00\x00\x00\x04\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x20"))
	f.Add([]byte("TGEDGES\x00\x01\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10"))
	f.Add([]byte("TGEDGES\x00\x01\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		edges, st, err := Read(t.Context(), bytes.NewReader(data), "f.bin", ReadOptions{Format: FormatBin, chunkSize: 64})
		if err != nil {
			// Sizes in messages are exact: m pairs of 2*width bytes.
			if len(data) >= 24 && strings.Contains(err.Error(), "bytes of pairs") {
				m := new(big.Int).SetUint64(binary.LittleEndian.Uint64(data[16:]))
				want := m.Mul(m, big.NewInt(2*int64(binary.LittleEndian.Uint32(data[12:]))))
				if !strings.Contains(err.Error(), "("+want.String()+" bytes of pairs)") {
					t.Fatalf("%v: want %s bytes of pairs", err, want)
				}
			}
			return
		}
		if st.Edges != int64(len(edges)) || (len(data) > 0 && int64(len(data)) < 24+8*st.Edges) {
			t.Fatalf("%d edges from %d bytes", len(edges), len(data))
		}
	})
}

func FuzzCompressed(f *testing.F) {
	for _, comp := range []string{"gzip", "zstd"} {
		for _, fm := range []Format{FormatEdgeList, FormatMTX, FormatBin} {
			var b bytes.Buffer
			if err := Write(&b, ed(1, 2, 3, 4, 5, 6), WriteOptions{Format: fm, Compression: comp}); err != nil {
				f.Fatal(err)
			}
			f.Add(b.Bytes())
		}
	}
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 && data[0] != 0x1f && data[0] != 0x28 {
			data = append([]byte{0x1f, 0x8b}, data...) // keep the fuzzer on compressed input
		}
		// Only absence of panics, hangs and races is checked here: random
		// bytes rarely decompress, and what they decompress to is covered
		// by the other targets.
		_, _, _ = Read(t.Context(), bytes.NewReader(data), "f", ReadOptions{chunkSize: 16, Workers: 2})
	})
}
