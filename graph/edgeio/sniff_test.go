package edgeio

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
)

func utf16le(s string, bom bool) []byte {
	var b []byte
	if bom {
		b = append(b, 0xff, 0xfe)
	}
	for _, r := range utf16.Encode([]rune(s)) {
		b = append(b, byte(r), byte(r>>8))
	}
	return b
}

func utf16be(s string) []byte {
	var b []byte
	for _, r := range utf16.Encode([]rune(s)) {
		b = append(b, byte(r>>8), byte(r))
	}
	return b
}

// refusedInputs are files of kinds trigrid does not read, each with what
// the refusal must call it. Several are one line: read as an edge list,
// that line was taken for a header and the count was 0.
var refusedInputs = []struct {
	name string
	data []byte
	kind string
}{
	{"g.zip", []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00tri.txt"), "is a zip archive"},
	{"empty.zip", []byte("PK\x05\x06" + strings.Repeat("\x00", 18)), "is a zip archive"},
	{"g.7z", []byte("7z\xbc\xaf\x27\x1c\x00\x04rest"), "is a 7z archive"},
	{"g.rar", []byte("Rar!\x1a\x07\x01\x00"), "is a RAR archive"},
	{"trigrid", []byte("\x7fELF\x02\x01\x01\x00\x00\x00"), "is an ELF executable"},
	{"g.h5", []byte("\x89HDF\r\n\x1a\n\x00\x00"), "is an HDF5 file"},
	{"g.parquet", []byte("PAR1\x15\x04\x15"), "is a Parquet file"},
	{"g.pdf", []byte("%PDF-1.7\n1 0 obj\n"), "is a PDF document"},
	{"g.lz4", []byte("\x04\x22\x4d\x18\x64\x40"), "is an lz4 stream"},
	{"one-line.graphml", []byte(`<?xml version="1.0"?><graphml><graph edgedefault="undirected"><edge source="1" target="2"/></graph></graphml>`), "looks like GraphML"},
	{"g.graphml", []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n<graph>\n<edge source=\"1\" target=\"2\"/>\n</graph>\n</graphml>\n"), "looks like GraphML"},
	{"g.gexf", []byte("<?xml version=\"1.0\"?>\n<gexf version=\"1.2\">\n"), "looks like GEXF"},
	{"g.xml", []byte("<edges><e u=\"1\" v=\"2\"/></edges>\n"), "looks like XML"},
	{"download.txt", []byte("<!DOCTYPE html>\n<html><body>Not Found</body></html>\n"), "looks like an HTML page"},
	{"g.json", []byte("[[1,2],[2,3],[3,1]]"), "looks like JSON"},
	{"g2.json", []byte("{\"nodes\": [1, 2, 3], \"links\": [{\"source\": 1, \"target\": 2}]}\n"), "looks like JSON"},
	{"g.gml", []byte("graph [\n  node [ id 1 ]\n  node [ id 2 ]\n  edge [ source 1 target 2 ]\n]\n"), "looks like GML"},
	{"creator.gml", []byte("Creator \"igraph\"\nVersion 1\ngraph\n[\n  directed 0\n]\n"), "looks like GML"},
	{"g.net", []byte("*Vertices 3\n1 \"a\"\n2 \"b\"\n3 \"c\"\n*Edges\n1 2\n2 3\n3 1\n"), "looks like a Pajek .net file"},
	{"arcs.net", []byte("% pajek\n*arcs\n1 2\n"), "looks like a Pajek .net file"},
	{"u16bom.txt", utf16le("1 2\n2 3\n3 1\n", true), "is UTF-16 text"},
	{"u16bom-oneline.txt", utf16le("1 2", true), "is UTF-16 text"},
	{"u16le.txt", utf16le("1 2\n2 3\n3 1\n", false), "looks like UTF-16 text"},
	{"u16be.txt", utf16be("1 2\n2 3\n3 1\n"), "looks like UTF-16 text"},
	{"u32.txt", []byte("\xff\xfe\x00\x001\x00\x00\x00"), "is UTF-32 text"},
	{"adj.txt", []byte("1 2 3 4\n2 3 4\n3 4\n"), "looks like an adjacency list"},
	{"metis.txt", []byte("4 6\n2 3 4\n1 3 4\n1 2 4\n1 2 3\n"), "looks like an adjacency list"},
}

