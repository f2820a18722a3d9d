package graph

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// datasetsDir is ../shared/datasets relative to the project root.
var datasetsDir = filepath.Join("..", "..", "shared", "datasets")

type manifestEntry struct {
	name, file     string
	vertices, edge int64
	triangles      uint64
}

func readManifest(t *testing.T) []manifestEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(datasetsDir, "MANIFEST.tsv"))
	if os.IsNotExist(err) {
		t.Skipf("no datasets at %s (shared/datasets sits beside the project)", datasetsDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []manifestEntry
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 6 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err1 := strconv.ParseInt(f[3], 10, 64)
		e, err2 := strconv.ParseInt(f[4], 10, 64)
		tri, err3 := strconv.ParseUint(f[5], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("manifest line %q: bad counts", line)
		}
		out = append(out, manifestEntry{name: f[0], file: f[1], vertices: v, edge: e, triangles: tri})
	}
	if len(out) == 0 {
		t.Fatal("manifest lists no graphs")
	}
	return out
}

// readEdgeList is a deliberately small reader (the real ones live in
// graph/edgeio): gzip by extension, '#' and '%' comments, any blank
// separators, CRLF, and the first two fields of each line.
func readEdgeList(t *testing.T, path string) []Edge {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	var edges []Edge
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
		edges = append(edges, Edge{u, v})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return edges
}

func TestCleanDatasets(t *testing.T) {
	for _, m := range readManifest(t) {
		t.Run(m.name, func(t *testing.T) {
			edges := readEdgeList(t, filepath.Join(datasetsDir, m.file))
			u, st, err := Clean(edges, CleanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Vertices + int64(st.IsolatedIDs); got != m.vertices || st.Edges != m.edge {
				t.Fatalf("%d vertices (%d + %d loop-only), %d edges; manifest says %d, %d",
					got, st.Vertices, st.IsolatedIDs, st.Edges, m.vertices, m.edge)
			}
			if st.InputEdges != uint64(len(edges)) ||
				st.InputEdges != st.SelfLoops+st.Duplicates+uint64(st.Edges) {
				t.Fatalf("stats do not add up: %+v", st)
			}
			// Both orientations must give the published triangle count.
			for _, order := range []Order{OrderDegree, OrderDegeneracy} {
				fwd, _, _, err := Orient(u, order, 0)
				if err != nil {
					t.Fatal(err)
				}
				if got := markTriangles(fwd); got != m.triangles {
					t.Fatalf("%s order: %d triangles, manifest says %d", order, got, m.triangles)
				}
			}
			if testing.Short() || raceEnabled {
				return
			}
			// Full cross-check on real data: the naive cleaner and
			// both orientations.
			g := naiveClean(edges)
			checkAgainstNaive(t, edges, u, st)
			for _, order := range []Order{OrderDegree, OrderDegeneracy} {
				fwd, rank, ost, err := Orient(u, order, 0)
				if err != nil {
					t.Fatal(err)
				}
				checkOrientation(t, g, fwd, rank, ost)
				if order == OrderDegeneracy && ost.MaxOutDegree > ost.Degeneracy {
					t.Fatalf("max out-degree %d above degeneracy %d", ost.MaxOutDegree, ost.Degeneracy)
				}
			}
		})
	}
}

// markTriangles counts the triangles of a forward graph: mark u's
// out-neighbours, then look for marks among their out-neighbours. Each
// triangle a < b < c is found once, from a through b.
func markTriangles(fwd *CSR) uint64 {
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
