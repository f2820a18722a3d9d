package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// Status returns a job's status.
func (s *Server) Status(ctx context.Context, id api.JobID) (api.JobStatus, error) {
	var st api.JobStatus
	found := false
	if err := s.call(ctx, func() {
		s.flush() // a status shows only what is persisted
		if j := s.jobs[id]; j != nil {
			st, found = s.status(j), true
		}
	}); err != nil {
		return st, err
	}
	if !found {
		return st, fmt.Errorf("%w: %s", ErrUnknownJob, id)
	}
	return st, nil
}

// List returns every job's status in submission order.
func (s *Server) List(ctx context.Context) ([]api.JobStatus, error) {
	var out []api.JobStatus
	err := s.call(ctx, func() {
		s.flush()
		for _, id := range s.order {
			out = append(out, s.status(s.jobs[id]))
		}
	})
	return out, err
}

// Cancel cancels a job; cancelling a finished job changes nothing.
func (s *Server) Cancel(ctx context.Context, id api.JobID) error {
	var err error
	if cerr := s.call(ctx, func() {
		j := s.jobs[id]
		switch {
		case j == nil:
			err = fmt.Errorf("%w: %s", ErrUnknownJob, id)
		case j.state.Final():
		case j.rec.Subtasks == nil || j.state == api.JobPreparing:
			j.waitWorkers = false
			s.endJob(j, api.JobCancelled, 0, ErrJobCanceled)
		default:
			var ds []scheduler.Decision
			if ds, err = s.sched.CancelJob(id); err == nil {
				s.apply(ds)
			}
		}
	}); cerr != nil {
		return cerr
	}
	return err
}

// Watch calls fn with the job's status now and after changes (at most
// every interval, and the final status as soon as the job ends), until
// the job's final status or ctx ends or fn fails.
func (s *Server) Watch(ctx context.Context, id api.JobID, interval time.Duration, fn func(api.JobStatus) error) error {
	ch := make(chan struct{}, 1)
	var st api.JobStatus
	found := false
	if err := s.call(ctx, func() {
		s.flush()
		if j := s.jobs[id]; j != nil {
			found, st = true, s.status(j)
			if !j.state.Final() {
				if j.watchers == nil {
					j.watchers = map[chan struct{}]struct{}{}
				}
				j.watchers[ch] = struct{}{}
			}
		}
	}); err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%w: %s", ErrUnknownJob, id)
	}
	defer s.post(context.Background(), func() {
		if j := s.jobs[id]; j != nil {
			delete(j.watchers, ch)
		}
	})
	for {
		if err := fn(st); err != nil || st.State.Final() {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return ErrStopped
		}
		if err := coalesce(ctx, ch, interval); err != nil {
			return err
		}
		var err error
		if st, err = s.Status(ctx, id); err != nil {
			return err
		}
	}
}

// coalesce waits out interval, so that a burst of changes is shown as
// one status, unless ch is closed: the job ended.
func coalesce(ctx context.Context, ch chan struct{}, interval time.Duration) error {
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return nil
		case _, open := <-ch:
			if !open {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// grpcErr maps the coordinator's errors to gRPC status codes.
func grpcErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnknownJob):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, ErrStopped):
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.InvalidArgument, err.Error())
}

// The Jobs service: thin wrappers over Submit, Status, Watch, Cancel and
// List.

// Submit implements pb.JobsServer.
func (g jobsService) Submit(ctx context.Context, req *pb.SubmitRequest) (*pb.SubmitResponse, error) {
	spec, err := pb.DecodeSubmit(req)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	id, err := g.s.Submit(ctx, spec)
	if err != nil {
		return nil, grpcErr(err)
	}
	return &pb.SubmitResponse{Job: string(id)}, nil
}

// Status implements pb.JobsServer.
func (g jobsService) Status(ctx context.Context, req *pb.StatusRequest) (*pb.JobStatus, error) {
	id, err := pb.DecodeJobID("StatusRequest", req.GetJob())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	st, err := g.s.Status(ctx, id)
	if err != nil {
		return nil, grpcErr(err)
	}
	return pb.EncodeStatus(st), nil
}

// Watch implements pb.JobsServer.
func (g jobsService) Watch(req *pb.WatchRequest, stream pb.Jobs_WatchServer) error {
	id, err := pb.DecodeJobID("WatchRequest", req.GetJob())
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return grpcErr(g.s.Watch(stream.Context(), id, 200*time.Millisecond, func(st api.JobStatus) error {
		return stream.Send(pb.EncodeStatus(st))
	}))
}

// Cancel implements pb.JobsServer.
func (g jobsService) Cancel(ctx context.Context, req *pb.CancelRequest) (*pb.CancelResponse, error) {
	id, err := pb.DecodeJobID("CancelRequest", req.GetJob())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if err := g.s.Cancel(ctx, id); err != nil {
		return nil, grpcErr(err)
	}
	return &pb.CancelResponse{}, nil
}

// List implements pb.JobsServer.
func (g jobsService) List(ctx context.Context, _ *pb.ListRequest) (*pb.ListResponse, error) {
	sts, err := g.s.List(ctx)
	if err != nil {
		return nil, grpcErr(err)
	}
	out := &pb.ListResponse{}
	for _, st := range sts {
		out.Jobs = append(out.Jobs, pb.EncodeStatus(st))
	}
	return out, nil
}

// jobsService is the Jobs gRPC service of a Server (its Go methods of the
// same names take api types).
type jobsService struct {
	pb.UnimplementedJobsServer
	s *Server
}
