package testgraphs

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// stopped stands in for a testing.TB so that a helper's Fatalf and Skipf
// can be seen instead of ending the test that calls it.
type stopped struct {
	testing.TB
	how string // "fatal" or "skip", empty when the helper returned
	msg string
}

func (s *stopped) Helper() {}
func (s *stopped) Fatalf(format string, args ...any) {
	s.how, s.msg = "fatal", fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (s *stopped) Skipf(format string, args ...any) {
	s.how, s.msg = "skip", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f on its own goroutine, as the testing package does, so that
// Goexit ends only f.
func run(f func(t testing.TB)) *stopped {
	s := &stopped{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(s)
	}()
	<-done
	return s
}

const sample = "# a comment\r\n% another\r\n\r\n1 2\r\n  3\t4 extra\r\n\n5 5\r\n2 1"

var sampleEdges = [][2]uint64{{1, 2}, {3, 4}, {5, 5}, {2, 1}}

func TestReadEdges(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "g.txt")
	if err := os.WriteFile(plain, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	packed := filepath.Join(dir, "g.txt.gz")
	f, err := os.Create(packed)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write([]byte(sample)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{plain, packed} {
		if got := ReadEdges(t, p); !reflect.DeepEqual(got, sampleEdges) {
			t.Errorf("%s: %v, want %v", filepath.Base(p), got, sampleEdges)
		}
	}

	for _, bad := range []string{"1\n", "1 x\n", "-1 2\n"} {
		p := filepath.Join(dir, "bad.txt")
		if err := os.WriteFile(p, []byte("0 1\n"+bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if s := run(func(t testing.TB) { ReadEdges(t, p) }); s.how != "fatal" || !strings.Contains(s.msg, "bad.txt:2:") {
			t.Errorf("%q: %s %q, want a failure at line 2", bad, s.how, s.msg)
		}
	}
}

func TestReadManifest(t *testing.T) {
	dir := t.TempDir()
	manifest := "# name\tfile\tformat\tvertices\tedges\ttriangles\tnotes\r\n" +
		"tri\ttri.txt\tedgelist\t3\t3\t1\ta triangle\r\n" +
		"\n" +
		"k4\tk4.txt.gz\tedgelist+gzip\t4\t6\t4\n"
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST.tsv"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []Dataset{
		{Name: "tri", File: "tri.txt", Path: filepath.Join(dir, "tri.txt"), Vertices: 3, Edges: 3, Triangles: 1},
		{Name: "k4", File: "k4.txt.gz", Path: filepath.Join(dir, "k4.txt.gz"), Vertices: 4, Edges: 6, Triangles: 4},
	}
	if got := ReadManifest(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}

	t.Setenv("CI", "")
	cases := []struct{ name, body, how string }{
		{"short-row", "tri\ttri.txt\tedgelist\t3\t3\n", "fatal"},
		{"bad-count", "tri\ttri.txt\tedgelist\t3\tthree\t1\n", "fatal"},
		{"negative-triangles", "tri\ttri.txt\tedgelist\t3\t3\t-1\n", "fatal"},
		{"empty", "# header only\n", "fatal"},
		{"missing", "", "skip"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.name != "missing" {
				if err := os.WriteFile(filepath.Join(dir, "MANIFEST.tsv"), []byte(c.body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if s := run(func(t testing.TB) { ReadManifest(t, dir) }); s.how != c.how {
				t.Fatalf("%s %q, want %s", s.how, s.msg, c.how)
			}
		})
	}
}

type rows [][]uint32

func (r rows) NumRows() int64       { return int64(len(r)) }
func (r rows) Row(i int64) []uint32 { return r[i] }

func TestMarkTriangles(t *testing.T) {
	// K4 oriented low to high has 4 triangles; vertex 4 hangs off 3.
	k4 := rows{{1, 2, 3}, {2, 3}, {3}, {4}, {}}
	if got := MarkTriangles(k4); got != 4 {
		t.Fatalf("K4: %d triangles, want 4", got)
	}
	if got := MarkTriangles(rows{}); got != 0 {
		t.Fatalf("empty: %d triangles", got)
	}
}

func TestDir(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "main")
	pkg := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	t.Setenv("CI", "")
	if s := run(func(t testing.TB) { Dir(t) }); s.how != "skip" {
		t.Fatalf("no datasets folder: %s %q, want a skip", s.how, s.msg)
	}
	// In CI missing datasets fail the test: a CI pass must include them.
	for _, ci := range []string{"true", "1"} {
		t.Setenv("CI", ci)
		if s := run(func(t testing.TB) { Dir(t) }); s.how != "fatal" {
			t.Fatalf("CI=%s, no datasets folder: %s %q, want a failure", ci, s.how, s.msg)
		}
		if s := run(func(t testing.TB) { ReadManifest(t, pkg) }); s.how != "fatal" {
			t.Fatalf("CI=%s, no manifest: %s %q, want a failure", ci, s.how, s.msg)
		}
	}
	t.Setenv("CI", "")
	want := filepath.Join(top, "shared", "datasets")
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	var got string
	if s := run(func(t testing.TB) { got = Dir(t) }); s.how != "" || got != want {
		t.Fatalf("Dir = %q (%s %q), want %q", got, s.how, s.msg, want)
	}
}

// TestSharedDatasets checks the real folder when this checkout has it:
// every listed file is present and the reader takes the gzip one too.
func TestSharedDatasets(t *testing.T) {
	ds := Datasets(t)
	if len(ds) != 8 {
		t.Errorf("%d datasets listed, want 8", len(ds))
	}
	for _, d := range ds {
		if _, err := os.Stat(d.Path); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
		if d.Vertices <= 0 || d.Edges <= 0 || d.Triangles == 0 {
			t.Errorf("%s: counts %+v", d.Name, d)
		}
		if strings.HasSuffix(d.File, ".gz") && !testing.Short() {
			if n := len(ReadEdges(t, d.Path)); int64(n) < d.Edges {
				t.Errorf("%s: %d lines of edges, fewer than the %d edges listed", d.Name, n, d.Edges)
			}
		}
	}
}
