package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/pipeline"
)

// run executes the CLI in-process with args and returns stdout, stderr.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCommand()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

func countJSON(t *testing.T, args ...string) pipeline.Report {
	t.Helper()
	out, stderr, err := run(t, append([]string{"count", "--json", "--progress", "none", "--device", "cpu"}, args...)...)
	if err != nil {
		t.Fatalf("count %v: %v\n%s", args, err, stderr)
	}
	return decodeReport(t, out)
}

func decodeReport(t *testing.T, out string) pipeline.Report {
	t.Helper()
	var rep pipeline.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	return rep
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The README's first command counts this file; the figure is SNAP's
// published count for ca-GrQc (also in shared/datasets/MANIFEST.tsv).
func TestCountShippedGraph(t *testing.T) {
	rep := countJSON(t, filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz"))
	if rep.Triangles != 48260 || rep.Edges != 14484 || rep.Vertices+int64(rep.Removed.IsolatedIDs) != 5242 {
		t.Fatalf("got %d triangles, %d edges, %d+%d vertices; want 48260, 14484, 5242", rep.Triangles, rep.Edges, rep.Vertices, rep.Removed.IsolatedIDs)
	}
	out, _, err := run(t, "count", "--progress", "none", "--device", "cpu", filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"triangles    48,260", "edges        14,484", "self-loops", "read", "edges/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// JSON keys are a contract with scripts.
func TestCountJSONKeys(t *testing.T) {
	out, _, err := run(t, "count", "--json", "--progress", "none", "--device", "cpu", write(t, "k4.txt", "0 1\n0 2\n0 3\n1 2\n1 3\n2 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"triangles", "vertices", "edges", "removed", "seconds", "wedges", "max_degree"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks key %q: %s", k, out)
		}
	}
	if m["triangles"].(float64) != 4 {
		t.Errorf("K4 has 4 triangles, got %v", m["triangles"])
	}
}

func TestCountMessyInput(t *testing.T) {
	// A triangle listed both ways, with a self-loop, a duplicate, a
	// comment, a header, CRLF and a weight column: one triangle remains.
	messy := write(t, "messy.tsv", "% konect\r\nsrc\tdst\tw\r\n1\t2\t0.5\r\n2\t1\t1\r\n2\t3\t1\r\n3\t1\t1\r\n5\t5\t1\r\n1\t2\t9\r\n")
	rep := countJSON(t, messy)
	if rep.Triangles != 1 || rep.Edges != 3 || rep.Removed.SelfLoops != 1 || rep.Removed.Duplicates != 2 || rep.Removed.IsolatedIDs != 1 {
		t.Fatalf("got %+v", rep)
	}
	if rep := countJSON(t, write(t, "empty.txt", "")); rep.Triangles != 0 || rep.Edges != 0 {
		t.Fatalf("empty file: %+v", rep)
	}
}

func TestCountBadLine(t *testing.T) {
	bad := write(t, "bad.txt", "0 1\n1 2\n# fine\n2 x\n0 2\n")
	_, _, err := run(t, "count", "--progress", "none", "--device", "cpu", bad)
	if err == nil {
		t.Fatal("no error for a bad line")
	}
	for _, want := range []string{"bad.txt:4", `"2 x"`, "--skip-bad-lines"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	rep := countJSON(t, "--skip-bad-lines", bad)
	if rep.Triangles != 1 || rep.Removed.BadLines != 1 {
		t.Fatalf("with --skip-bad-lines: %+v", rep)
	}
}

func TestFlagErrors(t *testing.T) {
	f := write(t, "g.txt", "0 1\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"count", "--kernel", "magic", f}, "--kernel"},
		{[]string{"count", "--device", "tpu", f}, "--device"},
		{[]string{"count", "--order", "random", f}, "--order"},
		{[]string{"count", "--format", "xml", f}, "--format"},
		{[]string{"count", "--scheme", "zigzag", "-P", "2", f}, "--scheme"},
		{[]string{"count", "--device", "cpu", "--kernel", "wetric", f}, "--kernel"},
		{[]string{"count", "--progress", "sometimes", f}, "--progress"},
		{[]string{"count"}, "FILE"},
		{[]string{"count", filepath.Join(t.TempDir(), "missing.txt")}, "missing.txt"},
		{[]string{"count", "--partitions", "0", "--device-mem-limit", "lots", f}, "--device-mem-limit"},
		{[]string{"partition", f}, "-o"},
		{[]string{"partition", "-P", "0", "-o", t.TempDir(), f}, "-P"},
		{[]string{"partition", "--mem-limit", "1XB", "-o", t.TempDir(), f}, "--mem-limit"},
		{[]string{"gen", "rmat", "--scale", "0", "-o", filepath.Join(t.TempDir(), "x.bin")}, "--scale"},
	} {
		_, _, err := run(t, append(tt.args[:1:1], append([]string{"--progress", "none"}, tt.args[1:]...)...)...)
		if tt.args[0] != "count" {
			_, _, err = run(t, tt.args...)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one naming %q", tt.args, err, tt.want)
		}
	}
}

// gen -> convert -> count, partition -> info -> count --shards, and
// count --partitions must all agree with the whole-graph count, and every
// order and CPU kernel must agree too.
func TestPipelinesAgree(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "r.bin")
	if _, _, err := run(t, "gen", "rmat", "--scale", "11", "--edge-factor", "8", "--seed", "7", "-o", bin, "-q"); err != nil {
		t.Fatal(err)
	}
	txt := filepath.Join(dir, "r.txt.zst")
	if _, _, err := run(t, "convert", "-q", "--progress", "none", bin, txt); err != nil {
		t.Fatal(err)
	}
	want := countJSON(t, "--kernel", "reference", bin)
	if want.Triangles == 0 {
		t.Fatal("generated graph has no triangles; the test would prove nothing")
	}
	check := func(name string, rep pipeline.Report) {
		t.Helper()
		if rep.Triangles != want.Triangles || rep.Edges != want.Edges {
			t.Errorf("%s: %d triangles, %d edges; want %d, %d", name, rep.Triangles, rep.Edges, want.Triangles, want.Edges)
		}
	}
	check("text", countJSON(t, txt))
	for _, k := range []string{"auto", "hash", "merge"} {
		for _, o := range []string{"degree", "degeneracy"} {
			check(k+"/"+o, countJSON(t, "--kernel", k, "--order", o, bin))
		}
	}
	for _, s := range []string{"hash", "range"} {
		rep := countJSON(t, "--partitions", "3", "--scheme", s, bin)
		check("partitions "+s, rep)
		var sum uint64
		for _, st := range rep.Partition.Subtasks {
			sum += st.Triangles
		}
		if rep.Partition == nil || rep.Partition.P != 3 || sum != want.Triangles {
			t.Errorf("partitions %s: subtask report %+v does not add up to %d", s, rep.Partition, want.Triangles)
		}
		shards := filepath.Join(dir, "shards-"+s)
		if _, _, err := run(t, "partition", "--progress", "none", "-P", "4", "--scheme", s, "-o", shards, bin); err != nil {
			t.Fatal(err)
		}
		check("shards "+s, countJSON(t, "--shards", shards))
		out, _, err := run(t, "info", shards)
		if err != nil || !strings.Contains(out, "P=4") {
			t.Errorf("info: %v\n%s", err, out)
		}
		for _, lim := range []string{"4GiB", "0"} {
			other := filepath.Join(dir, "shards-"+s+"-"+lim)
			if _, _, err := run(t, "partition", "--progress", "none", "-P", "4", "--scheme", s, "--mem-limit", lim, "-o", other, bin); err != nil {
				t.Fatal(err)
			}
			check("shards "+s+" --mem-limit "+lim, countJSON(t, "--shards", other))
		}
	}
	check("auto P", countJSON(t, "--partitions", "0", "--device-mem-limit", "80MiB", bin))
}

func TestCountCorruptShard(t *testing.T) {
	dir := t.TempDir()
	g := write(t, "k5.txt", "0 1\n0 2\n0 3\n0 4\n1 2\n1 3\n1 4\n2 3\n2 4\n3 4\n")
	if _, _, err := run(t, "partition", "--progress", "none", "-P", "2", "-o", dir, g); err != nil {
		t.Fatal(err)
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "*.tgs"))
	if len(shards) == 0 {
		t.Fatal("no shards written")
	}
	data, err := os.ReadFile(shards[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(shards[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "count", "--progress", "none", "--device", "cpu", "--shards", dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Base(shards[0])) {
		t.Fatalf("corrupt shard: error %v, want one naming %s", err, filepath.Base(shards[0]))
	}
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, "version")
	if err != nil || !strings.HasPrefix(out, "trigrid ") {
		t.Fatalf("version: %q %v", out, err)
	}
}
