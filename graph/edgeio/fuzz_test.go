package edgeio

import (
	"bytes"
	"errors"
	"reflect"
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
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, skip bool) {
		edges, _, err := readBoth(t, data, "f.txt", ReadOptions{Format: FormatEdgeList, SkipBadLines: skip})
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("text input gave a non-line error: %v", err)
		}
		if skip && err != nil {
			t.Fatalf("SkipBadLines still failed: %v", err)
		}
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

func FuzzMatrixMarket(f *testing.F) {
	const banner = "%%MatrixMarket matrix coordinate pattern general\n"
	for _, s := range []string{
		banner + "3 3 2\n1 2\n3 1\n", banner + "% c\n2 2 1\n2 2 1.5\n", banner + "3 3 1\n0 1\n",
		banner + "3 3 3\n1 2\n", banner + "1 1 0\n", "%%MatrixMarket matrix array real general\n2 2\n",
		"%%MatrixMarket matrix coordinate real symmetric\r\n4 4 1\r\n4 3 2\r\n", banner,
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
	f.Fuzz(func(t *testing.T, data []byte) {
		edges, st, err := Read(t.Context(), bytes.NewReader(data), "f.bin", ReadOptions{Format: FormatBin, chunkSize: 64})
		if err != nil {
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
