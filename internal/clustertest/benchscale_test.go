package clustertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trigrid/trigrid/bench/scale"
)

// benchScale runs `trigrid bench scale --json` with a scratch --tmp-dir
// and returns its report.
func benchScale(t *testing.T, tmp string, args ...string) (*scale.Report, string, error) {
	t.Helper()
	out, stderr, err := cli(t, 3*time.Minute, append([]string{"bench", "scale", "--json", "--progress", "log", "--tmp-dir", tmp}, args...)...)
	if err != nil {
		return nil, stderr, err
	}
	var rep scale.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench scale output %q: %v", out, err)
	}
	return &rep, stderr, nil
}

// leftovers lists what a bench left in its --tmp-dir, and the processes
// still running with it on their command line (its coordinators' state
// lies under it).
func leftovers(t *testing.T, tmp string) []string {
	t.Helper()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, "file "+e.Name())
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), tmp) {
			out = append(out, "process "+p+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// bench scale with 1 and 2 CPU workers, each run a coordinator and its
// workers as processes: every job's count equals `trigrid count` of the
// file (and SNAP's), the per-worker statistics account for every subtask,
// the files are written, and nothing is left behind. A store given with
// --shards is read back and counted the same way.
func TestBenchScaleCountsOneAndTwoWorkers(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	want := wholeCount(t, file)
	if want != grqcTriangles {
		t.Fatalf("trigrid count: %d, SNAP %d", want, grqcTriangles)
	}
	tmp, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	rep, stderr, err := benchScale(t, tmp, "--graph", file, "-P", "3", "--workers", "1,2", "--out", out)
	if err != nil {
		t.Fatalf("bench scale: %v\n%s", err, stderr)
	}
	if rep.Triangles != want || len(rep.Runs) != 2 || len(rep.Rows) != 2 || rep.Subtasks == 0 {
		t.Fatalf("report: %d triangles (want %d), %d runs, %d rows, %d subtasks", rep.Triangles, want, len(rep.Runs), len(rep.Rows), rep.Subtasks)
	}
	for _, r := range rep.Runs {
		var subtasks int64
		for _, w := range r.PerWorker {
			subtasks += w.Subtasks
		}
		if r.Triangles != want || subtasks != int64(rep.Subtasks) || len(r.PerWorker) > r.Workers || r.JobSeconds <= 0 || r.KernelSeconds <= 0 {
			t.Errorf("run of %d workers: %d triangles, %d subtasks in %d workers' statistics, job %.3fs, kernel %.3fs",
				r.Workers, r.Triangles, subtasks, len(r.PerWorker), r.JobSeconds, r.KernelSeconds)
		}
	}
	if row := rep.Rows[0]; row.Workers != 1 || row.Speedup != 1 || row.IR == nil || *row.IR != 1 {
		t.Errorf("one worker's row %+v", row)
	}
	for _, name := range []string{scale.JSONName, scale.RowsCSVName, scale.RunsCSVName, scale.SpeedupPNGName, scale.EffPNGName} {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("--out lacks %s: %v", name, err)
		}
	}
	if left := leftovers(t, tmp); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}

	shards := filepath.Join(t.TempDir(), "grqc.shards")
	if _, stderr, err := cli(t, time.Minute, "partition", file, "-o", shards, "-P", "2", "--progress", "none"); err != nil {
		t.Fatalf("partition: %v\n%s", err, stderr)
	}
	rep, stderr, err = benchScale(t, tmp, "--shards", shards, "--workers", "1")
	if err != nil {
		t.Fatalf("bench scale --shards: %v\n%s", err, stderr)
	}
	if rep.Triangles != want || rep.P != 2 || rep.Runs[0].Triangles != want || !strings.Contains(rep.Reference, "read back from the shards") {
		t.Errorf("--shards: %d triangles at P = %d by %q, want %d", rep.Triangles, rep.P, rep.Reference, want)
	}
}

