package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/cespare/xxhash/v2"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/counts"
)

// fetchCounts fetches a done per-vertex job's counts from the
// coordinator into a temporary directory, checks them against the job's
// total (counts.Finish: per-vertex counts and per-edge support each sum
// to 3 x total) and writes the files o names here, in their formats.
func fetchCounts(ctx context.Context, client pb.JobsClient, job api.JobID, total uint64, o counts.Options) (*counts.Summary, error) {
	tmp, err := os.MkdirTemp("", "trigrid-submit-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	vf := filepath.Join(tmp, "vertices.bin")
	if err := fetchCountsFile(ctx, client, job, false, vf); err != nil {
		return nil, err
	}
	ef := ""
	if o.PerEdge() {
		ef = filepath.Join(tmp, "edges.bin")
		if err := fetchCountsFile(ctx, client, job, true, ef); err != nil {
			return nil, err
		}
	}
	c, err := counts.ReadBinary(vf, ef)
	if err != nil {
		return nil, fmt.Errorf("job %s: the coordinator's counts: %w", job, err)
	}
	s, err := counts.Finish(ctx, c, total, o)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", job, err)
	}
	return s, nil
}

// fetchCountsFile streams one counts file of job into path, checking
// every chunk against the size the first announced and the whole against
// its xxhash64.
func fetchCountsFile(ctx context.Context, client pb.JobsClient, job api.JobID, edges bool, path string) (err error) {
	what := "per-vertex"
	if edges {
		what = "per-edge"
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("job %s: fetching its %s counts: %w", job, what, err)
		}
	}()
	stream, err := client.FetchCounts(ctx, &pb.FetchCountsRequest{Job: string(job), Edges: edges}, grpc.MaxCallRecvMsgSize(api.MaxChunkMessage))
	if err != nil {
		return rpcError(err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := xxhash.New()
	w := io.MultiWriter(f, h)
	var size, got int64
	var hash uint64
	for first := true; ; first = false {
		ch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if first {
				return errors.New("empty stream")
			}
			break
		}
		if err != nil {
			return rpcError(err)
		}
		if err := pb.CheckChunk(ch, first, got, size); err != nil {
			return err
		}
		if first {
			size, hash = ch.GetSize(), ch.GetXxhash64()
		}
		if _, err := w.Write(ch.GetData()); err != nil {
			return err
		}
		got += int64(len(ch.GetData()))
	}
	if got != size {
		return fmt.Errorf("%d of %d bytes arrived", got, size)
	}
	if sum := h.Sum64(); sum != hash {
		return fmt.Errorf("xxhash64 %016x, the coordinator announced %016x", sum, hash)
	}
	return f.Close()
}

// waitAndFetch waits for job to end, fetches the per-vertex counts pv
// asks for when it is done, and prints the result.
func waitAndFetch(ctx context.Context, cmd *cobra.Command, client pb.JobsClient, job api.JobID, pv counts.Options, f *submitFlags) error {
	mode, err := parseProgressMode(f.progress)
	if err != nil {
		return err
	}
	st, err := watchJob(ctx, client, job, f.reconnect, newProgress(cmd.ErrOrStderr(), mode))
	if err != nil {
		if pv.Wanted() {
			err = fmt.Errorf("%w; `trigrid submit --job %s` with the same per-vertex flags fetches the counts later", err, job)
		}
		return err
	}
	var sum *counts.Summary
	if pv.Wanted() && st.State == api.JobDone {
		if sum, err = fetchCounts(ctx, client, job, st.Triangles, pv); err != nil {
			return err
		}
	}
	return printFinal(cmd.OutOrStdout(), st, sum, f.asJSON)
}

// followJob is submit --job: wait for a job submitted before and fetch
// its per-vertex counts.
func followJob(cmd *cobra.Command, args []string, f *submitFlags) error {
	if len(args) > 0 || f.shards != "" {
		return errors.New("--job follows a job submitted before: give no graph FILE or --shards")
	}
	for _, name := range []string{"partitions", "scheme", "kernel", "format", "skip-bad-lines"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--job follows a job submitted before: --%s does not apply", name)
		}
	}
	if err := api.CheckID("--job", f.job); err != nil {
		return err
	}
	pv, err := f.perVertex.options(1)
	if err != nil {
		return err
	}
	if err := f.checkCountsOutputs(); err != nil {
		return err
	}
	conn, err := f.sec.dial(f.coordinator)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return waitAndFetch(ctx, cmd, pb.NewJobsClient(conn), api.JobID(f.job), pv, f)
}
