package parquetcheck

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/trigrid/trigrid/counts"
)

// randomCounts makes counts for n vertices with random ids (some above
// 2^63), edges and values; the values need not be consistent for a format
// test, but the degrees are counted from the edges.
func randomCounts(n, m int) *counts.Counts {
	rng := rand.New(rand.NewPCG(3, 7))
	c := &counts.Counts{OrigID: make([]uint64, n), Triangles: make([]uint64, n), PerEdge: true}
	for x := range n {
		c.OrigID[x] = rng.Uint64()
		c.Triangles[x] = rng.Uint64N(1 << 40)
	}
	edges := make([][3]uint64, m)
	for i := range edges {
		u := rng.Uint32N(uint32(n - 1))
		edges[i] = [3]uint64{uint64(u), uint64(u + 1 + rng.Uint32N(uint32(n-1)-u)), rng.Uint64()}
	}
	c.Edges = func(yield func([2]uint32, uint64) bool) {
		for _, e := range edges {
			if !yield([2]uint32{uint32(e[0]), uint32(e[1])}, e[2]) {
				return
			}
		}
	}
	c.Degree = counts.Degrees(n, c.Edges)
	return c
}

// readTSV returns the rows of a TSV file without its header.
func readTSV(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var rows []string
	for sc.Scan() {
		rows = append(rows, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows[1:]
}

// readParquet reads every column of a Parquet file of INT64 (unsigned
// logical type) and DOUBLE columns and formats its rows as the TSV writer
// does.
func readParquet(t *testing.T, path string, names []string) []string {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	schema := r.MetaData().Schema
	if schema.NumColumns() != len(names) {
		t.Fatalf("%s: %d columns, want %d", path, schema.NumColumns(), len(names))
	}
	for i, name := range names {
		col := schema.Column(i)
		if col.Name() != name {
			t.Fatalf("%s: column %d is %q, want %q", path, i, col.Name(), name)
		}
		if lt := col.LogicalType().String(); col.PhysicalType().String() == "INT64" && !strings.Contains(lt, "isSigned=false") {
			t.Fatalf("%s: column %s has logical type %s, want unsigned", path, name, lt)
		}
	}
	var rows []string
	for g := range r.NumRowGroups() {
		rg := r.RowGroup(g)
		n := rg.NumRows()
		cols := make([][]string, len(names))
		for i := range names {
			cr, err := rg.Column(i)
			if err != nil {
				t.Fatal(err)
			}
			switch cr := cr.(type) {
			case *file.Int64ColumnChunkReader:
				vals := make([]int64, n)
				if _, read, err := cr.ReadBatch(n, vals, nil, nil); err != nil || int64(read) != n {
					t.Fatalf("%s: column %s: %d of %d values, %v", path, names[i], read, n, err)
				}
				for _, v := range vals {
					cols[i] = append(cols[i], strconv.FormatUint(uint64(v), 10))
				}
			case *file.Float64ColumnChunkReader:
				vals := make([]float64, n)
				if _, read, err := cr.ReadBatch(n, vals, nil, nil); err != nil || int64(read) != n {
					t.Fatalf("%s: column %s: %d of %d values, %v", path, names[i], read, n, err)
				}
				for _, v := range vals {
					cols[i] = append(cols[i], strconv.FormatFloat(v, 'g', -1, 64))
				}
			default:
				t.Fatalf("%s: column %s: unexpected reader %T", path, names[i], cr)
			}
		}
		for k := range n {
			fields := make([]string, len(names))
			for i := range names {
				fields[i] = cols[i][k]
			}
			rows = append(rows, strings.Join(fields, "\t"))
		}
	}
	return rows
}

func TestParquetEqualsTSV(t *testing.T) {
	ctx := context.Background()
	for _, size := range [][2]int{{1, 0}, {2, 1}, {5000, 20000}} {
		t.Run(fmt.Sprintf("n=%d", size[0]), func(t *testing.T) {
			dir := t.TempDir()
			c := randomCounts(size[0], size[1])
			p := func(name string) string { return filepath.Join(dir, name) }
			for _, name := range []string{"v.tsv", "v.parquet"} {
				if _, err := counts.WriteVertices(ctx, p(name), c); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range []string{"e.tsv", "e.parquet"} {
				if _, err := counts.WriteEdges(ctx, p(name), c); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []struct {
				base  string
				names []string
			}{{"v", []string{"id", "degree", "triangles", "clustering"}}, {"e", []string{"u", "v", "support"}}} {
				want := readTSV(t, p(f.base+".tsv"))
				got := readParquet(t, p(f.base+".parquet"), f.names)
				if len(got) != len(want) {
					t.Fatalf("%s: %d Parquet rows, %d TSV rows", f.base, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s row %d: Parquet %q, TSV %q", f.base, i, got[i], want[i])
					}
				}
			}
		})
	}
}
