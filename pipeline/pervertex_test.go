package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// readCounts reads per-vertex and per-edge TSV files into maps.
func readCounts(t *testing.T, vpath, epath string) (deg, tri map[uint64]uint64, sup map[[2]uint64]uint64) {
	t.Helper()
	rows := func(path string) [][]uint64 {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		var out [][]uint64
		for sc.Scan() {
			var r []uint64
			for _, s := range strings.Split(sc.Text(), "\t")[:3] {
				x, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				r = append(r, x)
			}
			out = append(out, r)
		}
		return out
	}
	deg, tri, sup = map[uint64]uint64{}, map[uint64]uint64{}, map[[2]uint64]uint64{}
	for _, r := range rows(vpath) {
		deg[r[0]], tri[r[0]] = r[1], r[2]
	}
	for _, r := range rows(epath) {
		if _, dup := sup[[2]uint64{r[0], r[1]}]; dup || r[0] >= r[1] {
			t.Fatalf("%s: edge %d-%d twice or out of order", epath, r[0], r[1])
		}
		sup[[2]uint64{r[0], r[1]}] = r[2]
	}
	return deg, tri, sup
}

// checkAgainst compares the files of a count with the truth.
func checkAgainst(t *testing.T, want *testgraphs.Local, rep *Report, vpath, epath string) {
	t.Helper()
	if rep.Triangles != want.Total {
		t.Fatalf("%d triangles, want %d", rep.Triangles, want.Total)
	}
	deg, tri, sup := readCounts(t, vpath, epath)
	if len(deg) != len(want.Degree) || len(sup) != len(want.Support) {
		t.Fatalf("%d vertices and %d edges, want %d and %d", len(deg), len(sup), len(want.Degree), len(want.Support))
	}
	for x, d := range want.Degree {
		if deg[x] != d || tri[x] != want.Triangles[x] {
			t.Fatalf("vertex %d: degree %d, triangles %d; want %d, %d", x, deg[x], tri[x], d, want.Triangles[x])
		}
	}
	for e, s := range want.Support {
		if got, ok := sup[e]; !ok || got != s {
			t.Fatalf("edge %v: support %d (present %v), want %d", e, got, ok, s)
		}
	}
	if rep.AverageClustering == nil || rep.PerVertex == nil {
		t.Fatal("no clustering in the report")
	}
}

// TestPerVertexEveryPath counts per vertex and per edge whole, at P = 2,
// 3, 4 with both schemes, and through shards, and compares every file
// with an independent count.
func TestPerVertexEveryPath(t *testing.T) {
	ctx := context.Background()
	path, _ := writeEdges(t)
	want := testgraphs.LocalCounts(testgraphs.ReadEdges(t, path))
	dir := t.TempDir()
	opts := func(name string) counts.Options {
		return counts.Options{VerticesFile: filepath.Join(dir, name+".v.tsv"), EdgesFile: filepath.Join(dir, name+".e.tsv"), Top: 2}
	}
	cfg := testConfig(cpuSlots(1, "auto"))
	cfg.PerVertex = opts("whole")
	rep, err := CountFile(ctx, path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainst(t, want, rep, cfg.PerVertex.VerticesFile, cfg.PerVertex.EdgesFile)
	avg := *rep.AverageClustering
	for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
		for _, p := range []int{2, 3, 4} {
			name := fmt.Sprintf("%v-%d", sc, p)
			t.Run(name, func(t *testing.T) {
				cfg := testConfig(cpuSlots(2, "auto"))
				cfg.Scheme, cfg.P, cfg.PerVertex = sc, p, opts(name)
				rep, err := CountFilePartitioned(ctx, path, cfg)
				if err != nil {
					t.Fatal(err)
				}
				checkAgainst(t, want, rep, cfg.PerVertex.VerticesFile, cfg.PerVertex.EdgesFile)
				if *rep.AverageClustering != avg {
					t.Fatalf("average clustering %v, whole graph %v", *rep.AverageClustering, avg)
				}

				store, err := storage.Open(filepath.Join(dir, name+".shards"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := partition.PartitionFile(ctx, path, cfg.Read, store, partition.Config{Scheme: sc, P: p, Workers: 2}); err != nil {
					t.Fatal(err)
				}
				cfg.PerVertex = opts(name + "-shards")
				rep, err = CountShards(ctx, store, cfg)
				if err != nil {
					t.Fatal(err)
				}
				checkAgainst(t, want, rep, cfg.PerVertex.VerticesFile, cfg.PerVertex.EdgesFile)
			})
		}
	}
}

// TestPerVertexDatasets checks per-vertex and per-edge counts of the
// datasets at P = 3 against an independent count (the small ones by
// default, all of them in the long run).
func TestPerVertexDatasets(t *testing.T) {
	for _, d := range testgraphs.Datasets(t) {
		if d.Edges > 15000 && !testlong.Enabled() {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			want := testgraphs.LocalCounts(testgraphs.ReadEdges(t, d.Path))
			if want.Total != d.Triangles {
				t.Fatalf("independent count %d, the manifest says %d", want.Total, d.Triangles)
			}
			dir := t.TempDir()
			cfg := testConfig(cpuSlots(2, "auto"))
			cfg.Scheme, cfg.P = storage.SchemeHash, 3
			cfg.PerVertex = counts.Options{VerticesFile: filepath.Join(dir, "v.tsv"), EdgesFile: filepath.Join(dir, "e.tsv")}
			rep, err := CountFilePartitioned(context.Background(), d.Path, cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainst(t, want, rep, cfg.PerVertex.VerticesFile, cfg.PerVertex.EdgesFile)
		})
	}
}

// TestSettlePartialExactlyOnce drives the run's bookkeeping with the
// decisions a scheduler may make about one subtask: settled, overturned
// by a recount, reopened, settled again. The sums must hold the last
// settled partial exactly once.
func TestSettlePartialExactlyOnce(t *testing.T) {
	l, err := partition.NewHashLayout(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	sums := counts.NewBlocks(l, 4, func(i, j int) int64 { return 0 }, false)
	run := &localRun{sums: sums, tasks: []partition.Subtask{{I: 0, J: 1, K: 1}}, have: []bool{false}, added: make([]*api.Partial, 1), cfg: &Config{}}
	part := func(a uint64) *api.Partial {
		return &api.Partial{VI: []uint64{a, 0}, VJ: []uint64{a, 0}, VK: []uint64{0, a}}
	}
	done := func(p *api.Partial) {
		run.have[0] = true
		run.settlePartial(0, p)
	}
	total := func() []uint64 {
		c, err := sums.Counts(context.Background(), []uint64{10, 11, 12, 13}, func(int, int) int64 { return 0 }, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Triangles
	}
	done(part(1))
	done(part(1)) // a duplicate decision: still once
	if got := total(); fmt.Sprint(got) != "[1 1 0 1]" {
		t.Fatalf("after one settle: %v", got)
	}
	done(part(5)) // a recount overturned the first
	if got := total(); fmt.Sprint(got) != "[5 5 0 5]" {
		t.Fatalf("after the overturn: %v", got)
	}
	run.have[0] = false
	run.settlePartial(0, nil) // reopened
	if got := total(); fmt.Sprint(got) != "[0 0 0 0]" {
		t.Fatalf("after reopening: %v", got)
	}
	done(part(2))
	if got := total(); fmt.Sprint(got) != "[2 2 0 2]" || run.err != nil {
		t.Fatalf("after settling again: %v (%v)", got, run.err)
	}
	done(nil) // a settled result without partials fails the run
	if run.err == nil {
		t.Fatal("a result without partials did not fail the run")
	}
}
