package coordinator

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator/scheduler"
	"github.com/trigrid/trigrid/storage"
)

// Server is the coordinator: it owns the scheduler (one goroutine, Run,
// feeds it every event and carries out its decisions), the job database,
// and the gRPC services Cluster (workers) and Jobs (clients).
type Server struct {
	pb.UnimplementedClusterServer

	cfg Config
	log *slog.Logger
	db  *StateDB
	// dataDirs are cfg.DataDirs resolved (absolute, links followed).
	dataDirs []string
	met      *metrics
	events   chan func()
	fetches  chan struct{} // FetchShard slots
	running  chan struct{} // closed when Run starts
	done     chan struct{} // closed when Run returns
	runOnce  sync.Once

	// Owned by the Run goroutine.
	sched    *scheduler.Scheduler
	jobs     map[api.JobID]*jobInfo
	order    []api.JobID
	sessions map[api.WorkerID]*session
	pending  []scheduler.Decision
	// queue writes settled subtasks while Run runs (nil without a state
	// database, or before Run); held are the decisions waiting for their
	// settled changes to be on disk, oldest first.
	queue    *settleQueue
	held     []heldDecisions
	runCtx   context.Context
	finished []api.JobID // finished jobs still in the scheduler, oldest first
	// unrecorded are the ended jobs whose final record failed to be
	// written, which retryEnds writes; retried is when it last ran (it
	// runs at most every second).
	unrecorded map[api.JobID]bool
	retried    time.Time

	// served is read by FetchShard handlers; guarded by mu.
	mu     sync.Mutex
	served map[api.JobID]*servedJob
	// tmpCounts holds the per-vertex counts files when there is no
	// StateDir ("" until the first); guarded by mu.
	tmpCounts string
}

// Errors the Server returns. ErrUnknownJob and ErrJobCanceled are the
// scheduler's, so that errors.Is holds whichever of the two said it.
var (
	// ErrStopped is returned to calls made when the server is not running.
	ErrStopped = errors.New("coordinator: stopped")
	// ErrUnknownJob: the server has no job of that id.
	ErrUnknownJob = scheduler.ErrUnknownJob
	// ErrJobCanceled is a cancelled job's error.
	ErrJobCanceled = scheduler.ErrJobCanceled
)

// NewServer opens the state (if any), restores its jobs and returns a
// server that serves once Run is called.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sched, err := scheduler.New(cfg.Scheduler)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger.With("component", "coordinator"),
		events:   make(chan func(), 1024),
		fetches:  make(chan struct{}, cfg.FetchConcurrency),
		running:  make(chan struct{}),
		done:     make(chan struct{}),
		sched:    sched,
		jobs:     make(map[api.JobID]*jobInfo),
		sessions: make(map[api.WorkerID]*session),
		served:   make(map[api.JobID]*servedJob),
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
		s.cfg.Registry = cfg.Registry
	}
	if s.met, err = newMetrics(cfg.Registry); err != nil {
		return nil, err
	}
	if err := cfg.Registry.Register(newJobCollector(s)); err != nil {
		return nil, err
	}
	if s.dataDirs, err = resolveDataDirs(cfg.DataDirs); err != nil {
		return nil, err
	}
	if cfg.StateDir != "" {
		if s.db, err = OpenState(cfg.StateDir); err != nil {
			return nil, err
		}
		s.db.committed = s.met.committed
		if err := s.restore(); err != nil {
			s.db.Close()
			return nil, err
		}
	}
	return s, nil
}

// Registry is the registry holding the coordinator's metrics, for the
// command to serve on /metrics.
func (s *Server) Registry() *prometheus.Registry { return s.cfg.Registry }

// Register adds the Cluster and Jobs services to a gRPC server.
func (s *Server) Register(g grpc.ServiceRegistrar) {
	pb.RegisterClusterServer(g, s)
	pb.RegisterJobsServer(g, jobsService{s: s})
}

// Welcome is what workers are told on joining.
func (s *Server) Welcome() api.Welcome {
	return api.Welcome{Version: s.cfg.Version, Heartbeat: s.cfg.HeartbeatInterval, Lease: s.cfg.Lease()}
}

// Run owns the scheduler until ctx ends: it feeds events from the
// services and a ticker, persists settled subtasks, then sends
// assignments. It returns nil when ctx ends; the server cannot be run
// again (Close releases the state).
func (s *Server) Run(ctx context.Context) error {
	started := false
	s.runOnce.Do(func() { started = true })
	if !started {
		return errors.New("coordinator: Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.runCtx = ctx
	defer close(s.done)
	defer s.removeTempCounts()
	for _, id := range s.order {
		if j := s.jobs[id]; j.state == api.JobPreparing || j.state == api.JobQueued && j.rec.Subtasks == nil {
			s.startPrepare(j)
		}
	}
	if s.db != nil {
		s.queue = newSettleQueue(s.db, s.log)
		go s.queue.run()
	}
	close(s.running)
	s.flush()
	tick := time.NewTicker(s.cfg.TickInterval)
	defer tick.Stop()
	var written chan struct{}
	if s.queue != nil {
		written = s.queue.written
	}
	for {
		select {
		case <-written:
			s.applyDurable()
		case f := <-s.events:
			f()
		drain:
			for range 255 {
				select {
				case f := <-s.events:
					f()
				default:
					break drain
				}
			}
		case <-tick.C:
			s.apply(s.sched.Tick())
			if len(s.unrecorded) > 0 && time.Since(s.retried) >= time.Second {
				s.retried = time.Now()
				s.retryEnds(false)
			}
		case <-ctx.Done():
			if s.queue != nil {
				s.queue.close()
				s.applyDurable()
				s.queue = nil
			}
			s.retryEnds(true)
			for _, sess := range s.sessions {
				sess.end()
			}
			for _, j := range s.jobs {
				if j.cancelPrep != nil {
					j.cancelPrep()
				}
			}
			return nil
		}
		s.flush()
	}
}

// Close releases the job database. Call it after Run has returned.
func (s *Server) Close() error {
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	return err
}

// post runs f on the Run goroutine without waiting; false when the server
// is not running (or ctx ended first).
func (s *Server) post(ctx context.Context, f func()) bool {
	select {
	case <-s.running:
	case <-s.done:
		return false
	case <-ctx.Done():
		return false
	}
	select {
	case s.events <- f:
		return true
	case <-s.done:
	case <-ctx.Done():
	}
	return false
}

// call runs f on the Run goroutine and waits for it.
func (s *Server) call(ctx context.Context, f func()) error {
	ran := make(chan struct{})
	if !s.post(ctx, func() { f(); close(ran) }) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ErrStopped
	}
	select {
	case <-ran:
		return nil
	case <-s.done:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) apply(ds []scheduler.Decision) { s.pending = append(s.pending, ds...) }

// openStore opens a job's store by its URL.
func openStore(url string) (storage.Store, error) { return storage.Open(url) }
