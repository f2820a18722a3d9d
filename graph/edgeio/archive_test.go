package edgeio

import (
	"reflect"
	"strings"
	"testing"
)

// TestTarMembers: the one graph member is read, whatever else the
// archive holds; several or none is an error naming them.
func TestTarMembers(t *testing.T) {
	tri := []byte("1 2\n2 3\n3 1\n")
	mtx := []byte("%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n3 1\n")
	readme := []byte("This is a README.\n")
	tests := []struct {
		name    string
		members []member
		comp    string
		member  string // "" for an error
		has     string // the error
	}{
		{"one file", []member{{"tri.txt", tri}}, "", "tri.txt", ""},
		{"konect", []member{{"x/README.x", readme}, {"x/meta.x", readme}, {"x/out.x", tri}, {"x/ent.x.id", readme}}, compGzip, "x/out.x", ""},
		{"suitesparse", []member{{"g/g.mtx", mtx}, {"g/g_coord.mtx", mtx}, {"g/g_b.mtx", mtx}}, compXz, "g/g.mtx", ""},
		{"docs and hidden files", []member{{"._g.txt", readme}, {"LICENSE", readme}, {"notes.md", readme}, {"g.txt", tri}, {".DS_Store", readme}}, compZstd, "g.txt", ""},
		{"compressed member", []member{{"g/g.txt.gz", compressed(t, compGzip, tri)}}, "", "g/g.txt.gz", ""},
		{"two graphs", []member{{"a.txt", tri}, {"b.txt", tri}}, "", "", "holds 2 graph files (a.txt, b.txt): extract the one to count"},
		{"aux before main", []member{{"g/g_coord.mtx", mtx}, {"g/g.mtx", mtx}}, "", "", "holds 2 graph files (g/g_coord.mtx, g/g.mtx)"},
		{"two named after dir", []member{{"g/g.mtx", mtx}, {"g/g.txt", tri}}, "", "", "holds 2 graph files"},
		{"only docs", []member{{"README", readme}, {"LICENSE.txt", readme}}, compGzip, "", "holds no graph file (members: README, LICENSE.txt)"},
		{"only a directory", []member{{"d/", nil}}, "", "", "holds no graph file (members: d/)"},
		{"empty: zero blocks, no tar magic", nil, "", "", "t.tar:1:"},
		{"zip member", []member{{"g.zip", []byte("PK\x03\x04rest")}}, "", "", "t.tar[g.zip]: this is a zip archive"},
		{"graphml member", []member{{"g.xml", []byte(`<?xml version="1.0"?><graphml><edge source="1" target="2"/></graphml>`)}}, "", "", "t.tar[g.xml]: this looks like GraphML"},
		{"bad member line", []member{{"g.txt", []byte("1 2\n2 x\n")}}, "", "", "t.tar[g.txt]:2:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tarball(t, tc.members...)
			name := "t.tar"
			if tc.comp != "" {
				data, name = compressed(t, tc.comp, data), "t.tar."+map[string]string{compGzip: "gz", compXz: "xz", compZstd: "zst"}[tc.comp]
			}
			for _, opts := range []ReadOptions{{}, {chunkSize: 7, Workers: 3}} {
				got, st, err := ReadFile(t.Context(), writeBytes(t, name, data), opts)
				if tc.member == "" {
					if err == nil || !strings.Contains(err.Error(), tc.has) {
						t.Fatalf("got %v, want an error saying %q", err, tc.has)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				comp := tc.comp
				if strings.HasSuffix(tc.member, ".gz") {
					comp = compGzip // the member's own
				}
				if st.Member != tc.member || st.Archive != "tar" || st.Compression != comp || len(edgeSet(got, nil)) != 3 {
					t.Fatalf("edges %v, stats %+v; want member %q", got, st, tc.member)
				}
			}
		})
	}
}

// TestTarFormat: a forced format applies to the member; the member's
// name, not the archive's, gives its extension.
func TestTarFormat(t *testing.T) {
	k4 := []byte("4 6\n2 3 4\n1 3 4\n1 2 4\n1 2 3\n")
	data := tarball(t, member{"k4.graph", k4})
	got, st, err := ReadFile(t.Context(), writeBytes(t, "k4.tar", data), ReadOptions{})
	if err != nil || st.Format != FormatMETIS || len(edgeSet(got, nil)) != 6 {
		t.Fatalf("%v %+v %v", got, st, err)
	}
	data = tarball(t, member{"k4.txt", []byte("1 2 3 4\n2 3 4\n3 4\n")})
	got, st, err = ReadFile(t.Context(), writeBytes(t, "k4.tar", data), ReadOptions{Format: FormatAdjList})
	if err != nil || st.Format != FormatAdjList || !reflect.DeepEqual(len(edgeSet(got, nil)), 6) {
		t.Fatalf("%v %+v %v", got, st, err)
	}
}
