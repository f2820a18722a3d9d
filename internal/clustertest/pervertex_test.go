package clustertest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/internal/testlong"
)

// bruteCounts counts per vertex and per edge from a SNAP edge list by
// neighbour-set intersection, independently of trigrid: support(u,v) =
// |N(u) ∩ N(v)|, triangles(x) = half the support of x's edges.
func bruteCounts(t *testing.T, file string) (tri map[uint64]uint64, sup map[[2]uint64]uint64) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	adj := map[uint64]map[uint64]bool{}
	link := func(a, b uint64) {
		if adj[a] == nil {
			adj[a] = map[uint64]bool{}
		}
		adj[a][b] = true
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		fs := strings.Fields(line)
		u, err1 := strconv.ParseUint(fs[0], 10, 64)
		v, err2 := strconv.ParseUint(fs[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %q", file, line)
		}
		if u != v {
			link(u, v)
			link(v, u)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	tri, sup = map[uint64]uint64{}, map[[2]uint64]uint64{}
	for u, nu := range adj {
		tri[u] += 0
		for v := range nu {
			if u >= v {
				continue
			}
			var s uint64
			for w := range nu {
				if adj[v][w] {
					s++
				}
			}
			sup[[2]uint64{u, v}] = s
			tri[u] += s
			tri[v] += s
		}
	}
	for x := range tri {
		tri[x] /= 2
	}
	return tri, sup
}

// readTSV returns a TSV counts file's lines after its header.
func readTSV(t *testing.T, path string) (header string, rows []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	return lines[0], lines[1:]
}

// checkAgainstBrute checks per-vertex and per-edge TSV files row by row
// against the brute-force counts.
func checkAgainstBrute(t *testing.T, vfile, efile string, tri map[uint64]uint64, sup map[[2]uint64]uint64) {
	t.Helper()
	_, vs := readTSV(t, vfile)
	if len(vs) != len(tri) {
		t.Fatalf("%s: %d vertices, brute force %d", vfile, len(vs), len(tri))
	}
	for _, r := range vs {
		fs := strings.Split(r, "\t")
		id, _ := strconv.ParseUint(fs[0], 10, 64)
		n, _ := strconv.ParseUint(fs[2], 10, 64)
		if want, ok := tri[id]; !ok || n != want {
			t.Fatalf("%s: vertex %d has %d triangles, brute force %d", vfile, id, n, want)
		}
	}
	_, es := readTSV(t, efile)
	if len(es) != len(sup) {
		t.Fatalf("%s: %d edges, brute force %d", efile, len(es), len(sup))
	}
	for _, r := range es {
		fs := strings.Split(r, "\t")
		u, _ := strconv.ParseUint(fs[0], 10, 64)
		v, _ := strconv.ParseUint(fs[1], 10, 64)
		s, _ := strconv.ParseUint(fs[2], 10, 64)
		if want, ok := sup[[2]uint64{u, v}]; !ok || s != want {
			t.Fatalf("%s: edge %d-%d has support %d, brute force %d", efile, u, v, s, want)
		}
	}
}

// sameRows checks that two TSV files hold the same header and rows, in
// any order (edges come in block order, which depends on P).
func sameRows(t *testing.T, got, want string) {
	t.Helper()
	gh, g := readTSV(t, got)
	wh, w := readTSV(t, want)
	slices.Sort(g)
	slices.Sort(w)
	if gh != wh || !slices.Equal(g, w) {
		t.Fatalf("%s differs from %s (%d and %d rows)", got, want, len(g), len(w))
	}
}

// inProcess writes the whole-graph per-vertex and per-edge files of
// `trigrid count`, the reference the cluster's files must equal.
func inProcess(t *testing.T, file string) (vfile, efile string, avg float64) {
	t.Helper()
	dir := t.TempDir()
	vfile, efile = filepath.Join(dir, "v.tsv"), filepath.Join(dir, "e.tsv")
	out, stderr, err := cli(t, 2*time.Minute, "count", "--json", "--device", "cpu", "--progress", "none",
		"--per-vertex", vfile, "--per-edge", efile, file)
	if err != nil {
		t.Fatalf("count: %v\n%s", err, stderr)
	}
	var rep struct {
		AverageClustering *float64 `json:"average_clustering"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.AverageClustering == nil {
		t.Fatalf("count output %q: %v", out, err)
	}
	return vfile, efile, *rep.AverageClustering
}

// perVertexResult is submit's --json object with its per-vertex summary.
type perVertexResult struct {
	result
	PerVertex *struct {
		AverageClustering float64 `json:"average_clustering"`
		VerticesRows      int64   `json:"vertices_rows"`
		EdgesRows         int64   `json:"edges_rows"`
		TopVertices       []struct {
			ID        uint64 `json:"id"`
			Triangles uint64 `json:"triangles"`
		} `json:"top_vertices"`
	} `json:"per_vertex"`
}

// A coordinator and three worker processes count ca-GrQc per vertex and
// per edge at P = 3 with both schemes; `submit` writes the files here,
// and they equal `trigrid count`'s whole-graph files and a brute force.
func TestPerVertexCluster(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	tri, sup := bruteCounts(t, file)
	refV, refE, refAvg := inProcess(t, file)
	checkAgainstBrute(t, refV, refE, tri, sup)
	c, _ := startCluster(t, 3, nil)
	for _, scheme := range []string{"hash", "range"} {
		t.Run(scheme, func(t *testing.T) {
			dir := t.TempDir()
			v, e := filepath.Join(dir, "v.tsv"), filepath.Join(dir, "e.tsv")
			out, stderr, err := cli(t, 2*time.Minute, "submit", "--coordinator", c.grpc, "--json",
				"--partitions", "3", "--scheme", scheme, "--per-vertex", v, "--per-edge", e, "--top", "3", file)
			if err != nil {
				t.Fatalf("submit: %v\n%s", err, stderr)
			}
			var r perVertexResult
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("submit output %q: %v", out, err)
			}
			checkDone(t, r.result, nil, stderr, grqcTriangles)
			if r.PerVertex == nil || r.PerVertex.VerticesRows != int64(len(tri)) || r.PerVertex.EdgesRows != int64(len(sup)) || len(r.PerVertex.TopVertices) != 3 {
				t.Fatalf("per-vertex summary %+v; want %d vertices, %d edges, 3 top vertices", r.PerVertex, len(tri), len(sup))
			}
			if top := r.PerVertex.TopVertices[0]; top.Triangles != slices.Max(mapValues(tri)) {
				t.Errorf("top vertex %d with %d triangles; brute force's most is %d", top.ID, top.Triangles, slices.Max(mapValues(tri)))
			}
			if d := r.PerVertex.AverageClustering - refAvg; d > 1e-12 || d < -1e-12 {
				t.Errorf("average clustering %v, count's %v", r.PerVertex.AverageClustering, refAvg)
			}
			sameRows(t, v, refV)
			sameRows(t, e, refE)
			checkAgainstBrute(t, v, e, tri, sup)

			// submit --job fetches the done job's counts again, in
			// another format.
			zstFile, tsvFile := filepath.Join(dir, "again.tsv.zst"), filepath.Join(dir, "again.tsv")
			for _, f := range []string{zstFile, tsvFile} {
				if _, stderr, err := cli(t, time.Minute, "submit", "--coordinator", c.grpc, "--job", r.Job, "--per-vertex", f); err != nil {
					t.Fatalf("submit --job: %v\n%s", err, stderr)
				}
			}
			sameRows(t, tsvFile, refV)
			if st, err := os.Stat(zstFile); err != nil || st.Size() == 0 {
				t.Fatalf("submit --job wrote no zstd file: %v", err)
			}
		})
	}
	// The report lists the average clustering and the top K; a job that
	// does not ask for per-vertex counts on the same cluster stays exact.
	t.Run("report", func(t *testing.T) {
		out, stderr, err := cli(t, 2*time.Minute, "submit", "--coordinator", c.grpc, "--partitions", "2", "--top", "2", file)
		if err != nil {
			t.Fatalf("submit: %v\n%s", err, stderr)
		}
		for _, want := range []string{"triangles   48260", "clustering  ", "top vertices", "top edges"} {
			if !strings.Contains(out, want) {
				t.Errorf("report without %q:\n%s", want, out)
			}
		}
	})
	t.Run("no per-vertex", func(t *testing.T) {
		r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "2", file)
		checkDone(t, r, err, stderr, grqcTriangles)
		_, stderr, err = cli(t, time.Minute, "submit", "--coordinator", c.grpc, "--job", r.Job, "--per-vertex", filepath.Join(t.TempDir(), "v.tsv"))
		if err == nil || !strings.Contains(stderr, "did not ask for per-vertex counts") {
			t.Fatalf("fetching the counts of a job without them: %v\n%s", err, stderr)
		}
	})
}

func mapValues(m map[uint64]uint64) []uint64 {
	out := make([]uint64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// A worker SIGKILLed while a per-vertex job runs: its attempts are
// counted again elsewhere and the files are still exact (each subtask's
// partial added once, from the attempt that won).
func TestPerVertexKillWorker(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	tri, sup := bruteCounts(t, file)
	c, ws := startCluster(t, 3, nil, slowWorker...)
	dir := t.TempDir()
	v, e := filepath.Join(dir, "v.tsv.gz"), filepath.Join(dir, "e.tsv")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "submit", "--coordinator", c.grpc, "--json",
		"--partitions", "3", "--scheme", "range", "--per-vertex", v, "--per-edge", e, file)
	cmd.Env = env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "a third of the subtasks settled", func() bool {
		sums, _ := metrics(t, c)
		return sums["trigrid_coordinator_subtasks_done_total"] >= 9
	})
	ws[0].kill()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("submit: %v\n%s", err, errb.String())
	}
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("submit output %q: %v", out.String(), err)
	}
	checkDone(t, r, nil, errb.String(), grqcTriangles)
	plain := filepath.Join(dir, "v.tsv")
	gz, err := os.ReadFile(v)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	checkAgainstBrute(t, plain, e, tri, sup)
}

// The coordinator is SIGKILLed mid-job and restarted on the same state:
// the settled subtasks whose partials were saved keep them (they are not
// counted again), `submit` reconnects and still writes exact files.
func TestPerVertexCoordinatorRestart(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	tri, sup := bruteCounts(t, file)
	c, _ := startCluster(t, 3, nil, slowWorker...)
	dir := t.TempDir()
	v, e := filepath.Join(dir, "v.tsv"), filepath.Join(dir, "e.tsv")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "submit", "--coordinator", c.grpc, "--json",
		"--partitions", "3", "--scheme", "hash", "--per-vertex", v, "--per-edge", e, file)
	cmd.Env = env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var settled float64
	waitFor(t, time.Minute, "a third of the subtasks settled", func() bool {
		sums, _ := metrics(t, c)
		settled = sums["trigrid_coordinator_subtasks_done_total"]
		return settled >= 9
	})
	c.kill()
	args := append([]string(nil), c.args...)
	for i := range args {
		switch args[i] {
		case "--listen":
			args[i+1] = c.grpc
		case "--gossip":
			args[i+1] = c.gossip
		case "--metrics":
			args[i+1] = c.metrics
		}
	}
	c2 := launchCoordinator(t, args)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("submit: %v\n%s", err, errb.String())
	}
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("submit output %q: %v", out.String(), err)
	}
	checkDone(t, r, nil, errb.String(), grqcTriangles)
	checkAgainstBrute(t, v, e, tri, sup)
	// A subtask settled just before the kill whose partials were not yet
	// saved is counted again (the restarted coordinator says how many it
	// resumed as settled); every one it resumed keeps its partials.
	resumed, _ := c2.logLine("job resumed", 30*time.Second)["settled"].(float64)
	sums, _ := metrics(t, c2)
	if again := sums["trigrid_coordinator_subtasks_done_total"]; resumed < 1 || again > float64(r.Subtasks)-resumed {
		t.Errorf("the restarted coordinator resumed %v of %d subtasks as settled and settled %v more; %v were settled before the kill",
			resumed, r.Subtasks, again, settled)
	}
}

// Per-edge partials larger than gRPC's default 4 MiB message (rmat 19 at
// P = 2: about 6 MB per subtask) reach the coordinator, and the files
// equal those of `count --shards` on the same shards byte for byte. The
// coordinator sends chunks of the largest size (4 MiB of data), which a
// worker fetching its shards and submit fetching the counts both take.
// Long: generating and counting rmat 19 takes tens of seconds on 2 cores.
func TestPerEdgeLargePartials(t *testing.T) {
	testlong.Skip(t)
	file := genGraph(t, 19, 16)
	shards := partitionShards(t, file, 2, "hash")
	dir := t.TempDir()
	refV, refE := filepath.Join(dir, "ref-v.bin"), filepath.Join(dir, "ref-e.bin")
	if _, stderr, err := cli(t, 5*time.Minute, "count", "--device", "cpu", "--progress", "none", "--shards", shards,
		"--per-vertex", refV, "--per-edge", refE); err != nil {
		t.Fatalf("count: %v\n%s", err, stderr)
	}
	c, _ := startCluster(t, 1, []string{"--chunk-size", "4MiB"})
	startWorker(t, c, "fetcher", "--fetch-shards")
	v, e := filepath.Join(dir, "v.bin"), filepath.Join(dir, "e.bin")
	r, stderr, err := submitWait(t, c, 5*time.Minute, "--shards", shards, "--per-vertex", v, "--per-edge", e)
	checkDone(t, r, err, stderr, wholeCount(t, file))
	for _, f := range [][2]string{{v, refV}, {e, refE}} {
		if !bytes.Equal(mustReadFile(t, f[0]), mustReadFile(t, f[1])) {
			t.Errorf("%s differs from count's %s", f[0], f[1])
		}
	}
	if sums, _ := metrics(t, c); sums["trigrid_coordinator_shard_bytes_served_total"] == 0 {
		t.Error("the coordinator served no shard bytes to the worker that fetches them")
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
