package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// jobResult is what the bench learns of one job: its final status and
// the bench's own clock from submit to the final status.
type jobResult struct {
	status api.JobStatus
	wall   time.Duration
}

// runJob submits the store as a job and follows it to its end
// (reporting done subtasks to progress). A job that does not end in
// JobTimeout is cancelled and an error; so is one whose coordinator or
// any of whose workers exits meanwhile (the bench measures N workers,
// not fewer).
func (cl *cluster) runJob(ctx context.Context, store string, progress func(done, total int64)) (jobResult, error) {
	var res jobResult
	client := cl.jobs
	tctx, cancelTimeout := context.WithTimeout(ctx, cl.cfg.JobTimeout)
	defer cancelTimeout()
	jctx, cancel := context.WithCancelCause(tctx)
	defer cancel(nil)
	go cl.watchChildren(jctx, cancel)
	start := time.Now()
	resp, err := client.Submit(jctx, pb.EncodeSubmit(api.JobSpec{Shards: store, Kernel: cl.cfg.Kernel}))
	if err != nil {
		return res, cl.coord.failure(fmt.Sprintf("refused the job (%v)", err))
	}
	id, err := pb.DecodeJobID("SubmitResponse", resp.GetJob())
	if err != nil {
		return res, err
	}
	st, err := cl.follow(jctx, client, id, progress)
	res.wall = time.Since(start)
	if err != nil {
		if ce := (*childExited)(nil); errors.As(context.Cause(jctx), &ce) {
			return res, ce.err
		}
		if jctx.Err() != nil && ctx.Err() == nil {
			_, _ = client.Cancel(ctx, &pb.CancelRequest{Job: string(id)})
			return res, cl.coord.failure(fmt.Sprintf("did not finish job %s within %v", id, cl.cfg.JobTimeout))
		}
		return res, err
	}
	if st.State != api.JobDone {
		return res, fmt.Errorf("bench scale: job %s ended %s: %s", id, st.State, st.Err)
	}
	res.status = st
	return res, nil
}

// childExited is the cause of a job given up because a process of the
// cluster exited.
type childExited struct{ err error }

func (e *childExited) Error() string { return e.err.Error() }

// watchChildren cancels ctx, naming the process, when one of the
// cluster's processes exits before ctx ends.
func (cl *cluster) watchChildren(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, c := range append([]*child{cl.coord}, cl.workers...) {
			if c.exited() {
				cancel(&childExited{c.failure("exited during the job")})
				return
			}
		}
	}
}

// follow watches job id until it ends and returns its final status.
func (cl *cluster) follow(ctx context.Context, client pb.JobsClient, id api.JobID, progress func(done, total int64)) (api.JobStatus, error) {
	stream, err := client.Watch(ctx, &pb.WatchRequest{Job: string(id)})
	if err != nil {
		return api.JobStatus{}, fmt.Errorf("bench scale: watching job %s: %w", id, err)
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the coordinator ended the watch before the job ended")
			}
			if ctx.Err() != nil {
				return api.JobStatus{}, ctx.Err()
			}
			return api.JobStatus{}, cl.coord.failure(fmt.Sprintf("broke off job %s (%v)", id, err))
		}
		st, err := pb.DecodeStatus(m)
		if err != nil {
			return api.JobStatus{}, fmt.Errorf("bench scale: job %s: %w", id, err)
		}
		if progress != nil {
			progress(st.Done, st.Subtasks)
		}
		if st.State.Final() {
			return st, nil
		}
	}
}
