package edgeio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

func binFile(t *testing.T, edges []graph.Edge, width int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, edges, WriteOptions{Format: FormatBin, IDWidth: width}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBinaryLayout(t *testing.T) {
	// The layout is documented in docs/formats.md; check it byte by byte so
	// that other tools can rely on it.
	b := binFile(t, ed(1, 2, 3, 1<<31), 0)
	want := []byte("TGEDGES\x00")
	want = binary.LittleEndian.AppendUint32(want, 1)
	want = binary.LittleEndian.AppendUint32(want, 4)
	want = binary.LittleEndian.AppendUint64(want, 2)
	for _, v := range []uint32{1, 2, 3, 1 << 31} {
		want = binary.LittleEndian.AppendUint32(want, v)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("got % x\nwant % x", b, want)
	}
	if b := binFile(t, ed(1<<32, 0), 0); len(b) != 24+16 || b[12] != 8 {
		t.Fatalf("ids above 2^32-1 need width 8: % x", b)
	}
}

func TestBinaryWidthErrors(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, ed(1<<32, 0), WriteOptions{Format: FormatBin, IDWidth: 4}); err == nil || !strings.Contains(err.Error(), "width 4 cannot hold") {
		t.Fatalf("got %v", err)
	}
	if err := Write(&b, nil, WriteOptions{Format: FormatBin, IDWidth: 3}); err == nil {
		t.Fatal("width 3 accepted")
	}
}

func TestBinaryErrors(t *testing.T) {
	good := binFile(t, ed(1, 2, 3, 4, 5, 6), 8)
	patch := func(off int, v uint32) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"short header", good[:10], "truncated binary header: 10 of 24 bytes"},
		{"missing pairs", good[:24+16+5], "header declares 3 edges (48 bytes of pairs) but only 21 bytes follow: 27 bytes (2 edges) missing"},
		{"no pairs", good[:24], "only 0 bytes follow: 48 bytes (3 edges) missing"},
		{"trailing", append(bytes.Clone(good), 0, 0, 0), "3 trailing bytes after the 3 declared edges"},
		{"version", patch(8, 2), "version 2"},
		{"width", patch(12, 5), "id width 5"},
		{"magic", append([]byte("XXEDGES\x00"), good[8:]...), "not a binary edge list"},
	}
	// Edge counts whose bytes of pairs overflow 64 bits (2^61+3 pairs of 8
	// bytes are 2^64+24 bytes) or exceed any file.
	for _, m := range []struct {
		width uint32
		edges uint64
	}{{4, 1<<61 + 3}, {8, 1<<61 + 3}, {8, 1 << 60}, {4, 1<<60 + 1}, {4, 1<<64 - 1}, {8, 1<<59 + 1}} {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint32(b[12:], m.width)
		binary.LittleEndian.PutUint64(b[16:], m.edges)
		tests = append(tests, struct {
			name string
			in   []byte
			want string
		}{fmt.Sprintf("m=%d width %d", m.edges, m.width), b,
			fmt.Sprintf("binary header declares %d edges of %d bytes each, more than a file can hold", m.edges, 2*m.width)})
	}
	// Large counts that do fit a file are reported with exact sizes.
	huge := bytes.Clone(good)
	binary.LittleEndian.PutUint64(huge[16:], 1<<58)
	tests = append(tests, struct {
		name string
		in   []byte
		want string
	}{"m=2^58", huge, "header declares 288230376151711744 edges (4611686018427387904 bytes of pairs) but only 48 bytes follow: 4611686018427387856 bytes (288230376151711741 edges) missing"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "g.bin")
			if err := os.WriteFile(path, tc.in, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := ReadFile(t.Context(), path, ReadOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("ReadFile: got %v, want an error naming %s with %q", err, path, tc.want)
			}
			_, _, err := Read(t.Context(), bytes.NewReader(tc.in), "g.bin", ReadOptions{Format: FormatBin})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "g.bin") {
				t.Fatalf("got %v, want an error naming g.bin with %q", err, tc.want)
			}
		})
	}
}

func TestBinaryBatches(t *testing.T) {
	t.Parallel()
	// More edges than one batch, so the batch loop and its remainder run.
	n := binBatchEdges + 1234
	edges := make([]graph.Edge, n)
	for i := range edges {
		edges[i] = graph.Edge{U: uint64(i), V: uint64(n - i)}
	}
	got, st, err := Read(t.Context(), bytes.NewReader(binFile(t, edges, 4)), "big.bin", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, edges) || st.Edges != int64(n) || st.Lines != 0 || st.Format != FormatBin {
		t.Fatalf("%d edges, stats %+v", len(got), st)
	}
	if st.Bytes != int64(24+8*n) {
		t.Fatalf("Bytes %d, want %d", st.Bytes, 24+8*n)
	}
}
