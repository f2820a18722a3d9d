package kernels

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

var datasetsDir = filepath.Join("..", "..", "shared", "datasets")

// readEdgeList parses a SNAP-style edge list: lines starting with # or %
// are comments, the first two integer fields are an edge, ids are compacted
// to 0..n-1 in order of first appearance.
func readEdgeList(t testing.TB, path string) (int, [][2]uint32) {
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
			t.Fatalf("%s: %v", path, err)
		}
		defer zr.Close()
		r = zr
	}
	ids := map[uint64]uint32{}
	id := func(x uint64) uint32 {
		v, ok := ids[x]
		if !ok {
			v = uint32(len(ids))
			ids[x] = v
		}
		return v
	}
	var edges [][2]uint32
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == '%' {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 2 {
			t.Fatalf("%s:%d: want two ids, got %q", path, line, text)
		}
		a, err1 := strconv.ParseUint(fields[0], 10, 64)
		b, err2 := strconv.ParseUint(fields[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s:%d: bad ids in %q", path, line, text)
		}
		edges = append(edges, [2]uint32{id(a), id(b)})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return len(ids), edges
}

type dataset struct {
	name, file string
	triangles  uint64
}

// datasets reads MANIFEST.tsv, skipping the test when the directory is
// absent (a checkout without ../shared).
func datasets(t testing.TB) []dataset {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(datasetsDir, "MANIFEST.tsv"))
	if os.IsNotExist(err) {
		t.Skipf("datasets not found at %s: skipping real-graph checks", datasetsDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	var ds []dataset
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Split(strings.TrimRight(line, "\r"), "\t")
		if len(f) < 6 || strings.HasPrefix(f[0], "#") {
			continue
		}
		tri, err := strconv.ParseUint(f[5], 10, 64)
		if err != nil {
			t.Fatalf("MANIFEST.tsv: %s: triangles %q: %v", f[0], f[5], err)
		}
		ds = append(ds, dataset{f[0], f[1], tri})
	}
	if len(ds) == 0 {
		t.Fatal("MANIFEST.tsv lists no datasets")
	}
	return ds
}

func TestDatasets(t *testing.T) {
	for _, d := range datasets(t) {
		t.Run(d.name, func(t *testing.T) {
			if testing.Short() && d.triangles > 1e6 {
				t.Skip("large dataset in -short mode")
			}
			s := Whole(forward(readEdgeList(t, filepath.Join(datasetsDir, d.file))))
			for _, c := range testCounters(t) {
				if got := countWith(t, c, s); got != d.triangles {
					t.Errorf("%s = %d, MANIFEST says %d", c.Name(), got, d.triangles)
				}
			}
		})
	}
}
