package scheduler

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of coordinator/scheduler/testdata/*.txt")

// TestSchedulerScripts runs the scripts in testdata/: each block is one
// command, "----", and the decisions it must produce (see runScriptCommand
// for the commands). Run with -rewrite to regenerate the expected output
// after a deliberate change, then read the diff.
func TestSchedulerScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			var h *harness
			for n, block := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
				cmd, want, ok := strings.Cut(block, "\n----")
				if !ok {
					t.Fatalf("%s: block %d has no ----", f, n+1)
				}
				got, err := runScriptCommand(t, &h, strings.TrimSpace(cmd))
				if err != nil {
					t.Fatalf("%s: %q: %v", f, cmd, err)
				}
				want = strings.TrimPrefix(want, "\n")
				if !*rewrite && strings.TrimSpace(got) != strings.TrimSpace(want) {
					t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", f, cmd, got, want)
				}
				fmt.Fprintf(&out, "%s\n----\n%s", cmd, got)
				if got != "" && !strings.HasSuffix(got, "\n") {
					out.WriteString("\n")
				}
				out.WriteString("\n")
			}
			if *rewrite {
				if err := os.WriteFile(f, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// runScriptCommand runs one command:
//
//	config [lease=N] [attempts=N] [verify] [nospec] [nofair] [after=F] [minticks=N] [wait=N]
//	job ID P [N]          a job of testTasks(P)'s first N subtasks
//	join W...             workers join
//	leave W REASON...     a worker leaves
//	pull W N              a worker asks for N subtasks
//	ok W JOB/IDX#ATT [V]  a count (default: the subtask's truth)
//	fail W JOB/IDX#ATT R  an error result
//	back W JOB/IDX#ATT    an attempt handed back
//	beat W JOB/IDX...     a heartbeat naming running attempts
//	tick [N]              N ticks (default 1)
//	cancel JOB
//	status JOB            the job's status line
func runScriptCommand(t *testing.T, hp **harness, line string) (string, error) {
	f := strings.Fields(line)
	h := *hp
	if f[0] != "config" && h == nil {
		return "", fmt.Errorf("the first command must be config")
	}
	var ds []Decision
	switch f[0] {
	case "config":
		*hp = newHarness(t, func(c *Config) {
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				n, _ := strconv.ParseInt(v, 10, 64)
				switch k {
				case "lease":
					c.LeaseTicks = n
				case "attempts":
					c.MaxAttempts = int(n)
				case "verify":
					c.Verify = true
				case "nospec":
					c.NoSpeculation = true
				case "nofair":
					c.NoFairShare = true
				case "after":
					c.SpeculateAfter, _ = strconv.ParseFloat(v, 64)
				case "minticks":
					c.SpeculateMinTicks = n
				case "wait":
					c.RecountWaitTicks = n
				}
			}
		})
		return "", nil
	case "job":
		p, _ := strconv.Atoi(f[2])
		tasks := testTasks(p)
		if len(f) > 3 {
			n, _ := strconv.Atoi(f[3])
			if n < 0 || n > len(tasks) {
				return "", fmt.Errorf("%d subtasks of %d", n, len(tasks))
			}
			tasks = tasks[:n]
		}
		var err error
		if ds, err = h.s.AddJob(JobSpec{ID: api.JobID(f[1]), Subtasks: tasks}); err != nil {
			return "", err
		}
	case "join":
		for _, w := range f[1:] {
			ds = append(ds, h.s.WorkerJoined(api.Hello{Worker: api.WorkerID(w), Slots: 1})...)
		}
	case "leave":
		ds = h.s.WorkerLeft(api.WorkerID(f[1]), strings.Join(f[2:], " "))
	case "pull":
		n, _ := strconv.Atoi(f[2])
		ds = h.s.Pull(api.WorkerID(f[1]), n)
	case "ok", "fail", "back":
		ref, att, err := parseAttempt(f[2])
		if err != nil {
			return "", err
		}
		r := api.Result{Ref: ref, Attempt: att, Worker: api.WorkerID(f[1])}
		switch f[0] {
		case "ok":
			r.Triangles = truthSmall(ref.Index)
			if len(f) > 3 {
				r.Triangles, _ = strconv.ParseUint(f[3], 10, 64)
			}
		case "fail":
			r.Err = strings.Join(f[3:], " ")
		case "back":
			r.HandedBack, r.Err = true, "draining"
		}
		ds = h.s.Result(r)
	case "beat":
		hb := api.Heartbeat{Worker: api.WorkerID(f[1])}
		for _, x := range f[2:] {
			job, idx, _ := strings.Cut(x, "/")
			i, _ := strconv.Atoi(idx)
			hb.Running = append(hb.Running, api.SubtaskRef{Job: api.JobID(job), Index: i})
		}
		ds = h.s.Heartbeat(hb)
	case "tick":
		n := 1
		if len(f) > 1 {
			n, _ = strconv.Atoi(f[1])
		}
		for range n {
			ds = append(ds, h.s.Tick()...)
		}
	case "cancel":
		var err error
		if ds, err = h.s.CancelJob(api.JobID(f[1])); err != nil {
			return "", err
		}
	case "status":
		js, ok := h.s.Job(api.JobID(f[1]))
		if !ok {
			return "no such job\n", nil
		}
		return fmt.Sprintf("%s %s: %d/%d done, %d running, %d queued, attempts %d, failures %d, requeued %d, speculated %d, recounts %d, total %d\n",
			js.ID, js.State, js.Done, js.Subtasks, js.Running, js.Queued, js.Attempts, js.Failures, js.Requeued, js.Speculated, js.Recounts, js.Total), nil
	default:
		return "", fmt.Errorf("unknown command %q", f[0])
	}
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(formatDecision(d))
		b.WriteString("\n")
	}
	return b.String(), nil
}

// truthSmall is a script subtask's count: small, to read easily.
func truthSmall(idx int) uint64 { return uint64(10 + idx) }

func parseAttempt(s string) (api.SubtaskRef, int, error) {
	ref, att, ok := strings.Cut(s, "#")
	job, idx, ok2 := strings.Cut(ref, "/")
	if !ok || !ok2 {
		return api.SubtaskRef{}, 0, fmt.Errorf("attempt %q is not JOB/IDX#ATT", s)
	}
	i, err := strconv.Atoi(idx)
	if err != nil {
		return api.SubtaskRef{}, 0, err
	}
	a, err := strconv.Atoi(att)
	return api.SubtaskRef{Job: api.JobID(job), Index: i}, a, err
}

func formatDecision(d Decision) string {
	ref := fmt.Sprintf("%s/%d#%d", d.Ref.Job, d.Ref.Index, d.Attempt)
	if d.Ref.Job == "" {
		ref = "-"
	}
	switch d.Kind {
	case DecideAssign:
		a := d.Assignment
		spec := ""
		if d.Speculative {
			spec = " speculative"
		}
		return fmt.Sprintf("assign %s %s (%d,%d,%d)%s", d.Worker, ref, a.I, a.J, a.K, spec)
	case DecideCancel:
		return fmt.Sprintf("cancel %s %s", d.Worker, ref)
	case DecideSubtaskDone:
		return fmt.Sprintf("settled %s/%d = %d (counted by %s)", d.Ref.Job, d.Ref.Index, d.Triangles, d.Worker)
	case DecideSubtaskReopened:
		return fmt.Sprintf("reopened %s/%d", d.Ref.Job, d.Ref.Index)
	case DecideJobDone:
		return fmt.Sprintf("job-done %s total=%d", d.Job, d.Total)
	case DecideJobFailed:
		return fmt.Sprintf("job-failed %s: %v", d.Job, d.Err)
	case DecideJobCancelled:
		return "job-cancelled " + string(d.Job)
	case DecideWorkerFaulty:
		return fmt.Sprintf("faulty %s: %v", d.Worker, d.Err)
	case DecideIgnore:
		return fmt.Sprintf("ignore %s %s: %s", d.Worker, ref, d.Reason)
	}
	return d.Kind.String()
}
