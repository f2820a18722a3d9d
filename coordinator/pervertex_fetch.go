package coordinator

import (
	"io"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// FetchCounts streams a done per-vertex job's counts file.
func (s *Server) FetchCounts(req *pb.FetchCountsRequest, stream pb.Jobs_FetchCountsServer) error {
	id, edges, err := pb.DecodeFetchCounts(req)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "coordinator: %v", err)
	}
	ctx := stream.Context()
	var rec JobRecord
	found := false
	if err := s.call(ctx, func() {
		if j := s.jobs[id]; j != nil {
			rec, found = j.rec, true
			rec.State = j.state
		}
	}); err != nil {
		return grpcErr(err)
	}
	switch {
	case !found:
		return status.Errorf(codes.NotFound, "coordinator: %v: %s", ErrUnknownJob, id)
	case !rec.PerVertex:
		return status.Errorf(codes.FailedPrecondition, "coordinator: job %s did not ask for per-vertex counts", id)
	case edges && !rec.PerEdge:
		return status.Errorf(codes.FailedPrecondition, "coordinator: job %s did not ask for per-edge counts", id)
	case rec.State != api.JobDone:
		return status.Errorf(codes.FailedPrecondition, "coordinator: job %s is %s; its counts come once it is done", id, rec.State)
	}
	dir, err := s.countsDir(id)
	if err != nil {
		return status.Errorf(codes.Internal, "coordinator: %v", err)
	}
	name := filepath.Join(dir, verticesFile)
	if edges {
		name = filepath.Join(dir, edgesFile)
	}
	select {
	case s.fetches <- struct{}{}:
		defer func() { <-s.fetches }()
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
	f, err := os.Open(name)
	if err != nil {
		return status.Errorf(codes.NotFound, "coordinator: job %s: its counts file: %v", id, err)
	}
	defer f.Close()
	h := xxhash.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return status.Errorf(codes.Unavailable, "coordinator: job %s: reading %s: %v", id, name, err)
	}
	if want, ok := rec.CountsFiles[filepath.Base(name)]; !ok {
		return status.Errorf(codes.DataLoss, "coordinator: job %s: counts file %s: no checksum recorded for it", id, name)
	} else if want != h.Sum64() {
		return status.Errorf(codes.DataLoss, "coordinator: job %s: counts file %s: xxhash64 %016x, not the %016x recorded when it was written (damaged since)", id, name, h.Sum64(), want)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return status.Errorf(codes.Unavailable, "coordinator: job %s: reading %s: %v", id, name, err)
	}
	buf := make([]byte, s.cfg.ChunkSize)
	var off int64
	for first := true; first || off < size; first = false {
		n, err := io.ReadFull(f, buf[:min(int64(len(buf)), size-off)])
		if err != nil && !(n == 0 && size == off) {
			return status.Errorf(codes.Unavailable, "coordinator: job %s: reading %s: %v", id, name, err)
		}
		m := &pb.ShardChunk{Offset: off, Data: buf[:n]}
		if first {
			m.Size, m.Xxhash64 = size, h.Sum64()
		}
		if err := stream.Send(m); err != nil {
			return err
		}
		off += int64(n)
		if size == 0 {
			break
		}
	}
	return nil
}

// FetchCounts implements pb.JobsServer.
func (g jobsService) FetchCounts(req *pb.FetchCountsRequest, stream pb.Jobs_FetchCountsServer) error {
	return g.s.FetchCounts(req, stream)
}
