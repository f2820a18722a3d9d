package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// jobInfo is the server's record of a job; owned by the Run goroutine.
type jobInfo struct {
	rec        JobRecord
	state      api.JobState
	ended      time.Time
	faulty     []api.FaultyWorker
	watchers   map[chan struct{}]struct{}
	cancelPrep context.CancelFunc
	workers    map[api.WorkerID]bool
	// waitWorkers: preparation waits for a worker to join (P 0).
	waitWorkers bool
	// final is the job's last status once the scheduler has forgotten it.
	final *api.JobStatus
	// sums are a per-vertex job's counts while it runs (nil otherwise).
	sums *jobSums
	// stats are the per-worker sums of its accepted attempts; unsaved
	// counts its settled subtasks not yet on disk, which its status does
	// not show done.
	stats   jobStats
	unsaved int
	// queuedCPU is the process's CPU time when the job's subtasks were
	// queued (0 until then).
	queuedCPU time.Duration
}

func (j *jobInfo) notify() {
	for w := range j.watchers {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// newJobID returns a fresh id: the time and 4 random bytes.
func newJobID(now time.Time) api.JobID {
	var b [4]byte
	rand.Read(b[:])
	return api.JobID(now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]))
}

// Submit accepts a job: a graph file on the coordinator's filesystem to
// partition, or an existing shard store. It returns at once; the job
// prepares in the background and then queues behind earlier jobs.
func (s *Server) Submit(ctx context.Context, spec api.JobSpec) (api.JobID, error) {
	if err := s.checkSpec(&spec); err != nil {
		return "", err
	}
	now := time.Now()
	rec := JobRecord{ID: newJobID(now), Spec: spec, Created: now, State: api.JobPreparing, Scheme: spec.Scheme, P: spec.Partitions,
		PerVertex: spec.PerVertex || spec.PerEdge, PerEdge: spec.PerEdge}
	var err error
	if cerr := s.call(ctx, func() {
		if s.db != nil {
			if err = s.db.PutJob(rec); err != nil {
				return
			}
		}
		j := &jobInfo{rec: rec, state: api.JobPreparing, workers: map[api.WorkerID]bool{}}
		s.jobs[rec.ID] = j
		s.order = append(s.order, rec.ID)
		s.startPrepare(j)
	}); cerr != nil {
		return "", cerr
	}
	if err != nil {
		return "", err
	}
	s.log.Info("job submitted", "job", rec.ID, "graph", spec.Graph, "shards", spec.Shards, "partitions", spec.Partitions, "scheme", spec.Scheme)
	return rec.ID, nil
}

// prepared is what preparing a job produced.
type prepared struct {
	store    storage.Store
	manifest *storage.Manifest
	tasks    []partition.Subtask
	sums     *jobSums // per-vertex jobs only
}

// startPrepare partitions the job's graph or reads its store's manifest in
// the background; the outcome comes back to the Run goroutine.
// A graph job with P 0 waits while no worker is connected: P comes from
// the workers' device memory.
func (s *Server) startPrepare(j *jobInfo) {
	j.state = api.JobPreparing
	spec, id := j.rec.Spec, j.rec.ID
	budget := s.budget()
	if spec.Graph != "" && spec.Partitions == 0 && budget == 0 && len(s.sessions) == 0 {
		if !j.waitWorkers {
			s.log.Info("job waits for a worker to choose P from its device memory", "job", id)
		}
		j.waitWorkers = true
		return
	}
	j.waitWorkers = false
	ctx, cancel := context.WithCancel(s.runCtx)
	j.cancelPrep = cancel
	go func() {
		defer cancel()
		p, err := s.prepare(ctx, id, spec, budget)
		s.post(context.Background(), func() { s.prepared(id, p, err) })
	}()
}

// budget is the smallest device memory among the connected workers, or
// Config.DeviceMemory when none reports one.
func (s *Server) budget() int64 {
	var b int64
	for _, w := range s.sched.Workers() {
		for _, d := range w.Hello.Devices {
			if d.Memory > 0 && (b == 0 || d.Memory < b) {
				b = d.Memory
			}
		}
	}
	if b == 0 {
		b = s.cfg.DeviceMemory
	}
	return b
}

