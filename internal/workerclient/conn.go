// Package workerclient is a worker's side of the gRPC protocol: a Conn
// (Hello, Pull, Report, Heartbeat, as package worker's loop calls them)
// over one Work stream to the coordinator, reconnecting with backoff when
// the stream breaks, and a storage.Store that fetches a job's files from
// the coordinator (FetchShard) for workers without the shared filesystem.
package workerclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/internal/cluster"
)

// Config configures a Conn.
type Config struct {
	// Client is the connection to the coordinator (its security set by
	// the caller). Required; the Conn does not close it.
	Client *grpc.ClientConn
	// MinBackoff and MaxBackoff bound the wait between reconnects, which
	// doubles from MinBackoff after each failure. 0 means 100 ms and 5 s.
	MinBackoff, MaxBackoff time.Duration
	// FetchShards makes OpenStore always read a job's files through the
	// coordinator (FetchShard), even when the store's URL opens here: for
	// a path that names another filesystem on this machine. false reads
	// the store directly when its manifest is there.
	FetchShards bool
	// ResultBatch bounds the results sent in one message, and
	// ResultLinger how long a result waits for others to share its
	// message (see outbox.go); 0 means 256 and 2 ms, a negative linger
	// sends each result at once. ResendTimeout bounds the reconnect made
	// to resend a batch whose stream broke; 0 means 5 s.
	ResultBatch   int
	ResultLinger  time.Duration
	ResendTimeout time.Duration
	// Logger receives reconnects and refusals; nil discards them.
	Logger *slog.Logger
}

// Defaults of Config's batching.
const (
	DefaultResultBatch   = 256
	DefaultResultLinger  = 2 * time.Millisecond
	DefaultResendTimeout = 5 * time.Second
)

// ErrRefused wraps a refusal that retrying cannot cure: a missing or
// wrong join token, a Hello the coordinator rejects, TLS settings that do
// not fit the coordinator's (cluster.TLSErrorPrefix).
var ErrRefused = errors.New("workerclient: refused by the coordinator")

// ErrNameInUse wraps (with ErrRefused) the refusal of a worker whose name
// a live worker of another process holds.
var ErrNameInUse = errors.New("the worker name is in use")

// Conn is one worker's session with the coordinator. It is safe for
// concurrent use: Pull from one goroutine, Report and Heartbeat from
// others.
type Conn struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	hello   *pb.Hello
	sess    *session
	welcome api.Welcome
	// pending is how many assignments the current session has asked for
	// and not yet received.
	pending int
	// stores maps a store URL to the job it belongs to, for the FetchShard
	// fallback (OpenStore).
	stores map[string]api.JobID
	// cancels carries the coordinator's cancels to the worker loop
	// (worker.Canceller).
	cancels chan api.Cancel
	// out batches results and pulls (outbox.go).
	out outbox
}

// session is one Work stream.
type session struct {
	stream  pb.Cluster_WorkClient
	cancel  context.CancelFunc
	sendMu  sync.Mutex
	batches chan []api.Assignment
	done    chan struct{}
	err     error // set before done closes
	// closing is set by Close before it ends the stream: the end is this
	// side's orderly stop, not a fault.
	closing atomic.Bool
}

// New returns a Conn; it connects on Hello.
func New(cfg Config) (*Conn, error) {
	if cfg.Client == nil {
		return nil, errors.New("workerclient: no gRPC client connection")
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(5*time.Second, cfg.MinBackoff)
	}
	if cfg.ResultBatch <= 0 {
		cfg.ResultBatch = DefaultResultBatch
	}
	cfg.ResultBatch = min(cfg.ResultBatch, api.MaxBatch)
	if cfg.ResultLinger == 0 {
		cfg.ResultLinger = DefaultResultLinger
	}
	if cfg.ResendTimeout <= 0 {
		cfg.ResendTimeout = DefaultResendTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Conn{cfg: cfg, log: log.With("component", "workerclient"), stores: map[string]api.JobID{},
		cancels: make(chan api.Cancel, api.MaxBatch)}, nil
}

// Cancels implements worker.Canceller: the attempts the coordinator no
// longer needs, which the worker stops without sending a result.
func (c *Conn) Cancels() <-chan api.Cancel { return c.cancels }

// HeartbeatInterval is the coordinator's heartbeat interval from the last
// Welcome (worker.HeartbeatPacer); 0 before the first connect.
func (c *Conn) HeartbeatInterval() time.Duration { return c.Welcome().Heartbeat }

// Welcome returns what the coordinator said on the last connect.
func (c *Conn) Welcome() api.Welcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.welcome
}

