package edgeio

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for _, f := range []Format{FormatAuto, FormatEdgeList, FormatTSV, FormatMTX, FormatBin, FormatMETIS, FormatAdjList, FormatDIMACS, FormatSG, FormatWSG} {
		got, err := ParseFormat(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), got, err)
		}
	}
	if f, err := ParseFormat("MTX"); err != nil || f != FormatMTX {
		t.Errorf("case-insensitive: %v %v", f, err)
	}
	_, err := ParseFormat("csvx")
	if err == nil || !strings.Contains(err.Error(), "auto, edgelist, tsv, mtx, bin") {
		t.Errorf("got %v, want the valid names listed", err)
	}
	if s := Format(42).String(); s != "Format(42)" {
		t.Errorf("got %q", s)
	}
}

func TestFormatFromName(t *testing.T) {
	tests := map[string]Format{
		"a.mtx": FormatMTX, "a.MTX.gz": FormatMTX, "a.mtx.zst": FormatMTX,
		"a.bin": FormatBin, "a.tgb.zst": FormatBin,
		"a.tsv": FormatTSV, "a.txt": FormatEdgeList, "a.el": FormatEdgeList, "a.edges.gz": FormatEdgeList,
		"a.csv": FormatEdgeList, "a.snap": FormatEdgeList, "noext": FormatAuto, "-": FormatAuto,
		"a.graph": FormatMETIS, "a.graph.bz2": FormatMETIS, "a.metis.xz": FormatMETIS, "a.adjlist": FormatAdjList,
		"a.adj.gz": FormatAdjList, "a.gr": FormatDIMACS, "a.col": FormatDIMACS, "a.sg": FormatSG, "a.wsg.zst": FormatWSG,
		"a.tar.gz": FormatAuto,
	}
	for name, want := range tests {
		if got := formatFromName(name); got != want {
			t.Errorf("formatFromName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestDetection checks that content beats the extension and that Format
// beats both.
func TestDetection(t *testing.T) {
	edges := ed(1, 2, 2, 3)
	enc := func(f Format, comp string) []byte {
		var b bytes.Buffer
		if err := Write(&b, edges, WriteOptions{Format: f, Compression: comp}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	tests := []struct {
		name   string
		data   []byte
		file   string
		force  Format
		want   Format
		errHas string
	}{
		{"mtx content in .txt", enc(FormatMTX, ""), "x.txt", FormatAuto, FormatMTX, ""},
		{"bin content in .txt.gz", enc(FormatBin, "gzip"), "x.txt.gz", FormatAuto, FormatBin, ""},
		{"bin content no name", enc(FormatBin, "zstd"), "-", FormatAuto, FormatBin, ""},
		{"text in .bin", enc(FormatEdgeList, ""), "x.bin", FormatAuto, FormatBin, "not a binary edge list"},
		{"forced edgelist on .bin", enc(FormatEdgeList, ""), "x.bin", FormatEdgeList, FormatEdgeList, ""},
		{"forced tsv", enc(FormatTSV, ""), "x", FormatTSV, FormatTSV, ""},
		{"forced bin on text", enc(FormatEdgeList, ""), "x.txt", FormatBin, FormatBin, "not a binary edge list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := Read(t.Context(), bytes.NewReader(tc.data), tc.file, ReadOptions{Format: tc.force})
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("got %v, want an error with %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Format != tc.want || len(got) != len(edges) {
				t.Fatalf("format %v, %d edges; want %v, %d", st.Format, len(got), tc.want, len(edges))
			}
		})
	}
	// Forced to edge list, a Matrix Market file is a comment and three
	// edges, 1-based and with the size line among them.
	got, _, err := Read(t.Context(), bytes.NewReader(enc(FormatMTX, "")), "x.mtx", ReadOptions{Format: FormatEdgeList})
	if err != nil || !reflect.DeepEqual(got, ed(4, 4, 2, 3, 3, 4)) {
		t.Errorf("forced edge list on mtx: %v, %v", got, err)
	}
	if _, _, err := Read(t.Context(), strings.NewReader("1 2\n"), "x", ReadOptions{Format: Format(9)}); err == nil {
		t.Error("invalid format accepted")
	}
}

func TestEmptyInputs(t *testing.T) {
	for _, name := range []string{"e.txt", "e.mtx", "e.bin", "-"} {
		got, st, err := Read(t.Context(), strings.NewReader(""), name, ReadOptions{})
		if err != nil || len(got) != 0 || st.Edges != 0 {
			t.Errorf("%s: %d edges, %v", name, len(got), err)
		}
	}
	for _, comp := range []string{"gzip", "zstd"} {
		var b bytes.Buffer
		if err := Write(&b, nil, WriteOptions{Compression: comp}); err != nil {
			t.Fatal(err)
		}
		got, st, err := Read(t.Context(), &b, "e.txt", ReadOptions{})
		if err != nil || len(got) != 0 || st.Compression != comp {
			t.Errorf("empty %s: %d edges, %+v, %v", comp, len(got), st, err)
		}
	}
}

// TestWriteReadOnly: the formats that are only read are not written, so
// that no file named .graph or .sg holds an edge list.
func TestWriteReadOnly(t *testing.T) {
	for _, f := range []Format{FormatMETIS, FormatAdjList, FormatDIMACS, FormatSG, FormatWSG} {
		var b bytes.Buffer
		if err := Write(&b, ed(1, 2), WriteOptions{Format: f}); err == nil || !strings.Contains(err.Error(), "read, not written") {
			t.Errorf("%v: got %v", f, err)
		}
	}
	if err := WriteFile(t.TempDir()+"/g.graph", ed(1, 2), WriteOptions{}); err == nil {
		t.Error("an edge list was written to g.graph")
	}
}

// TestCompressedFixtures: bzip2, xz and a KONECT-like tar.bz2 made by
// the bzip2, xz and tar programs are read; a zip is refused.
func TestCompressedFixtures(t *testing.T) {
	for _, tc := range []struct{ file, comp, member string }{
		{"tri.txt.bz2", compBzip2, ""}, {"tri.txt.xz", compXz, ""}, {"konect-tri.tar.bz2", compBzip2, "tri/out.tri"},
	} {
		got, st, err := ReadFile(t.Context(), "testdata/"+tc.file, ReadOptions{})
		if err != nil || !reflect.DeepEqual(got, ed(1, 2, 2, 3, 3, 1)) || st.Compression != tc.comp || st.Member != tc.member {
			t.Errorf("%s: %v, %+v, %v", tc.file, got, st, err)
		}
	}
	var re *RefusedError
	if _, _, err := ReadFile(t.Context(), "testdata/tri.zip", ReadOptions{}); !errors.As(err, &re) || re.Kind != "a zip archive" {
		t.Errorf("zip: %v", err)
	}
}