func (s *Server) prepare(ctx context.Context, id api.JobID, spec api.JobSpec, budget int64) (*prepared, error) {
	var p prepared
	var err error
	if spec.Shards != "" {
		if p.store, err = openStore(spec.Shards); err != nil {
			return nil, err
		}
		if p.manifest, err = storage.ReadManifest(ctx, p.store); err != nil {
			return nil, err
		}
	} else {
		if s.cfg.Partitioner == nil {
			return nil, errNoPartitioner
		}
		scheme, err := storage.ParseScheme(spec.Scheme)
		if err != nil {
			return nil, err
		}
		if spec.Partitions == 0 && budget <= 0 {
			return nil, fmt.Errorf("coordinator: partitions 0 chooses P from the workers' device memory, and no connected worker reports any (give --partitions, or the coordinator --device-memory)")
		}
		if s.cfg.StateDir != "" {
			dir, err := filepath.Abs(filepath.Join(s.cfg.StateDir, "jobs", string(id)))
			if err != nil {
				return nil, err
			}
			if err := os.RemoveAll(dir); err != nil { // a partial run before a restart
				return nil, fmt.Errorf("coordinator: job %s: clearing %s: %w", id, dir, err)
			}
			p.store, err = openStore("file://" + filepath.ToSlash(dir))
			if err != nil {
				return nil, err
			}
		} else {
			p.store = storage.NewMemStore()
		}
		p.manifest, err = s.cfg.Partitioner.Partition(ctx, PartitionRequest{Graph: spec.Graph, Scheme: scheme, P: spec.Partitions,
			Budget: budget, Store: p.store, Read: readOptions(spec)})
		if err != nil {
			return nil, err
		}
	}
	p.tasks = partition.Subtasks(p.manifest)
	if spec.PerVertex || spec.PerEdge {
		if p.sums, err = newJobSums(ctx, p.store, p.manifest, p.tasks, spec.PerEdge); err != nil {
			return nil, fmt.Errorf("%s: %w", p.store.URL(), err)
		}
	}
	return &p, nil
}

// prepared runs on the Run goroutine when a job's preparation ends.
func (s *Server) prepared(id api.JobID, p *prepared, err error) {
	j := s.jobs[id]
	if j != nil && j.state.Final() {
		s.dropShards(j)
	}
	if j == nil || j.state.Final() {
		return
	}
	j.cancelPrep = nil
	if err != nil {
		s.endJob(j, api.JobFailed, 0, fmt.Errorf("coordinator: job %s: preparing: %w", id, err))
		return
	}
	j.rec.Store, j.rec.P, j.rec.Scheme = p.store.URL(), p.manifest.P, p.manifest.Scheme.String()
	j.rec.Subtasks, j.rec.State = p.tasks, api.JobQueued
	if s.db != nil {
		if err := s.db.PutJob(j.rec); err != nil {
			s.endJob(j, api.JobFailed, 0, err)
			return
		}
	}
	s.serve(id, p.store, p.manifest)
	j.sums = p.sums
	j.state = api.JobQueued
	s.addToScheduler(j, nil)
}

func (s *Server) addToScheduler(j *jobInfo, settled map[int]uint64) {
	j.queuedCPU = max(processCPU(), 1)
	ds, err := s.sched.AddJob(scheduler.JobSpec{ID: j.rec.ID, Subtasks: j.rec.Subtasks, Store: j.rec.Store,
		Kernel: j.rec.Spec.Kernel, PerVertex: j.rec.PerVertex, PerEdge: j.rec.PerEdge, Settled: settled})
	if err != nil {
		s.endJob(j, api.JobFailed, 0, err)
		return
	}
	s.log.Info("job queued", "job", j.rec.ID, "subtasks", len(j.rec.Subtasks), "settled", len(settled), "store", j.rec.Store)
	s.apply(ds)
	j.notify()
}

// recordFaulty writes a running job's faulty workers to the state, so a
// restarted coordinator refuses them too.
func (s *Server) recordFaulty(j *jobInfo) {
	if s.db == nil || j.state.Final() {
		return
	}
	j.rec.Faulty = j.faulty
	rec := j.rec
	rec.Subtasks = nil // already stored
	if err := s.db.PutJob(rec); err != nil {
		s.log.Error("recording a faulty worker", "job", j.rec.ID, "err", err)
	}
}

