package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/internal/testgraphs"
)

// Per-vertex and per-edge counts on the GPU path equal an independent
// count, whole with each kernel that has a per-vertex mode, through
// partitions of both schemes and through shards, on a messy text graph and
// on an rmat graph ($TRIGRID_PV_SCALE, 10 by default), through a library
// with the CUDA ABI (the real one on a GPU machine).
func TestCountPerVertexThroughDeviceLibrary(t *testing.T) {
	lib := deviceLibrary(t)
	scale, _ := strconv.Atoi(envOr("TRIGRID_PV_SCALE", "10"))
	text, edges := messyGraph(11, 400, 6000)
	rmat, err := gen.RMAT(scale, 16, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	redges := make([][2]uint64, len(rmat))
	for i, e := range rmat {
		fmt.Fprintf(&b, "%d %d\n", e.U, e.V)
		redges[i] = [2]uint64{e.U, e.V}
	}
	dir := t.TempDir()
	for _, g := range []struct {
		name  string
		path  string
		edges [][2]uint64
	}{
		{"messy", write(t, "messy.txt", text), edges},
		{"rmat" + strconv.Itoa(scale), write(t, "rmat.txt", b.String()), redges},
	} {
		want := testgraphs.LocalCounts(g.edges)
		for _, extra := range [][]string{
			{},
			{"--kernel", "polak"},
			{"--kernel", "wetric"},
			{"--partitions", "2", "--scheme", "hash"},
			{"--partitions", "3", "--scheme", "range"},
			{"--partitions", "4", "--scheme", "hash"},
		} {
			vp, ep := filepath.Join(dir, "v.tsv"), filepath.Join(dir, "e.tsv")
			args := append([]string{"--device", "gpu", "--cuda-lib", lib}, extra...)
			rep := countJSONOn(t, append(args, "--per-vertex", vp, "--per-edge", ep, g.path)...)
			if rep.Device == "cpu" || rep.Triangles != want.Total || rep.AverageClustering == nil {
				t.Fatalf("%s %v: device %s, kernel %s, %d triangles (want %d)", g.name, extra, rep.Device, rep.Kernel, rep.Triangles, want.Total)
			}
			checkPerVertexFiles(t, want, vp, ep, rep.Transitivity, *rep.AverageClustering)
		}
		shards := filepath.Join(dir, g.name+".shards")
		if _, _, err := run(t, "partition", "--progress", "none", "-P", "3", "--scheme", "hash", "-o", shards, g.path); err != nil {
			t.Fatal(err)
		}
		vp, ep := filepath.Join(dir, "sv.tsv"), filepath.Join(dir, "se.tsv")
		rep := countJSONOn(t, "--device", "gpu", "--cuda-lib", lib, "--shards", shards, "--per-vertex", vp, "--per-edge", ep)
		if rep.Device == "cpu" || rep.Triangles != want.Total {
			t.Fatalf("%s shards: device %s, %d triangles (want %d)", g.name, rep.Device, rep.Triangles, want.Total)
		}
		checkPerVertexFiles(t, want, vp, ep, rep.Transitivity, *rep.AverageClustering)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
