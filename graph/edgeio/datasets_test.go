package edgeio

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/internal/testlong"
)

// datasetsDir is the shared datasets directory with its MANIFEST.tsv;
// testgraphs skips the test when it is missing, or fails it in CI.
func datasetsDir(t testing.TB) string {
	testgraphs.Datasets(t)
	return testgraphs.Dir(t)
}

type manifestRow struct {
	name, file string
	vertices   int
}

func readManifest(t testing.TB, dir string) []manifestRow {
	b, err := os.ReadFile(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []manifestRow
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, "\t")
		if len(f) < 4 || strings.HasPrefix(l, "#") {
			continue
		}
		v, err := strconv.Atoi(f[3])
		if err != nil {
			t.Fatalf("MANIFEST.tsv: %q: %v", l, err)
		}
		rows = append(rows, manifestRow{f[0], f[1], v})
	}
	return rows
}

// TestDatasets reads every manifest file and checks the result against an
// independent reading with the standard library: bufio.Scanner and
// compress/gzip, strings.Fields and strconv. The distinct ids must match
// the manifest's vertex count.
func TestDatasets(t *testing.T) {
	dir := datasetsDir(t)
	for _, row := range readManifest(t, dir) {
		t.Run(row.name, func(t *testing.T) {
			path := filepath.Join(dir, row.file)
			if fi, err := os.Stat(path); raceEnabled && !testlong.Enabled() && err == nil && fi.Size() > 1<<20 {
				t.Skip("files above 1 MiB are read under -race only in the long tests; the race detector makes them slow")
			}
			got, st, err := ReadFile(t.Context(), path, ReadOptions{chunkSize: 1 << 16})
			if err != nil {
				t.Fatal(err)
			}

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
				r = zr
			}
			var want []graph.Edge
			var lines, comments int64
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				lines++
				l := strings.TrimSpace(sc.Text())
				if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "%") {
					comments++
					continue
				}
				fs := strings.Fields(l)
				u, err1 := strconv.ParseUint(fs[0], 10, 64)
				v, err2 := strconv.ParseUint(fs[1], 10, 64)
				if err1 != nil || err2 != nil {
					t.Fatalf("reference reading: line %d: %q", lines, l)
				}
				want = append(want, graph.Edge{U: u, V: v})
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d edges differ from the reference's %d", len(got), len(want))
			}
			if st.Lines != lines || st.Comments != comments || st.Edges != int64(len(want)) || st.BadLines != 0 || st.HeaderLines != 0 {
				t.Fatalf("stats %+v; reference: %d lines, %d comments, %d edges", st, lines, comments, len(want))
			}
			ids := make(map[uint64]struct{})
			for _, e := range got {
				ids[e.U], ids[e.V] = struct{}{}, struct{}{}
			}
			if len(ids) != row.vertices {
				t.Fatalf("%d distinct ids, manifest says %d vertices", len(ids), row.vertices)
			}
		})
	}
}