// A worker that reports one subtask's count one too high fails the bench
// loudly, naming both counts, and the bench still removes its processes
// and files.
func TestBenchScaleWrongCountFails(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	_, stderr, err := benchScale(t, tmp, "--graph", grqc(t), "-P", "2", "--workers", "1", "--", "--fault-wrong-count", "0")
	if err == nil {
		t.Fatal("a wrong count passed")
	}
	if !strings.Contains(stderr, "WRONG COUNT") || !strings.Contains(stderr, "48261") || !strings.Contains(stderr, "48260") {
		t.Errorf("the error does not name both counts:\n%s", stderr)
	}
	if left := leftovers(t, tmp); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// SIGINT in the middle of the runs stops the clusters and removes the
// temporary directory within a few seconds.
func TestBenchScaleInterruptCleansUp(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	p := start(t, "bench", "bench", "scale", "--graph", grqc(t), "-P", "2", "--workers", "1,2", "--repeat", "100",
		"--progress", "log", "--tmp-dir", tmp)
	deadline := time.Now().Add(time.Minute)
	for {
		// Each run has a directory of its own: wait for the second.
		if m, _ := filepath.Glob(filepath.Join(tmp, "*", "run-1-2")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("no second run within a minute (exited %v):\n%s", p.exited(), p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.signal(syscall.SIGINT)
	if err := p.wait(20 * time.Second); err == nil {
		t.Errorf("an interrupted bench exited 0")
	}
	if left := leftovers(t, tmp); len(left) > 0 {
		t.Errorf("left behind after SIGINT: %v", left)
	}
}

// childOf finds the pid of parent's child whose command line holds arg.
func childOf(parent int, arg string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		stat, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		var state string
		var ppid int
		if _, err := fmt.Sscan(rest, &state, &ppid); err != nil || ppid != parent {
			continue
		}
		dir := filepath.Dir(p)
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			return pid
		}
	}
	return 0
}

// A worker killed during a job fails the bench at once, naming it: a run
// of fewer workers than asked for is no measurement.
func TestBenchScaleWorkerDeathFails(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	p := start(t, "bench", "bench", "scale", "--graph", grqc(t), "-P", "2", "--workers", "1", "--progress", "none",
		"--tmp-dir", tmp, "--", "--fault-delay", "300ms")
	deadline := time.Now().Add(time.Minute)
	pid := 0
	for pid == 0 {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("no worker within a minute (exited %v):\n%s", p.exited(), p.out.String())
		}
		time.Sleep(50 * time.Millisecond)
		if m, _ := filepath.Glob(filepath.Join(tmp, "*", "run-1-1", "state", "*")); len(m) > 0 {
			pid = childOf(p.cmd.Process.Pid, "bench-w1")
		}
	}
	time.Sleep(500 * time.Millisecond) // into the job
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(30 * time.Second); err == nil {
		t.Fatal("the bench passed with its worker killed")
	}
	if out := p.out.String(); !strings.Contains(out, "worker bench-w1") || !strings.Contains(out, "exited") {
		t.Errorf("the error does not name the worker:\n%s", out)
	}
	if left := leftovers(t, tmp); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// Bad requests fail before anything starts, naming the flag.
func TestBenchScaleFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--graph", "g", "--workers", "2,4"}, "include 1"},
		{[]string{"--graph", "g", "--shards", "s"}, "one of them"},
		{[]string{"--workers", "1"}, "one of them"},
		{[]string{"--graph", "g", "--workers", "1,x"}, "--workers"},
		{[]string{"--graph", "g", "--repeat", "0"}, "--repeat 0"},
		{[]string{"g.txt"}, "unexpected argument"},
		{[]string{"--graph", filepath.Join(t.TempDir(), "missing.txt")}, "missing.txt"},
	} {
		_, stderr, err := cli(t, time.Minute, append([]string{"bench", "scale", "--progress", "none"}, tc.args...)...)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("bench scale %v: %v, want an error with %q:\n%s", tc.args, err, tc.want, stderr)
		}
	}
}
