package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// session is one worker's Work stream. The Run goroutine sends on out and
// ends it; the stream's goroutines read out and watch gone.
type session struct {
	id api.WorkerID
	// instance is the worker process's Hello.Instance; peer the stream's
	// remote address, for the refusal of another process of the name.
	instance string
	peer     string
	// ctx is the stream's context: done once the stream is broken.
	ctx context.Context
	// heard is when the worker's last message arrived (Unix nanoseconds).
	heard   atomic.Int64
	out     chan *pb.CoordinatorMessage
	gone    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	reason  string
	removed bool // the scheduler has been told (Run goroutine only)
}

// silentAfter is how long a session may go without a message from its
// worker, which heartbeats every interval, before another process may
// take its name: several missed heartbeats, and never under a second.
func silentAfter(heartbeat time.Duration) time.Duration { return max(3*heartbeat, time.Second) }

// live says whether the session's stream is open and its worker was heard
// from within silentAfter.
func (c *session) live(heartbeat time.Duration, now time.Time) bool {
	if c.ctx.Err() != nil {
		return false
	}
	return now.Sub(time.Unix(0, c.heard.Load())) < silentAfter(heartbeat)
}

// takeover decides whether a Hello under a name the session holds may
// replace it, and says why: the same process reconnecting (its instance),
// or a session that is dead or silent. Otherwise the Hello comes from
// another live process of the name and is refused.
func (c *session) takeover(instance string, heartbeat time.Duration, now time.Time) (string, bool) {
	switch {
	case instance != "" && instance == c.instance:
		return "replaced by a new connection of the same worker process", true
	case c.ctx.Err() != nil:
		return "replaced: its stream had broken", true
	case !c.live(heartbeat, now):
		return fmt.Sprintf("replaced: silent for %v", now.Sub(time.Unix(0, c.heard.Load())).Round(time.Millisecond)), true
	}
	return "", false
}

func (c *session) end() {
	c.once.Do(func() { close(c.gone) })
}

func (c *session) why() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reason
}

// send queues a message without blocking; a worker too far behind is
// disconnected. Run goroutine only.
func (c *session) send(s *Server, m *pb.CoordinatorMessage) {
	select {
	case <-c.gone:
	case c.out <- m:
	default:
		s.endSession(c, fmt.Sprintf("%d messages waiting to be sent", cap(c.out)))
	}
}

// endSession tells the scheduler the worker left and closes its stream.
// Run goroutine only.
func (s *Server) endSession(c *session, reason string) {
	if c.removed {
		return
	}
	c.removed = true
	c.mu.Lock()
	c.reason = reason
	c.mu.Unlock()
	if s.sessions[c.id] == c {
		delete(s.sessions, c.id)
		s.apply(s.sched.WorkerLeft(c.id, reason))
		s.log.Info("worker left", "worker", c.id, "reason", reason)
	}
	c.end()
}

