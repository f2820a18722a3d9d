package edgeio

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// gapBytes lays out a GAP graph from its parts, as the format says.
func gapBytes(directed bool, e, n int64, parts ...any) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, directed)
	binary.Write(&b, binary.LittleEndian, e)
	binary.Write(&b, binary.LittleEndian, n)
	for _, p := range parts {
		binary.Write(&b, binary.LittleEndian, p)
	}
	return b.Bytes()
}

// TestGAP: the out neighbours are the edges, vertex ids as they are.
func TestGAP(t *testing.T) {
	// A triangle 0-1-2 and an isolated vertex 3, undirected: each edge at
	// both ends.
	u := gapBytes(false, 6, 4, []int64{0, 2, 4, 6, 6}, []int32{1, 2, 0, 2, 0, 1})
	uw := gapBytes(false, 6, 4, []int64{0, 2, 4, 6, 6}, []int32{1, 9, 2, 9, 0, 9, 2, 9, 0, 9, 1, 9})
	d := gapBytes(true, 3, 4, []int64{0, 2, 3, 3, 3}, []int32{1, 2, 2}, []int64{0, 0, 1, 3, 3}, []int32{0, 0, 1})
	dw := gapBytes(true, 3, 4, []int64{0, 2, 3, 3, 3}, []int32{1, 5, 2, 5, 2, 5}, []int64{0, 0, 1, 3, 3}, []int32{0, 5, 0, 5, 1, 5})
	empty := gapBytes(false, 0, 0, []int64{0})
	tests := []struct {
		name, file string
		data       []byte
		want       []uint64
		format     Format
	}{
		{"undirected", "g.sg", u, []uint64{0, 1, 0, 2, 1, 0, 1, 2, 2, 0, 2, 1}, FormatSG},
		{"weighted", "g.wsg", uw, []uint64{0, 1, 0, 2, 1, 0, 1, 2, 2, 0, 2, 1}, FormatWSG},
		{"directed", "g.sg", d, []uint64{0, 1, 0, 2, 1, 2}, FormatSG},
		{"directed weighted", "g.wsg", dw, []uint64{0, 1, 0, 2, 1, 2}, FormatWSG},
		{"by content", "graph.dat", u, []uint64{0, 1, 0, 2, 1, 0, 1, 2, 2, 0, 2, 1}, FormatSG},
		{"empty", "e.sg", empty, nil, FormatSG},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := ReadFile(t.Context(), writeBytes(t, tc.file, tc.data), ReadOptions{chunkSize: 32})
			if err != nil {
				t.Fatal(err)
			}
			var flat []uint64
			for _, e := range got {
				flat = append(flat, e.U, e.V)
			}
			if !reflect.DeepEqual(flat, tc.want) || st.Format != tc.format || st.Edges != int64(len(got)) {
				t.Fatalf("got %v, stats %+v; want %v as %v", flat, st, tc.want, tc.format)
			}
		})
	}
	// A weighted graph by its content alone: its size says so, even
	// against its name.
	for _, name := range []string{"g.dat", "g.sg"} {
		if _, st, err := ReadFile(t.Context(), writeBytes(t, name, uw), ReadOptions{}); err != nil || st.Format != FormatWSG {
			t.Fatalf("%s weighted by size: %+v %v", name, st, err)
		}
	}
}

// TestGAPErrors: a malformed graph is an error that says what is wrong.
func TestGAPErrors(t *testing.T) {
	u := gapBytes(false, 6, 4, []int64{0, 2, 4, 6, 6}, []int32{1, 2, 0, 2, 0, 1})
	tests := []struct {
		name string
		data []byte
		file string
		has  string
	}{
		{"short header", u[:10], "g.sg", "truncated header"},
		{"first byte", append([]byte{7}, u[1:]...), "g.sg", "first byte (directed) is 7"},
		{"cut in offsets", u[:30], "g.sg", "ends in the out offsets"},
		{"cut in neighbours", u[:len(u)-2], "g.sg", "ends in the out neighbours"},
		{"trailing bytes", append(append([]byte{}, u...), 1, 2, 3), "g.sg", "3 bytes after the graph"},
		{"weighted read as sg", gapBytes(false, 2, 2, []int64{0, 1, 2}, []int32{1, 0, 0, 0}), "g.sg", "a weighted graph (.wsg)?"},
		{"sg read as wsg", u, "g.wsg", "ends in the out neighbours"},
		{"first offset", gapBytes(false, 2, 2, []int64{1, 1, 2}, []int32{1, 0}), "g.sg", "first out offset is 1"},
		{"decreasing offsets", gapBytes(false, 2, 2, []int64{0, 2, 1}, []int32{1, 0}), "g.sg", "out offset 2 is 1"},
		{"last offset", gapBytes(false, 3, 2, []int64{0, 1, 2}, []int32{1, 0, 0}), "g.sg", "last out offset is 2"},
		{"neighbour above n", gapBytes(false, 2, 2, []int64{0, 1, 2}, []int32{2, 0}), "g.sg", "out neighbour 0 is 2"},
		{"negative neighbour", gapBytes(false, 2, 2, []int64{0, 1, 2}, []int32{-1, 0}), "g.sg", "is -1"},
		{"too many vertices", gapBytes(false, 0, 1<<40, []int64{0}), "g.sg", "ids are 32-bit"},
		{"in side cut", gapBytes(true, 1, 2, []int64{0, 1, 1}, []int32{1}, []int64{0, 0}), "g.sg", "ends in the in offsets"},
		{"in neighbour bad", gapBytes(true, 1, 2, []int64{0, 1, 1}, []int32{1}, []int64{0, 0, 1}, []int32{5}), "g.sg", "in neighbour 0 is 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Forced, so that the size does not tell the layouts apart.
			format := FormatSG
			if strings.HasSuffix(tc.file, ".wsg") {
				format = FormatWSG
			}
			_, _, err := ReadFile(t.Context(), writeBytes(t, tc.file, tc.data), ReadOptions{Format: format})
			if err == nil || !strings.Contains(err.Error(), tc.has) || !strings.Contains(err.Error(), tc.file) {
				t.Fatalf("got %v, want %q", err, tc.has)
			}
		})
	}
}
