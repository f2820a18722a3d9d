// Package testgraphs gives tests one way to reach the shared real-graph
// datasets: where they are, what MANIFEST.tsv says about them, and a
// reader for their edge lists. It imports nothing from this module but
// internal/testlong, so that package graph's own tests can use it without
// an import cycle.
package testgraphs

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
)

// Dataset sizes, in edges, up to which the default test run uses a dataset;
// larger ones are used only when long tests are on (testlong), as CI's
// second pass does. A whole-graph check takes the datasets up to
// DefaultEdges (ca-GrQc, ca-HepTh); a sweep over partition counts and
// kernels, which costs dozens of counts per dataset, takes those up to
// SweepEdges (ca-GrQc).
const (
	DefaultEdges = 30_000
	SweepEdges   = 15_000
)

// SkipLarge skips a whole-graph check of d when d has more than
// DefaultEdges edges and long tests are off.
func SkipLarge(t testing.TB, d Dataset) {
	t.Helper()
	skipAbove(t, d, DefaultEdges)
}

// SkipSweep skips a sweep over d when d has more than SweepEdges edges and
// long tests are off.
func SkipSweep(t testing.TB, d Dataset) {
	t.Helper()
	skipAbove(t, d, SweepEdges)
}

func skipAbove(t testing.TB, d Dataset, edges int64) {
	t.Helper()
	if d.Edges > edges && !testlong.Enabled() {
		t.Skipf("%s has %d edges: a long test (set %s=1)", d.Name, d.Edges, testlong.Env)
	}
}

// Dataset is one row of MANIFEST.tsv.
type Dataset struct {
	Name, File string
	// Path is File joined to the datasets directory.
	Path      string
	Vertices  int64
	Edges     int64
	Triangles uint64
}

// Dir returns the datasets directory, shared/datasets beside the module
// root. When it is absent, t is skipped on a developer's machine but fails
// in CI (CI set to true or 1, as CI services do), so that a CI run can
// never pass without the real-graph checks. The module root is found from
// the working directory rather than fixed "../.." so that packages at any
// depth agree on the place.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("testgraphs: %v", err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatalf("testgraphs: no go.mod above %s", wd)
		}
		root = parent
	}
	dir := filepath.Join(root, "..", "shared", "datasets")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		missing(t, "no datasets at %s (shared/datasets sits beside the project): skipping real-graph checks", dir)
	}
	return dir
}

// InCI reports whether the tests run in CI, where missing datasets are a
// failure rather than a reason to skip.
func InCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1"
}

// missing skips t, or fails it in CI.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf(format+" (CI is set: the datasets are required)", args...)
	}
	t.Skipf(format, args...)
}

// Datasets returns the rows of the real datasets' MANIFEST.tsv, skipping t
// when the datasets are absent.
func Datasets(t testing.TB) []Dataset {
	t.Helper()
	return ReadManifest(t, Dir(t))
}

// ReadManifest parses dir/MANIFEST.tsv (name, file, format, vertices,
// edges, triangles, notes). A missing manifest skips t (the folder may be
// a partial copy), or fails it in CI. A malformed row fails t, since a count read wrong would
// make every check against it meaningless.
func ReadManifest(t testing.TB, dir string) []Dataset {
	t.Helper()
	name := filepath.Join(dir, "MANIFEST.tsv")
	raw, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		missing(t, "no %s: skipping real-graph checks", name)
	}
	if err != nil {
		t.Fatalf("testgraphs: %v", err)
	}
	var ds []Dataset
	for i, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 6 {
			t.Fatalf("%s:%d: %d fields, want at least 6: %q", name, i+1, len(f), line)
		}
		v, err1 := strconv.ParseInt(f[3], 10, 64)
		e, err2 := strconv.ParseInt(f[4], 10, 64)
		tri, err3 := strconv.ParseUint(f[5], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s:%d: bad counts in %q", name, i+1, line)
		}
		ds = append(ds, Dataset{
			Name: f[0], File: f[1], Path: filepath.Join(dir, f[1]),
			Vertices: v, Edges: e, Triangles: tri,
		})
	}
	if len(ds) == 0 {
		t.Fatalf("%s lists no datasets", name)
	}
	return ds
}

// ReadEdges returns the (u, v) pairs of an edge list in file order, as
// written: no self-loop, duplicate or orientation handling. It is kept
// deliberately small and apart from graph/edgeio so that tests of the
// real readers and of what is built on them have an independent input:
// gzip by the .gz extension, '#' and '%' comment lines, blank lines,
// CRLF, and the first two integer fields of each line.
func ReadEdges(t testing.TB, path string) [][2]uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("testgraphs: %v", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer zr.Close()
		r = zr
	}
	var edges [][2]uint64
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '%' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("%s:%d: %q has fewer than two fields", path, ln, line)
		}
		u, err1 := strconv.ParseUint(f[0], 10, 64)
		v, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s:%d: %q is not an edge", path, ln, line)
		}
		edges = append(edges, [2]uint64{u, v})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return edges
}

// Forward is the part of graph.CSR that MarkTriangles reads, named here
// because this package cannot import graph.
type Forward interface {
	NumRows() int64
	Row(r int64) []uint32
}

// MarkTriangles counts the triangles of a forward graph (each edge stored
// once, from lower to higher rank) with no cleverness at all, so that it
// can check the real kernels: mark u's out-neighbours, then look for marks
// among their out-neighbours. Each triangle a < b < c is found once, from
// a through b.
func MarkTriangles(fwd Forward) uint64 {
	var total uint64
	mark := make([]uint32, fwd.NumRows())
	for u := int64(0); u < fwd.NumRows(); u++ {
		stamp := uint32(u) + 1
		nu := fwd.Row(u)
		for _, v := range nu {
			mark[v] = stamp
		}
		for _, v := range nu {
			for _, w := range fwd.Row(int64(v)) {
				if mark[w] == stamp {
					total++
				}
			}
		}
	}
	return total
}
