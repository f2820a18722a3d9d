package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPartitionOutputRefusals: an unsupported or in-memory store URL is an
// error before anything is written, and a directory holding a
// partitioning is replaced only with --force.
func TestPartitionOutputRefusals(t *testing.T) {
	g := write(t, "k5.txt", "0 1\n0 2\n0 3\n0 4\n1 2\n1 3\n1 4\n2 3\n2 4\n3 4\n")
	t.Chdir(t.TempDir())
	for _, out := range []string{"mem://x", "s3://b/x", "gs://b/x"} {
		_, _, err := run(t, "partition", "--progress", "none", "-P", "2", "-o", out, g)
		if err == nil || !strings.Contains(err.Error(), "-o "+out) {
			t.Errorf("-o %s: error %v, want one naming the flag", out, err)
		}
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Fatalf("refused outputs created %v", ents)
	}

	dir := filepath.Join(t.TempDir(), "new", "shards")
	if _, stderr, err := run(t, "partition", "--progress", "none", "-P", "4", "-o", dir, g); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	_, _, err := run(t, "partition", "--progress", "none", "-P", "2", "-o", dir, g)
	if err == nil || !strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second partition into %s: error %v, want a refusal naming --force", dir, err)
	}
	if _, stderr, err := run(t, "partition", "--progress", "none", "-P", "2", "--scheme", "range", "--force", "-o", dir, g); err != nil {
		t.Fatalf("--force: %v\n%s", err, stderr)
	}
	if old, _ := filepath.Glob(filepath.Join(dir, "shard-0003-*")); len(old) != 0 {
		t.Fatalf("--force left shards of the old partitioning: %v", old)
	}
	if rep := countJSON(t, "--shards", dir); rep.Triangles != 10 || rep.Partition == nil || rep.Partition.P != 2 {
		t.Fatalf("after --force: %d triangles (want 10 for K5), partition %+v", rep.Triangles, rep.Partition)
	}
	// --force never deletes files a partitioning does not write.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "partition", "--progress", "none", "-P", "2", "--force", "-o", dir, g); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("--force over a foreign file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
}

const k5Edges = "0 1\n0 2\n0 3\n0 4\n1 2\n1 3\n1 4\n2 3\n2 4\n3 4\n"

// badGraph is an edge list whose last line is not an edge: a read of it
// fails only at the end.
func badGraph(t *testing.T) string {
	var b strings.Builder
	for k := range 5000 {
		fmt.Fprintf(&b, "%d %d\n", k, (k*7919+1)%5003)
	}
	b.WriteString("not an edge\n")
	return write(t, "bad.txt", b.String())
}

// dirNames lists a directory's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range ents {
		s = append(s, e.Name())
	}
	return s
}

// TestPartitionForceFailureKeepsOld: a --force run that fails part-way
// (a bad line at the end of its input) leaves the old partitioning in
// place, counting exactly, and nothing beside it; in memory and streaming.
func TestPartitionForceFailureKeepsOld(t *testing.T) {
	g := write(t, "k5.txt", k5Edges)
	bad := badGraph(t)
	for _, lim := range []string{"0", "4GiB"} {
		parent := t.TempDir()
		dir := filepath.Join(parent, "shards")
		args := []string{"partition", "--progress", "none", "--mem-limit", lim, "--tmp-dir", t.TempDir(), "-o", dir}
		if _, stderr, err := run(t, append(args, "-P", "2", g)...); err != nil {
			t.Fatalf("mem-limit %s: %v\n%s", lim, err, stderr)
		}
		if _, _, err := run(t, append(args, "-P", "4", "--force", bad)...); err == nil {
			t.Fatalf("mem-limit %s: --force over a bad input succeeded", lim)
		}
		if rep := countJSON(t, "--shards", dir); rep.Triangles != 10 || rep.Partition == nil || rep.Partition.P != 2 {
			t.Fatalf("mem-limit %s: after a failed --force: %d triangles (want 10), partition %+v", lim, rep.Triangles, rep.Partition)
		}
		if left := dirNames(t, parent); len(left) != 1 {
			t.Fatalf("mem-limit %s: beside the output: %v", lim, left)
		}
	}
}