// TestRefused: each kind is refused with an error naming the file and
// the kind, raw, compressed and inside a tar archive, and whether the
// format is detected or forced (but for the adjacency list, which a
// forced format reads as asked).
func TestRefused(t *testing.T) {
	for _, tc := range refusedInputs {
		t.Run(tc.name, func(t *testing.T) {
			forms := []struct {
				file string
				data []byte
			}{
				{tc.name, tc.data},
				{tc.name + ".gz", compressed(t, compGzip, tc.data)},
				{tc.name + ".xz", compressed(t, compXz, tc.data)},
				// .dat: a member named .json or .pdf would be skipped as no graph.
				{"a.tar.zst", compressed(t, compZstd, tarball(t, member{"d/" + tc.name + ".dat", tc.data}))},
			}
			for _, f := range forms {
				path := writeBytes(t, f.file, f.data)
				for _, format := range []Format{FormatAuto, FormatEdgeList, FormatMTX, FormatMETIS} {
					if format != FormatAuto && strings.Contains(tc.kind, "adjacency") {
						continue
					}
					_, _, err := ReadFile(t.Context(), path, ReadOptions{Format: format})
					var re *RefusedError
					if !errors.As(err, &re) || !strings.Contains(err.Error(), "this "+tc.kind) || !strings.Contains(err.Error(), f.file) {
						t.Fatalf("%s as %v: got %v, want %q", f.file, format, err, "this "+tc.kind)
					}
				}
			}
		})
	}
}

// TestNotRefused: edge lists that share a first byte or a word with a
// refused kind, and regular tables of ids, are read.
func TestNotRefused(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"weighted", "1 2 5\n2 3 7\n3 1 1\n"},
		{"temporal", "1 2 5 100\n2 3 7 101\n3 1 1 102\n"},
		{"header then weights", "src dst w\n1 2 5\n2 3 7\n3 1 1\n"},
		{"real weights, ragged", "1 2 0.5\n2 3\n3 1 1\n"},
		{"graph word header", "graph edges\n1 2\n2 3\n3 1\n"},
		{"star header", "*src *dst\n1 2\n2 3\n3 1\n"},
		{"comments", "% KONECT\n# SNAP\n1 2\n2 3\n3 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := ReadFile(t.Context(), writeBytes(t, "g.txt", []byte(tc.in)), ReadOptions{})
			if err != nil || len(got) != 3 {
				t.Fatalf("%d edges, %v", len(got), err)
			}
		})
	}
}

// TestDetectByContent: the content decides before the extension.
func TestDetectByContent(t *testing.T) {
	sg := gapBytes(false, 2, 2, []int64{0, 1, 2}, []int32{1, 0})
	for _, tc := range []struct {
		name, file string
		data       []byte
		want       Format
	}{
		{"mtx in .txt", "g.txt", []byte("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n"), FormatMTX},
		{"dimacs in .txt", "g.txt", []byte("c x\np sp 2 1\na 1 2 3\n"), FormatDIMACS},
		{"dimacs, no name", "g", []byte("p edge 2 1\ne 1 2\n"), FormatDIMACS},
		{"sg in .txt", "g.txt", sg, FormatSG},
		{"bin in .graph", "g.graph", nil, FormatBin},
		{"bz2 .graph", "g.graph.bz2", nil, FormatMETIS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data
			switch tc.want {
			case FormatBin:
				var b testBuffer
				if err := Write(&b, ed(0, 1), WriteOptions{Format: FormatBin}); err != nil {
					t.Fatal(err)
				}
				data = b.Bytes()
			case FormatMETIS:
				if data = compressed(t, compBzip2, []byte("2 1\n2\n1\n")); data == nil {
					t.Skip("no bzip2 program")
				}
			}
			got, st, err := ReadFile(t.Context(), writeBytes(t, tc.file, data), ReadOptions{})
			if err != nil || st.Format != tc.want || len(edgeSet(got, nil)) != 1 {
				t.Fatalf("%v, %+v, %v; want %v", got, st, err, tc.want)
			}
		})
	}
}