// endJob records a job's final state.
func (s *Server) endJob(j *jobInfo, state api.JobState, total uint64, err error) {
	if j.state.Final() {
		return
	}
	j.state, j.ended = state, time.Now()
	j.rec.State, j.rec.Total, j.rec.Faulty = state, total, j.faulty
	j.rec.PerWorker = j.stats.snapshot()
	if j.queuedCPU > 0 {
		j.rec.CoordinatorCPU = max(0, processCPU()-j.queuedCPU)
	}
	if err != nil {
		j.rec.Err = api.TruncateText(err.Error(), api.MaxErrorLen)
	}
	preparing := j.cancelPrep != nil
	if preparing {
		j.cancelPrep()
		j.cancelPrep = nil
	}
	if state != api.JobDone && j.rec.PerVertex {
		s.dropCounts(j)
	}
	s.recordEnd(j)
	switch state {
	case api.JobDone:
		s.log.Info("job done", "job", j.rec.ID, "triangles", total)
	default:
		s.log.Warn("job ended", "job", j.rec.ID, "state", state.String(), "err", j.rec.Err)
	}
	s.met.jobEnded(state)
	if !preparing { // else prepared drops them once the partitioner stops
		s.dropShards(j)
	}
	if s.sched.Holds(j.rec.ID) {
		s.finished = append(s.finished, j.rec.ID)
		for len(s.finished) > s.cfg.KeepFinished {
			old := s.jobs[s.finished[0]]
			st := s.status(old)
			if err := s.sched.Forget(old.rec.ID); err == nil {
				old.final = &st
			}
			s.finished = s.finished[1:]
		}
	}
	// Closed, a watcher's channel tells it the job ended: it reads the
	// final status at once instead of coalescing it with what went before.
	for w := range j.watchers {
		close(w)
		delete(j.watchers, w)
	}
}

// recordEnd writes an ended job's record. A write that fails (a full
// state disk, say) is retried (retryEnds) until it is made, so that a job
// reported ended is not resumed by a restart once the disk has room.
func (s *Server) recordEnd(j *jobInfo) {
	if s.db == nil {
		return
	}
	rec := j.rec
	rec.Subtasks = nil // already stored
	err := s.db.PutJob(rec)
	if err == nil {
		delete(s.unrecorded, j.rec.ID)
		return
	}
	if !s.unrecorded[j.rec.ID] {
		s.log.Error("recording a job's end; retrying (until it is recorded, a restart would resume the job)", "job", j.rec.ID, "state", j.state.String(), "err", err)
	}
	if s.unrecorded == nil {
		s.unrecorded = map[api.JobID]bool{}
	}
	s.unrecorded[j.rec.ID] = true
}

// retryEnds writes the ended jobs' records that could not be written; on
// the Run goroutine. last says the process is stopping: a record still
// not written is then logged as lost.
func (s *Server) retryEnds(last bool) {
	for id := range s.unrecorded {
		j := s.jobs[id]
		if j == nil {
			delete(s.unrecorded, id)
			continue
		}
		s.recordEnd(j)
		if !s.unrecorded[id] {
			s.log.Info("a job's end is recorded", "job", id)
		} else if last {
			s.log.Error("a job's end could not be recorded; a restart resumes the job", "job", id)
		}
	}
}

// dropShards deletes the shards the coordinator cut for an ended graph
// job (StateDir/jobs/ID/) and stops serving them, unless KeepShards. A
// job submitted as a shard store keeps its store: it is not ours.
func (s *Server) dropShards(j *jobInfo) {
	if s.cfg.KeepShards || s.cfg.StateDir == "" || j.rec.Spec.Graph == "" {
		return
	}
	dir := filepath.Join(s.cfg.StateDir, "jobs", string(j.rec.ID))
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return
	}
	s.mu.Lock()
	delete(s.served, j.rec.ID)
	s.mu.Unlock()
	if err := os.RemoveAll(dir); err != nil {
		s.log.Warn("deleting an ended job's shards", "job", j.rec.ID, "dir", dir, "err", err)
		return
	}
	s.log.Info("deleted an ended job's shards", "job", j.rec.ID, "dir", dir)
}
