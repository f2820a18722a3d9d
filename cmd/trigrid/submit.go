package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph/edgeio"
)

type submitFlags struct {
	sec         securityFlags
	coordinator string
	shards      string
	partitions  int
	scheme      string
	kernel      string
	wait        bool
	asJSON      bool
	reconnect   time.Duration
	perVertex   perVertexFlags
	job         string
	format      string
	skipBad     bool
	progress    string
}

func newSubmitCommand() *cobra.Command {
	var f submitFlags
	cmd := &cobra.Command{
		Use:   "submit --coordinator ADDR [flags] (FILE | --shards URL | --job JOB)",
		Short: "Submit a counting job to a coordinator",
		Long: `Submit a job to the coordinator at --coordinator: a graph FILE on the
coordinator's filesystem, which it cleans and partitions (a FILE that exists
here is sent as an absolute path), or a shard store (--shards URL) that the
coordinator and workers can read. Prints the job id, or with --wait the result
once the job ends (--json: one object with triangles, subtasks, workers,
seconds, attempts). A job that fails prints no total and exits 1.

--per-vertex FILE, --per-edge FILE, --top K and --clustering ask the workers
for per-vertex (and per-edge) counts and imply --wait: once the job is done,
the coordinator's summed counts are fetched, checked against the total and
written here in the format FILE's name gives, as trigrid count writes them.
--job JOB follows a job submitted before (say, by a submit that was
interrupted) in the same way, without submitting another.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSubmit(cmd, args, &f)
		},
	}
	cmd.Flags().StringVar(&f.coordinator, "coordinator", "", "coordinator gRPC address (host:port)")
	cmd.Flags().StringVar(&f.shards, "shards", "", "count an existing shard store (URL or directory) instead of a graph file")
	cmd.Flags().IntVarP(&f.partitions, "partitions", "P", 0, "P for a graph file (0 = chosen from the workers' device memory)")
	cmd.Flags().StringVar(&f.scheme, "scheme", "hash", "partition scheme for a graph file: hash or range")
	cmd.Flags().StringVar(&f.kernel, "kernel", "", "kernel name (default: each worker's auto)")
	cmd.Flags().StringVar(&f.format, "format", "auto", "the graph FILE's format, as trigrid count reads it (auto: from its extension and content)")
	cmd.Flags().BoolVar(&f.skipBad, "skip-bad-lines", false, "skip the graph FILE's lines that are not edges instead of failing the job")
	cmd.Flags().BoolVar(&f.wait, "wait", false, "wait for the job to end and print its result")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	cmd.Flags().DurationVar(&f.reconnect, "reconnect-timeout", time.Minute, "with --wait, how long to keep retrying while the coordinator is unreachable")
	cmd.Flags().StringVar(&f.progress, "progress", "auto", "with --wait, progress on stderr: auto (bar on a terminal, log lines otherwise), bar, log, none")
	f.perVertex.add(cmd)
	cmd.Flags().StringVar(&f.job, "job", "", "follow a job submitted before instead of submitting one: wait for it and fetch the per-vertex counts the flags ask for")
	f.sec.add(cmd)
	f.sec.addServerName(cmd)
	return cmd
}

func runSubmit(cmd *cobra.Command, args []string, f *submitFlags) error {
	if _, err := parseProgressMode(f.progress); err != nil {
		return err
	}
	if f.job != "" {
		return followJob(cmd, args, f)
	}
	spec := api.JobSpec{Shards: f.shards, Partitions: f.partitions, Scheme: f.scheme, Kernel: f.kernel}
	switch {
	case len(args) == 1 && f.shards != "":
		return errors.New("give a graph FILE or --shards URL, not both")
	case len(args) == 1:
		spec.Graph = localPath(args[0])
		if err := f.readingOptions(&spec); err != nil {
			return err
		}
	case f.shards == "":
		return errors.New("give a graph FILE or --shards URL")
	default:
		spec.Shards = localPath(f.shards)
		if set := changedOnCommandLine(cmd, "format", "skip-bad-lines"); len(set) > 0 {
			return fmt.Errorf("submit --shards: %s do not apply: the shards were read when they were partitioned", strings.Join(set, ", "))
		}
	}
	if f.partitions < 0 || f.partitions > api.MaxPartitions {
		return fmt.Errorf("--partitions %d: want 0 (automatic) to %d", f.partitions, api.MaxPartitions)
	}
	if f.scheme != "hash" && f.scheme != "range" {
		return fmt.Errorf("--scheme %q: want hash or range", f.scheme)
	}
	pv, err := f.perVertex.options(1)
	if err != nil {
		return err
	}
	if err := checkLocalKernel(pv.Wanted(), f.kernel); err != nil {
		return err
	}
	if pv.Wanted() {
		spec.PerVertex, spec.PerEdge, f.wait = true, pv.PerEdge(), true
	}
	if err := f.checkCountsOutputs(spec.Graph, spec.Shards); err != nil {
		return err
	}
	req := pb.EncodeSubmit(spec)
	if _, err := pb.DecodeSubmit(req); err != nil {
		return err
	}
	conn, err := f.sec.dial(f.coordinator)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	client := pb.NewJobsClient(conn)
	cctx, cancel := rpcContext(ctx)
	resp, err := client.Submit(cctx, req)
	cancel()
	if err != nil {
		return fmt.Errorf("submit to %s: %w", f.coordinator, rpcError(err))
	}
	job, err := pb.DecodeJobID("SubmitResponse", resp.GetJob())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if !f.wait {
		if f.asJSON {
			return json.NewEncoder(out).Encode(map[string]string{"job": string(job)})
		}
		fmt.Fprintln(out, job)
		return nil
	}
	return waitAndFetch(ctx, cmd, client, job, pv, f)
}

// watchJob follows a job until it ends, showing its progress on prog,
// and returns its final status. A broken stream is reopened (the
// coordinator may be restarting) until reconnect passes without an
// answer.
func watchJob(ctx context.Context, client pb.JobsClient, job api.JobID, reconnect time.Duration, prog *progress) (api.JobStatus, error) {
	defer prog.Done()
	var lastErr error
	lastOK := time.Now()
	watch := jobWatch{job: job, prog: prog}
	for {
		stream, err := client.Watch(ctx, &pb.WatchRequest{Job: string(job)})
		for err == nil {
			var m *pb.JobStatus
			m, err = stream.Recv()
			if err != nil {
				break
			}
			st, derr := pb.DecodeStatus(m)
			if derr != nil {
				return api.JobStatus{}, derr
			}
			lastOK = time.Now()
			if st.State.Final() {
				return st, nil
			}
			watch.show(st)
		}
		if ctx.Err() != nil {
			return api.JobStatus{}, afterInterrupt{fmt.Errorf("job %s: stopped waiting (the job goes on; trigrid cancel stops it): %w", job, ctx.Err())}
		}
		// A stream that ends before the job does, or a coordinator that is
		// unreachable, may be a restart: retry. Anything else (refused,
		// unknown job) is final.
		code := status.Code(err)
		if err != io.EOF && code != codes.Unavailable && code != codes.Canceled && code != codes.Aborted {
			return api.JobStatus{}, fmt.Errorf("job %s: %w", job, rpcError(err))
		}
		if err == io.EOF {
			err = errors.New("the coordinator ended the watch before the job ended")
		}
		lastErr = err
		if time.Since(lastOK) > reconnect {
			return api.JobStatus{}, fmt.Errorf("job %s: coordinator unreachable for %v: %w", job, reconnect, rpcError(lastErr))
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// jobWatch shows a coordinator's job on a progress: a line of its own
// whenever the job changes state ("job ID: running, 10/64 subtasks done,
// 4 running"), and in between a bar of its subtasks, or log lines every
// interval, with their rate and the time left.
type jobWatch struct {
	job   api.JobID
	prog  *progress
	state api.JobState
	total int64
	seen  bool
}

func (w *jobWatch) show(st api.JobStatus) {
	if !w.seen || st.State != w.state {
		w.seen, w.state = true, st.State
		if st.Subtasks > 0 {
			w.prog.Note(fmt.Sprintf("job %s: %s, %d/%d subtasks done, %d running", w.job, st.State, st.Done, st.Subtasks, st.Running))
		} else {
			w.prog.Note(fmt.Sprintf("job %s: %s", w.job, st.State))
		}
	}
	if st.Subtasks <= 0 {
		return
	}
	if st.Subtasks != w.total {
		w.total = st.Subtasks
		phase := "job " + string(w.job)
		if w.prog.Bar() {
			phase = "job"
		}
		w.prog.Start(phase, "subtasks", st.Subtasks)
	}
	w.prog.SetDetail(fmt.Sprintf(" done, %d running", st.Running))
	w.prog.Update(st.Done, st.Subtasks)
}

// jobResult is the --json form of a finished job.
type jobResult struct {
	Job        string           `json:"job"`
	State      string           `json:"state"`
	Triangles  *uint64          `json:"triangles,omitempty"`
	Subtasks   int64            `json:"subtasks"`
	Workers    int              `json:"workers"`
	Seconds    float64          `json:"seconds"`
	Attempts   int64            `json:"attempts"`
	Requeued   int64            `json:"requeued"`
	Speculated int64            `json:"speculated"`
	Recounted  int64            `json:"recounted"`
	Partitions int              `json:"partitions,omitempty"`
	Scheme     string           `json:"scheme,omitempty"`
	Error      string           `json:"error,omitempty"`
	Faulty     []faultyWorkerJS `json:"faulty_workers,omitempty"`
	// PerVertex summarises the per-vertex counts written here.
	PerVertex *counts.Summary `json:"per_vertex,omitempty"`
	jobStatsJS
}

type faultyWorkerJS struct {
	Worker string `json:"worker"`
	Reason string `json:"reason"`
}

func resultOf(st api.JobStatus) jobResult {
	r := jobResult{
		Job: string(st.Job), State: st.State.String(), Subtasks: st.Subtasks, Workers: st.Workers,
		Seconds: st.Elapsed.Seconds(), Attempts: st.Attempts, Requeued: st.Requeued, Speculated: st.Speculated,
		Recounted: st.Recounted, Partitions: st.Partitions, Scheme: st.Scheme, Error: st.Err,
		jobStatsJS: statsOf(st),
	}
	if st.State == api.JobDone {
		t := st.Triangles
		r.Triangles = &t
	}
	for _, fw := range st.Faulty {
		r.Faulty = append(r.Faulty, faultyWorkerJS{Worker: string(fw.Worker), Reason: fw.Reason})
	}
	return r
}

// printFinal prints a finished job. Only a job that is done prints a
// total; a failed or cancelled one is an error.
func printFinal(out io.Writer, st api.JobStatus, sum *counts.Summary, asJSON bool) error {
	if asJSON {
		r := resultOf(st)
		r.PerVertex = sum
		if err := json.NewEncoder(out).Encode(r); err != nil {
			return err
		}
	} else if st.State == api.JobDone {
		fmt.Fprintf(out, "triangles   %d\n", st.Triangles)
		fmt.Fprintf(out, "job         %s\n", st.Job)
		fmt.Fprintf(out, "subtasks    %d (P=%d, %s)\n", st.Subtasks, st.Partitions, st.Scheme)
		fmt.Fprintf(out, "workers     %d\n", st.Workers)
		fmt.Fprintf(out, "attempts    %d (%d requeued, %d speculated)\n", st.Attempts, st.Requeued, st.Speculated)
		if st.Recounted > 0 {
			fmt.Fprintf(out, "recounted   %d (settled counts found damaged in the coordinator's state)\n", st.Recounted)
		}
		fmt.Fprintf(out, "seconds     %.3f\n", st.Elapsed.Seconds())
		printJobStats(out, st)
		for _, fw := range st.Faulty {
			fmt.Fprintf(out, "faulty      %s: %s\n", fw.Worker, fw.Reason)
		}
		if sum != nil {
			fmt.Fprintf(out, "clustering  %s (average local; degree < 2 counts 0)\n", strconv.FormatFloat(sum.AverageClustering, 'f', 6, 64))
			printCountsSummary(func(k, v string) { fmt.Fprintf(out, "%-11s %s\n", k, v) }, sum)
		}
	}
	switch st.State {
	case api.JobDone:
		return nil
	case api.JobCancelled:
		return fmt.Errorf("job %s was cancelled", st.Job)
	}
	return fmt.Errorf("job %s failed: %s", st.Job, st.Err)
}

// rpcError turns a gRPC status into its message, keeping the code's name
// where the message alone would not say what happened.
func rpcError(err error) error {
	s, ok := status.FromError(err)
	if !ok {
		return err
	}
	switch s.Code() {
	case codes.Unavailable:
		return fmt.Errorf("coordinator unavailable: %s", s.Message())
	case codes.Unauthenticated:
		return fmt.Errorf("refused: %s", s.Message())
	case codes.NotFound, codes.InvalidArgument, codes.FailedPrecondition:
		return errors.New(s.Message())
	}
	return fmt.Errorf("%s: %s", s.Code(), s.Message())
}

// readingOptions sets how the coordinator reads spec's graph file.
func (f *submitFlags) readingOptions(spec *api.JobSpec) error {
	if _, err := edgeio.ParseFormat(f.format); err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if !strings.EqualFold(f.format, "auto") {
		spec.Format = f.format
	}
	spec.SkipBadLines = f.skipBad
	return nil
}

// changedOnCommandLine returns, as --NAME, those of names set on the
// command line.
func changedOnCommandLine(cmd *cobra.Command, names ...string) []string {
	var set []string
	for _, n := range names {
		if onCommandLine(cmd, n) {
			set = append(set, "--"+n)
		}
	}
	return set
}

// checkCountsOutputs checks, before a job is submitted or followed, that
// the per-vertex and per-edge files can be written here once it is done:
// checkOutputPaths's checks against inputs (the graph file or shard store
// when it is here) and each other, and each a file (not a directory) that
// opens for writing or a new file its directory takes.
func (f *submitFlags) checkCountsOutputs(inputs ...string) error {
	outs := []outputFile{{"--per-vertex", f.perVertex.vertices}, {"--per-edge", f.perVertex.edges}}
	if err := checkOutputPaths(inputs, outs...); err != nil {
		return err
	}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		fi, err := os.Stat(o.path)
		switch {
		case err == nil && fi.IsDir():
			return fmt.Errorf("%s %s: a directory; name a file", o.flag, o.path)
		case err == nil:
			w, err := os.OpenFile(o.path, os.O_WRONLY, 0)
			if err != nil {
				return fmt.Errorf("%s: %w", o.flag, err)
			}
			w.Close()
			continue
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s: %w", o.flag, err)
		}
		dir := filepath.Dir(o.path)
		probe, err := os.CreateTemp(dir, ".trigrid-write-check-*")
		if err != nil {
			return fmt.Errorf("%s %s: directory %s takes no new file: %w", o.flag, o.path, dir, err)
		}
		probe.Close()
		os.Remove(probe.Name())
	}
	return nil
}
