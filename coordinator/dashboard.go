package coordinator

import (
	"context"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator/dashboard"
)

// DashboardInput gathers what the dashboard shows (a dashboard.Source):
// every job's status, the subtasks of the job of detail ("" for none), the connected workers with their streams' addresses and
// when each was last heard, and the latest that left. It is gathered on
// the Run goroutine after a flush, so it shows only persisted progress.
func (s *Server) DashboardInput(ctx context.Context, detail api.JobID) (dashboard.Input, error) {
	var in dashboard.Input
	err := s.call(ctx, func() {
		s.flush()
		in = dashboard.Input{Now: time.Now(), NowTick: s.sched.Now(), Tick: s.cfg.TickInterval,
			Heartbeat: s.cfg.HeartbeatInterval, Departed: s.sched.Departed()}
		for _, id := range s.order {
			ji := dashboard.JobInput{Status: s.status(s.jobs[id])}
			if js, ok := s.sched.Job(id); ok {
				ji.Sched = &js
				if id == detail {
					ji.Subtasks, _ = s.sched.Subtasks(id)
				}
			}
			in.Jobs = append(in.Jobs, ji)
		}
		for _, ws := range s.sched.Workers() {
			wi := dashboard.WorkerInput{Status: ws}
			if sess := s.sessions[ws.Hello.Worker]; sess != nil {
				wi.Peer, wi.Heard = sess.peer, time.Unix(0, sess.heard.Load())
			}
			in.Workers = append(in.Workers, wi)
		}
	})
	return in, err
}

// Workers returns the connected workers in join order, then the latest
// that left, as dashboard.Workers reads them.
func (s *Server) Workers(ctx context.Context) ([]api.WorkerInfo, error) {
	in, err := s.DashboardInput(ctx, "")
	if err != nil {
		return nil, err
	}
	return dashboard.Workers(in), nil
}

// ListWorkers implements pb.JobsServer.
func (g jobsService) ListWorkers(ctx context.Context, _ *pb.ListWorkersRequest) (*pb.ListWorkersResponse, error) {
	ws, err := g.s.Workers(ctx)
	if err != nil {
		return nil, grpcErr(err)
	}
	return pb.EncodeWorkers(ws), nil
}
