package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"

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
	stream, err := client.FetchCounts(ctx, &pb.FetchCountsRequest{Job: string(job), Edges: edges})
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