// Hello introduces the worker and opens the stream, retrying until ctx
// ends or the coordinator refuses the worker for good.
func (c *Conn) Hello(ctx context.Context, h api.Hello) error {
	m := pb.EncodeHello(h)
	if _, err := pb.DecodeHello(m); err != nil {
		return err
	}
	c.mu.Lock()
	c.hello = m
	if c.out.wake == nil {
		c.startOutbox()
	}
	c.mu.Unlock()
	_, err := c.current(ctx)
	return err
}

// current returns the open session, connecting (with backoff) when there
// is none.
func (c *Conn) current(ctx context.Context) (*session, error) {
	backoff := c.cfg.MinBackoff
	for {
		c.mu.Lock()
		s := c.sess
		hello := c.hello
		c.mu.Unlock()
		if hello == nil {
			return nil, errors.New("workerclient: Hello first")
		}
		if s != nil {
			select {
			case <-s.done:
			default:
				return s, nil
			}
		}
		s, err := c.connect(ctx, hello)
		if err == nil {
			return s, nil
		}
		if errors.Is(err, ErrRefused) {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.log.Warn("cannot reach the coordinator; retrying", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, c.cfg.MaxBackoff)
	}
}

// connect opens a Work stream, says Hello and waits for the Welcome.
func (c *Conn) connect(ctx context.Context, hello *pb.Hello) (*session, error) {
	sctx, cancel := context.WithCancel(context.Background())
	stream, err := pb.NewClusterClient(c.cfg.Client).Work(sctx)
	if err != nil {
		cancel()
		return nil, classify(err)
	}
	s := &session{stream: stream, cancel: cancel, batches: make(chan []api.Assignment, 64), done: make(chan struct{})}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: hello}}); err != nil {
		cancel()
		return nil, classify(err)
	}
	// The Welcome must come before ctx ends.
	type welcomed struct {
		w   api.Welcome
		err error
	}
	got := make(chan welcomed, 1)
	go func() {
		m, err := stream.Recv()
		if err != nil {
			got <- welcomed{err: classify(err)}
			return
		}
		w, err := pb.DecodeWelcome(m.GetWelcome())
		got <- welcomed{w, err}
	}()
	var w welcomed
	select {
	case w = <-got:
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	if w.err != nil {
		cancel()
		return nil, w.err
	}
	c.mu.Lock()
	c.sess = s
	c.welcome = w.w
	c.pending = 0
	c.mu.Unlock()
	c.log.Info("connected to the coordinator", "version", w.w.Version, "heartbeat", w.w.Heartbeat, "lease", w.w.Lease)
	go c.receive(s)
	return s, nil
}

// classify marks the errors retrying cannot cure.
func classify(err error) error {
	msg := status.Convert(err).Message()
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument:
		return fmt.Errorf("%w: %s", ErrRefused, msg)
	case codes.AlreadyExists:
		return fmt.Errorf("%w: %w: %s", ErrRefused, ErrNameInUse, msg)
	case codes.Unavailable:
		if cluster.IsTLSMismatch(msg) {
			return fmt.Errorf("%w: %s", ErrRefused, msg)
		}
	}
	return err
}

