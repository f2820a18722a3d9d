package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph/edgeio"
)

// Text files as editors and other systems write them count the same as
// plain LF files: a triangle each, every edge read.
func TestCountTextVariants(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"bom.txt", "\xef\xbb\xbf1 2\n2 3\n3 1\n"},
		{"cr.txt", "1 2\r2 3\r3 1\r"},
		{"bomcrlf.tsv", "\xef\xbb\xbf1\t2\r\n2\t3\r\n3\t1\r\n"},
		{"bom.mtx", "\xef\xbb\xbf%%MatrixMarket matrix coordinate pattern symmetric\r3 3 3\r2 1\r3 2\r3 1\r"},
	} {
		rep := countJSON(t, write(t, tc.name, tc.content))
		if rep.Triangles != 1 || rep.Edges != 3 || rep.Input.RawEdges != 3 {
			t.Errorf("%s: %d triangles, %d edges, %d raw edges; want 1, 3, 3", tc.name, rep.Triangles, rep.Edges, rep.Input.RawEdges)
		}
	}
}

// A skipped header line is shown in the report and the JSON; a first line
// that is an edge with a typo is an error, or a counted bad line.
func TestCountHeaderLine(t *testing.T) {
	f := write(t, "h.txt", "# comment\nsource target\n1 2\n2 3\n3 1\n")
	rep := countJSON(t, f)
	if rep.Triangles != 1 || rep.Input.HeaderLine != 2 || rep.Input.Header != "source target" {
		t.Fatalf("got %d triangles, header %d %q; want 1, line 2 \"source target\"", rep.Triangles, rep.Input.HeaderLine, rep.Input.Header)
	}
	out, _, err := run(t, "count", "--progress", "none", "--device", "cpu", f)
	if err != nil || !strings.Contains(out, `header       line 2 skipped as a column header: "source target"`) {
		t.Fatalf("report lacks the header line (%v):\n%s", err, out)
	}
	if rep := countJSON(t, write(t, "n.txt", "1 2\n2 3\n3 1\n")); rep.Input.HeaderLine != 0 || rep.Input.Header != "" {
		t.Fatalf("no header, but the report has %+v", rep.Input)
	}

	typo := write(t, "typo.txt", "O 2\n2 3\n3 0\n1 2\n")
	_, _, err = run(t, "count", "--progress", "none", "--device", "cpu", typo)
	if err == nil || !strings.Contains(err.Error(), "typo.txt:1") || !strings.Contains(err.Error(), `"O 2"`) {
		t.Fatalf("got %v, want an error naming typo.txt:1", err)
	}
	rep = countJSON(t, "--skip-bad-lines", typo)
	if rep.Triangles != 0 || rep.Edges != 3 || rep.Removed.BadLines != 1 || rep.Input.HeaderLine != 0 {
		t.Fatalf("with --skip-bad-lines: %+v", rep)
	}
}

// A Matrix Market file that declares more ids than its entries use says
// how many, next to the isolated ids. The expected figure comes from a set
// of the ids in the file, not from cleaning.
func TestCountUnusedDeclaredIDs(t *testing.T) {
	edges, _, err := edgeio.ReadFile(t.Context(), filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz"), edgeio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[uint64]bool{}
	var maxID uint64
	var b strings.Builder
	for _, e := range edges {
		ids[e.U], ids[e.V] = true, true
		maxID = max(maxID, e.U, e.V)
		fmt.Fprintf(&b, "%d %d\n", e.U+1, e.V+1)
	}
	b.WriteString("7 7\n") // an id of its own in a self-loop only
	ids[6] = true
	declared := maxID + 1 + 5
	mtx := fmt.Sprintf("%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n", declared, declared, len(edges)+1) + b.String()
	f := write(t, "g.mtx", mtx)
	rep := countJSON(t, f)
	want := declared - uint64(len(ids))
	if rep.Triangles != 48260 || rep.Input.DeclaredVertices != declared || rep.Removed.UnusedDeclaredIDs != want {
		t.Fatalf("got %d triangles, %d declared, %d unused; want 48260, %d, %d", rep.Triangles, rep.Input.DeclaredVertices, rep.Removed.UnusedDeclaredIDs, declared, want)
	}
	if uint64(rep.Vertices)+rep.Removed.IsolatedIDs+rep.Removed.UnusedDeclaredIDs != declared {
		t.Fatalf("%d vertices + %d isolated + %d unused != %d declared", rep.Vertices, rep.Removed.IsolatedIDs, rep.Removed.UnusedDeclaredIDs, declared)
	}
	out, _, err := run(t, "count", "--progress", "none", "--device", "cpu", f)
	if err != nil || !strings.Contains(out, fmt.Sprintf("%s unused (the file declares %s)", nouns(want, "declared id"), commas(declared))) {
		t.Fatalf("report lacks the unused ids (%v):\n%s", err, out)
	}
	if rep := countJSON(t, "--partitions", "2", f); rep.Removed.UnusedDeclaredIDs != want || rep.Triangles != 48260 {
		t.Fatalf("partitioned: %d unused, %d triangles", rep.Removed.UnusedDeclaredIDs, rep.Triangles)
	}
}

func TestConvertSaysHeaderSkipped(t *testing.T) {
	in := write(t, "h.csv", "src,dst\n1,2\n")
	out, _, err := run(t, "convert", "--progress", "none", in, filepath.Join(t.TempDir(), "h.txt"))
	if err != nil || !strings.Contains(out, `skipped line 1 as a column header: "src,dst"`) {
		t.Fatalf("got %q, %v", out, err)
	}
}