// startFIFOPartition starts `trigrid partition` as a process reading a
// FIFO and returns it once the process is mid-run (its spill directory
// made, its input not finished), with the FIFO's writer and the edges it
// has been sent.
func startFIFOPartition(t *testing.T, out string, extra ...string) (*proc, *os.File, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("POSIX signals and FIFOs")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tmp, fifo := filepath.Join(dir, "tmp"), filepath.Join(dir, "in.txt")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	args := append([]string{"partition", "--progress", "none", "-P", "2", "--mem-limit", "4GiB", "--tmp-dir", tmp, "-o", out}, extra...)
	p := startTrigrid(t, bin, append(args, fifo)...)
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	var edges bytes.Buffer
	for k := range 20000 {
		fmt.Fprintf(&edges, "%d %d\n", k, (k*7919+1)%20011)
	}
	if _, err := w.Write(edges.Bytes()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the spill directory", func() bool { return len(spillDirs(t, tmp)) == 1 })
	return p, w, edges.String()
}

// TestPartitionForceInterruptedKeepsOld: SIGINT to a --force run in the
// middle of its input leaves the old partitioning counting exactly.
func TestPartitionForceInterruptedKeepsOld(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "shards")
	if _, stderr, err := run(t, "partition", "--progress", "none", "-P", "2", "-o", dir, write(t, "k5.txt", k5Edges)); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	p, w, _ := startFIFOPartition(t, dir, "--force")
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	p.caught(t, syscall.SIGINT)
	w.Close()
	if got := p.wait(t, 30*time.Second); got != 130 {
		t.Fatalf("exit status %d, want 130\n%s", got, p.stderr.String())
	}
	if rep := countJSON(t, "--shards", dir); rep.Triangles != 10 || rep.Partition == nil || rep.Partition.P != 2 {
		t.Fatalf("after an interrupted --force: %d triangles (want 10), partition %+v", rep.Triangles, rep.Partition)
	}
	if left := dirNames(t, parent); len(left) != 1 {
		t.Fatalf("beside the output: %v", left)
	}
}

// TestPartitionConcurrentRunsRefused: while one partition run (another
// process) writes a directory, a second run into it fails at once, naming
// the first's pid and host, with or without --force; the first finishes
// and its partitioning counts exactly.
func TestPartitionConcurrentRunsRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "shards")
	p, w, edges := startFIFOPartition(t, out)
	host, _ := os.Hostname()
	want := fmt.Sprintf("pid %d", p.cmd.Process.Pid)
	k5 := write(t, "k5.txt", k5Edges)
	for _, force := range []bool{false, true} {
		args := []string{"partition", "--progress", "none", "-P", "2", "-o", out, k5}
		if force {
			args = append(args, "--force")
		}
		start := time.Now()
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), host) {
			t.Fatalf("second run (force %v) while %s writes %s: error %v, want one naming %q on %s", force, want, out, err, want, host)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("second run took %s to fail", d)
		}
	}
	w.Close()
	if got := p.wait(t, 60*time.Second); got != 0 {
		t.Fatalf("first run: exit status %d\n%s", got, p.stderr.String())
	}
	ref := countJSON(t, write(t, "same.txt", edges))
	if rep := countJSON(t, "--shards", out); rep.Triangles != ref.Triangles || rep.Edges != ref.Edges {
		t.Fatalf("the first run's store: %d triangles, %d edges; its input has %d, %d", rep.Triangles, rep.Edges, ref.Triangles, ref.Edges)
	}
}

// TestCountRefusesOutputOverInput: an output that is an input (itself,
// through a symlink, or a file of the shard store counted), two outputs
// that are one file (one through a symlinked directory), and an output
// whose directory is missing are refused before anything is written.
func TestCountRefusesOutputOverInput(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	dir := t.TempDir()
	const text = "1\t2\n2\t3\n3\t1\n3\t4\n"
	g := filepath.Join(dir, "g.tsv")
	if err := os.WriteFile(g, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.tsv")
	sub, subLink := filepath.Join(dir, "d"), filepath.Join(dir, "ld")
	shards := filepath.Join(dir, "shards")
	for _, err := range []error{os.Symlink("g.tsv", link), os.Mkdir(sub, 0o755), os.Symlink("d", subLink)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, stderr, err := run(t, "partition", "--progress", "none", "-P", "2", "-o", shards, g); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	before := dirNames(t, shards)
	idmap, err := os.ReadFile(filepath.Join(shards, "idmap.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--per-vertex", g, g}, "is the input"},
		{[]string{"--per-edge", link, g}, "is the input"},
		{[]string{"--per-vertex", filepath.Join(sub, "v.tsv"), "--per-edge", g, g}, "is the input"},
		{[]string{"--per-vertex", filepath.Join(sub, "x.tsv"), "--per-edge", filepath.Join(subLink, "x.tsv"), g}, "same file"},
		{[]string{"--per-vertex", filepath.Join(sub, "v.tsv"), "--per-edge", filepath.Join(sub, "no", "e.tsv"), g}, "no/e.tsv"},
		{[]string{"--shards", shards, "--per-vertex", filepath.Join(shards, "idmap.bin")}, "shard"},
	} {
		_, _, err := run(t, append([]string{"count", "--progress", "none", "--device", "cpu"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.args, err, c.want)
		}
	}
	if got, _ := os.ReadFile(g); string(got) != text {
		t.Errorf("the input was overwritten: %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the input's symlink was replaced: %v", err)
	}
	if left := dirNames(t, sub); len(left) != 0 {
		t.Errorf("refused runs left %v", left)
	}
	if now := dirNames(t, shards); !slices.Equal(now, before) {
		t.Errorf("the shard store changed: %v -> %v", before, now)
	}
	if got, _ := os.ReadFile(filepath.Join(shards, "idmap.bin")); !bytes.Equal(got, idmap) {
		t.Errorf("the shard store's id map was overwritten")
	}
}