// receive reads the coordinator's messages until the stream ends.
func (c *Conn) receive(s *session) {
	defer close(s.done)
	for {
		m, err := s.stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the coordinator closed the stream")
			}
			s.err = classify(err)
			if s.closing.Load() {
				c.log.Info("stream to the coordinator closed")
			} else {
				c.log.Warn("stream to the coordinator ended", "err", s.err)
			}
			s.cancel()
			return
		}
		switch msg := m.GetMsg().(type) {
		case *pb.CoordinatorMessage_Assignments:
			as, err := pb.DecodeAssignments(msg.Assignments)
			if err != nil {
				s.err = err
				c.log.Error("invalid assignments from the coordinator; reconnecting", "err", err)
				s.cancel()
				return
			}
			for _, a := range as {
				c.mu.Lock()
				c.stores[a.Store] = a.Ref.Job
				c.mu.Unlock()
			}
			s.batches <- as
		case *pb.CoordinatorMessage_Cancel:
			cl, err := pb.DecodeCancel(msg.Cancel)
			if err == nil {
				c.log.Debug("coordinator cancelled an attempt", "job", cl.Ref.Job, "subtask", cl.Ref.Index, "attempt", cl.Attempt, "reason", cl.Reason)
				select {
				case c.cancels <- cl:
				default:
					// The worker is far behind; an attempt it still
					// counts only costs time: its result is ignored as a
					// duplicate.
				}
			}
		default:
			c.log.Warn("unexpected message from the coordinator", "type", fmt.Sprintf("%T", msg))
		}
	}
}

func (s *session) send(m *pb.WorkerMessage) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.stream.Send(m)
}

// Pull asks for up to max assignments and waits for a batch, reconnecting
// when the stream breaks. Assignments of a broken stream are requeued by
// the coordinator.
func (c *Conn) Pull(ctx context.Context, n int) ([]api.Assignment, error) {
	if n < 1 || n > api.MaxBatch {
		return nil, fmt.Errorf("workerclient: pull of %d assignments (1..%d)", n, api.MaxBatch)
	}
	for {
		s, err := c.current(ctx)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if ask := n - c.pending; ask > 0 {
			c.pending = n
			c.queuePull(s, ask)
		}
		c.mu.Unlock()
		select {
		case as := <-s.batches:
			c.mu.Lock()
			if c.sess == s {
				c.pending = max(0, c.pending-len(as))
			}
			c.out.outstanding += len(as)
			c.mu.Unlock()
			return as, nil
		case <-s.done:
			// Take a batch that arrived just before the end.
			select {
			case as := <-s.batches:
				c.mu.Lock()
				c.out.outstanding += len(as)
				c.mu.Unlock()
				return as, nil
			default:
			}
			if errors.Is(s.err, ErrRefused) {
				return nil, s.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Report queues one result for the outbox (outbox.go), which sends it
// with others in one message, reconnecting when the stream is down: the
// coordinator accepts a result of an attempt it still holds and ignores
// one it has requeued.
func (c *Conn) Report(ctx context.Context, r api.Result) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out.wake == nil {
		return errors.New("workerclient: Hello first")
	}
	if c.out.closing {
		return fmt.Errorf("workerclient: result of %s/%d: the connection is closed", r.Ref.Job, r.Ref.Index)
	}
	c.queueResult(r)
	return nil
}

// Heartbeat sends a heartbeat on the open stream; with none open it does
// nothing (a new stream starts without attempts).
func (c *Conn) Heartbeat(ctx context.Context, hb api.Heartbeat) error {
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	if len(hb.Running) > api.MaxBatch {
		hb.Running = hb.Running[:api.MaxBatch]
	}
	return s.send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Heartbeat{Heartbeat: pb.EncodeHeartbeat(hb)}})
}

// Close sends the results queued, then ends the stream; the coordinator
// requeues what the worker held.
func (c *Conn) Close() error {
	c.closeOutbox()
	c.mu.Lock()
	s := c.sess
	c.sess = nil
	c.mu.Unlock()
	if s != nil {
		s.closing.Store(true)
		s.sendMu.Lock()
		s.stream.CloseSend()
		s.sendMu.Unlock()
		s.cancel()
		<-s.done
	}
	return nil
}