// Work is a worker's session: Hello, Welcome, then pulls, results and
// heartbeats in, assignments and cancels out. The stream ending (either
// way) hands the worker's running attempts back to the queue.
func (s *Server) Work(stream pb.Cluster_WorkServer) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	h, err := pb.DecodeHello(first.GetHello())
	if err != nil {
		s.log.Warn("worker refused", "err", err)
		return status.Errorf(codes.InvalidArgument, "coordinator: the first message must be a valid Hello: %v", err)
	}
	sess := &session{id: h.Worker, instance: h.Instance, peer: "an unknown address", ctx: ctx,
		out: make(chan *pb.CoordinatorMessage, s.cfg.SendQueue), gone: make(chan struct{})}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		sess.peer = p.Addr.String()
	}
	sess.heard.Store(time.Now().UnixNano())
	var refused, inUse error
	if err := s.call(ctx, func() {
		if why := s.sched.Fault(h.Worker); why != nil {
			refused = why
			return
		}
		if old := s.sessions[h.Worker]; old != nil {
			why, ok := old.takeover(h.Instance, s.cfg.HeartbeatInterval, time.Now())
			if !ok {
				inUse = fmt.Errorf("coordinator: worker name %s is already in use by a live worker at %s; give each worker a unique --name", h.Worker, old.peer)
				return
			}
			s.endSession(old, why)
		}
		s.sessions[h.Worker] = sess
		s.apply(s.sched.WorkerJoined(h))
		s.log.Info("worker joined", "worker", h.Worker, "version", h.Version, "slots", h.Slots, "devices", len(h.Devices))
		for _, id := range s.order {
			if j := s.jobs[id]; j.waitWorkers && !j.state.Final() {
				s.startPrepare(j)
			}
		}
	}); err != nil {
		s.post(context.Background(), func() { s.endSession(sess, "stream ended while joining") })
		return status.Errorf(codes.Unavailable, "coordinator: %v", err)
	}
	if refused != nil {
		s.log.Warn("faulty worker refused", "worker", h.Worker, "err", refused)
		return status.Errorf(codes.PermissionDenied, "coordinator: worker %s was found faulty and gets no more work: %v", h.Worker, refused)
	}
	if inUse != nil {
		s.log.Warn("worker refused: its name is in use", "worker", h.Worker, "peer", sess.peer, "err", inUse)
		return status.Error(codes.AlreadyExists, inUse.Error())
	}
	leave := func(reason string) {
		s.post(context.Background(), func() { s.endSession(sess, reason) })
	}
	// Assignments wait in sess.out until the Welcome is out.
	if err := stream.Send(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Welcome{Welcome: pb.EncodeWelcome(s.Welcome())}}); err != nil {
		leave("stream broke: " + err.Error())
		return err
	}

	recvErr := make(chan error, 1)
	go func() { recvErr <- s.receive(ctx, stream, sess) }()
	for {
		select {
		case m := <-sess.out:
			if err := stream.Send(m); err != nil {
				leave("stream broke: " + err.Error())
				return err
			}
		case err := <-recvErr:
			reason := "stream closed"
			if err != nil && !errors.Is(err, io.EOF) {
				reason = "stream broke: " + err.Error()
			}
			leave(reason)
			if err == nil || errors.Is(err, io.EOF) {
				return nil
			}
			if _, ok := status.FromError(err); ok {
				return err
			}
			return status.Errorf(codes.InvalidArgument, "coordinator: %v", err)
		case <-sess.gone:
			return status.Errorf(codes.Aborted, "coordinator: session of %s ended: %s", h.Worker, sess.why())
		case <-s.done:
			return status.Error(codes.Unavailable, "coordinator: shutting down")
		}
	}
}

// receive reads the worker's messages and posts them to the Run goroutine
// until the stream ends or a message is invalid.
func (s *Server) receive(ctx context.Context, stream pb.Cluster_WorkServer, sess *session) error {
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		sess.heard.Store(time.Now().UnixNano())
		var f func()
		switch msg := m.GetMsg().(type) {
		case *pb.WorkerMessage_Pull:
			n, err := pb.DecodePull(msg.Pull)
			if err != nil {
				return s.badMessage(sess, err)
			}
			f = func() {
				if s.sessions[sess.id] == sess {
					s.apply(s.sched.Pull(sess.id, n))
				}
			}
		case *pb.WorkerMessage_Result:
			r, err := pb.DecodeResult(msg.Result)
			if err != nil {
				return s.badMessage(sess, err)
			}
			f = s.met.handling(s.takeResults(sess, []api.Result{r}, 0))
		case *pb.WorkerMessage_Results:
			rs, pull, err := pb.DecodeResults(msg.Results)
			if err != nil {
				return s.badMessage(sess, err)
			}
			f = s.met.handling(s.takeResults(sess, rs, pull))
		case *pb.WorkerMessage_Heartbeat:
			hb, err := pb.DecodeHeartbeat(msg.Heartbeat)
			if err != nil {
				return s.badMessage(sess, err)
			}
			hb.Worker = sess.id
			f = func() {
				if s.sessions[sess.id] == sess {
					s.apply(s.sched.Heartbeat(hb))
				}
			}
		case *pb.WorkerMessage_Hello:
			return s.badMessage(sess, errors.New("a second Hello"))
		default:
			return s.badMessage(sess, errors.New("an empty message"))
		}
		if !s.post(ctx, f) {
			return status.Error(codes.Unavailable, "coordinator: shutting down")
		}
	}
}

func (s *Server) badMessage(sess *session, err error) error {
	s.log.Warn("worker sent an invalid message; closing its stream", "worker", sess.id, "err", err)
	return status.Errorf(codes.InvalidArgument, "coordinator: invalid message from %s: %v", sess.id, err)
}

// takeResults returns what the Run goroutine does with a batch of a
// worker's results and the pull that came with them (0: none): each
// result goes to the scheduler in order, then the pull.
func (s *Server) takeResults(sess *session, rs []api.Result, pull int) func() {
	for i := range rs {
		rs[i].Worker = sess.id // a worker answers for itself only
		s.met.result(rs[i])
	}
	return func() {
		for i := range rs {
			r := &rs[i]
			if j := s.jobs[r.Ref.Job]; j != nil {
				j.workers[sess.id] = true
			}
			s.checkResult(r)
			s.apply(s.sched.Result(*r))
		}
		if pull > 0 && s.sessions[sess.id] == sess {
			s.apply(s.sched.Pull(sess.id, pull))
		}
	}
}
