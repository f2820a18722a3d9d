package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// submit carries the reading flags of a graph file to the job, and
// refuses them with a shard store, which was read when it was
// partitioned.
func TestSubmitCarriesReadingFlags(t *testing.T) {
	f := &fakeJobs{script: doneScript()}
	addr := serveFake(t, f, "")
	if _, stderr, err := run(t, "submit", "--coordinator", addr, "--format", "mtx", "--skip-bad-lines", "some/graph.mtx"); err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	if len(f.submitted) != 1 || f.submitted[0].GetFormat() != "mtx" || !f.submitted[0].GetSkipBadLines() {
		t.Fatalf("submitted %v", f.submitted)
	}
	for _, args := range [][]string{
		{"--format", "nosuch", "g.txt"},
		{"--shards", "mem://x", "--skip-bad-lines"},
		{"--shards", "mem://x", "--format", "bin"},
	} {
		_, _, err := run(t, append([]string{"submit", "--coordinator", addr}, args...)...)
		flag := args[0]
		if args[0] == "--shards" {
			flag = args[2]
		}
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("submit %v: %v, want an error naming %s", args, err, flag)
		}
	}
	if len(f.submitted) != 1 {
		t.Errorf("a refused submission reached the coordinator: %v", f.submitted[1:])
	}
}

// Every command whose errors may end "use --skip-bad-lines to skip such
// lines" (the reading errors of a graph file) has that flag, and --format.
func TestSkipBadLinesHintIsFollowable(t *testing.T) {
	root := newRootCommand()
	for _, path := range [][]string{{"count"}, {"partition"}, {"convert"}, {"bench", "kernels"}, {"submit"}} {
		cmd, _, err := root.Find(path)
		if err != nil || cmd.Name() != path[len(path)-1] {
			t.Fatalf("no command %v: %v", path, err)
		}
		for _, name := range []string{"skip-bad-lines", "format"} {
			if cmd.Flags().Lookup(name) == nil {
				t.Errorf("trigrid %s reads graph files but has no --%s", strings.Join(path, " "), name)
			}
		}
	}
}

// submit checks the files --per-vertex and --per-edge name before the
// job runs: a directory that is not there or takes no file, a path that
// is a directory, the input graph itself.
func TestSubmitChecksCountsOutputs(t *testing.T) {
	f := &fakeJobs{script: doneScript()}
	addr := serveFake(t, f, "")
	graph := write(t, "g.tsv", "1\t2\n2\t3\n3\t1\n")
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		ro = "/proc/self" // root writes any directory's mode; not this one
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--per-vertex", filepath.Join(dir, "no", "such", "v.tsv"), graph}, "--per-vertex"},
		{[]string{"--per-edge", graph + ".tsv", "--per-vertex", dir, graph}, "--per-vertex"},
		{[]string{"--per-edge", graph, graph}, "--per-edge " + graph + " is the input"},
		{[]string{"--per-vertex", graph, graph}, "--per-vertex " + graph + " is the input"},
		{[]string{"--per-vertex", filepath.Join(ro, "v.tsv"), graph}, "--per-vertex " + filepath.Join(ro, "v.tsv") + ": directory " + ro + " takes no new file"},
	} {
		_, _, err := run(t, append([]string{"submit", "--coordinator", addr}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("submit %v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
	if len(f.submitted) != 0 {
		t.Errorf("submissions with unusable outputs reached the coordinator: %v", f.submitted)
	}
	if _, err := os.Stat(graph + ".tsv"); err == nil {
		t.Errorf("the check left %s behind", graph+".tsv")
	}
}

// runFor runs the command line until it returns or d passes (then its
// context ends, which stops a coordinator).
func runFor(t *testing.T, d time.Duration, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	root := newRootCommand()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return err
}

// Zero for a count of attempts or ticks, or for a tick, is an error
// naming the flag, not the default in disguise.
func TestCoordinatorRefusesZeroSettings(t *testing.T) {
	base := []string{"coordinator", "--state", t.TempDir(), "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-attempts", "0"}, "--max-attempts 0"},
		{[]string{"--lease-ticks", "0"}, "--lease-ticks 0"},
		{[]string{"--tick", "0s"}, "--tick 0s"},
		{[]string{"--heartbeat", "0s"}, "--heartbeat 0s"},
		{[]string{"--max-attempts", "-1"}, "--max-attempts -1"},
		{[]string{"--tick", "-5ms"}, "--tick -5ms"},
	} {
		err := runFor(t, 3*time.Second, append(append([]string(nil), base...), c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("coordinator %v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
