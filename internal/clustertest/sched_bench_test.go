package clustertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkSchedulerFourCPUWorkers runs a coordinator and four CPU worker
// processes on loopback, all at their default settings (but for gossip's
// local timing), on the shards of an rmat graph of scale
// TRIGRID_BENCH_SCALE (default 14, edge factor 16) at P = 32 (32,768
// subtasks), small enough that the scheduler, not the counting, is the
// limit. Each op is one job through `submit --wait --json`; it reports the
// median job's subtasks per second (its coordinator-measured time from
// submission to end), the coordinator's CPU per subtask (the job's
// coordinator_cpu_ns_per_subtask) and, where /proc says, the CPU of all
// five processes per subtask. Every job's total is checked against the
// first's and against `count` of the whole graph.
func BenchmarkSchedulerFourCPUWorkers(b *testing.B) {
	scale := 14
	if s := os.Getenv("TRIGRID_BENCH_SCALE"); s != "" {
		scale, _ = strconv.Atoi(s)
	}
	file := genGraph(b, scale, 16)
	want := wholeCount(b, file)
	dir := partitionShards(b, file, 32, "hash")
	args := []string{"coordinator", "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0", "--log-format", "json",
		"--state", b.TempDir(), "--gossip-timing", "local", "--data-dir", filepath.Dir(dir)}
	c := launchCoordinator(b, args)
	procs := []*proc{c.proc}
	for _, name := range []string{"w1", "w2", "w3", "w4"} {
		procs = append(procs, startWorker(b, c, name, "--coordinator", c.grpc))
	}
	var rates, coordNs, allNs []float64
	for range b.N {
		cpu0 := procCPU(procs)
		out, stderr, err := cli(b, 5*time.Minute, "submit", "--coordinator", c.grpc, "--wait", "--json", "--progress", "none", "--shards", dir)
		if err != nil {
			b.Fatalf("submit: %v\n%s", err, stderr)
		}
		var r struct {
			result
			CoordinatorNs float64 `json:"coordinator_cpu_ns_per_subtask"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Triangles == nil || r.Subtasks == 0 {
			b.Fatalf("submit output %q: %v", out, err)
		}
		if *r.Triangles != want {
			b.Fatalf("the cluster counted %d, count of the whole graph %d", *r.Triangles, want)
		}
		rates = append(rates, float64(r.Subtasks)/r.Seconds)
		coordNs = append(coordNs, r.CoordinatorNs)
		if cpu1 := procCPU(procs); cpu0 >= 0 && cpu1 >= 0 {
			allNs = append(allNs, float64(cpu1-cpu0)/float64(r.Subtasks))
		}
	}
	b.ReportMetric(median(rates), "subtasks/s")
	b.ReportMetric(median(coordNs), "coord-cpu-ns/subtask")
	if len(allNs) > 0 {
		b.ReportMetric(median(allNs), "all-cpu-ns/subtask")
	}
	b.Logf("subtasks/s %.0f; coordinator CPU ns per subtask %.0f; all processes %.0f", rates, coordNs, allNs)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// procCPU is the user and system CPU time, in nanoseconds, that the
// processes have used, from /proc; -1 where it cannot be read.
func procCPU(ps []*proc) int64 {
	var sum int64
	for _, p := range ps {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "stat"))
		if err != nil {
			return -1
		}
		// The fields after the command name, which is in parentheses.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			return -1
		}
		ut, err1 := strconv.ParseInt(f[11], 10, 64)
		st, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 != nil || err2 != nil {
			return -1
		}
		sum += (ut + st) * int64(time.Second) / clockTicks
	}
	return sum
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times
// (100 on every Linux platform Go supports).
const clockTicks = 100
