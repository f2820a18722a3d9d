package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// Per-vertex jobs: the server adds the partial counts of each subtask's
// winning attempt (scheduler.DecideSubtaskDone) to the job's sums, takes
// them back out when the scheduler reopens or overturns the subtask, and
// once the job is done writes the sums, in the input's ids, as binary
// counts files (counts.WriteVertices, counts.WriteEdges) under the counts
// directory, which FetchCounts serves. The job is reported done only once
// its files are written and have passed counts.Check against its total.
//
// With StateDir set, the partials of settled subtasks and the files of
// a finished job survive a restart (pervertex_persist.go).

// Names of a finished per-vertex job's counts files in its directory.
const (
	verticesFile = "vertices.bin"
	edgesFile    = "edges.bin"
)

// jobSums is a per-vertex job's running sums.
type jobSums struct {
	store storage.Store
	m     *storage.Manifest
	sums  *counts.Blocks
	ids   []uint64
	tasks []partition.Subtask
	// added is the partial in sums for each settled subtask, by index.
	added map[int]*api.Partial
}

// newJobSums reads the id map of a per-vertex job's store and prepares
// its sums.
func newJobSums(ctx context.Context, store storage.Store, m *storage.Manifest, tasks []partition.Subtask, perEdge bool) (*jobSums, error) {
	if m.IDMap == nil {
		return nil, errors.New("per-vertex counts need the id map, which this partitioning does not have (partition the graph again)")
	}
	ids, err := storage.ReadIDMap(ctx, store, *m.IDMap)
	if err != nil {
		return nil, err
	}
	if int64(len(ids)) != m.Graph.Vertices {
		return nil, fmt.Errorf("id map %s has %d ids for %d vertices", m.IDMap.File, len(ids), m.Graph.Vertices)
	}
	l, err := partition.ManifestLayout(m)
	if err != nil {
		return nil, err
	}
	return &jobSums{store: store, m: m, ids: ids, tasks: tasks, added: map[int]*api.Partial{},
		sums: counts.NewBlocks(l, m.Graph.Vertices, manifestEdges(m), perEdge)}, nil
}

// manifestEdges returns the edge count of each block of m (0 for blocks
// without a shard).
func manifestEdges(m *storage.Manifest) func(i, j int) int64 {
	idx := make(map[[2]int]int64, len(m.Shards))
	for _, s := range m.Shards {
		idx[[2]int{s.I, s.J}] = int64(s.Edges)
	}
	return func(i, j int) int64 { return idx[[2]int{i, j}] }
}

// settle puts p in the sums as subtask idx's counts, replacing the
// partial added for it before (a recount that overturned it).
func (js *jobSums) settle(idx int, p *api.Partial) error {
	if idx < 0 || idx >= len(js.tasks) {
		return fmt.Errorf("subtask %d outside the job's %d", idx, len(js.tasks))
	}
	t := js.tasks[idx]
	if p == nil {
		return fmt.Errorf("subtask %d (%d,%d,%d) was settled without per-vertex counts", idx, t.I, t.J, t.K)
	}
	if err := js.reopen(idx); err != nil {
		return err
	}
	if err := js.sums.Add(t.I, t.J, t.K, p); err != nil {
		return err
	}
	js.added[idx] = p
	return nil
}

// check reports whether settle would accept p for subtask idx.
func (js *jobSums) check(idx int, p *api.Partial) error {
	if idx < 0 || idx >= len(js.tasks) {
		return fmt.Errorf("subtask %d outside the job's %d", idx, len(js.tasks))
	}
	t := js.tasks[idx]
	return js.sums.Check(t.I, t.J, t.K, p)
}

// checkResult turns a counted result of a per-vertex job whose partial
// is missing or malformed into a failed attempt, so that the scheduler
// counts the subtask again (and never settles it without its partial).
// Run goroutine only.
func (s *Server) checkResult(r *api.Result) {
	j := s.jobs[r.Ref.Job]
	if j == nil || j.sums == nil || r.Err != "" || r.HandedBack {
		return
	}
	if err := j.sums.check(r.Ref.Index, r.Partial); err != nil {
		s.log.Warn("a result's per-vertex counts are unusable; the attempt counts as failed", "job", r.Ref.Job, "subtask", r.Ref.Index, "worker", r.Worker, "err", err)
		r.Err = api.TruncateText("per-vertex counts: "+err.Error(), api.MaxErrorLen)
		r.Triangles, r.Partial = 0, nil
	}
}

// reopen takes subtask idx's partial back out of the sums, if it is in.
func (js *jobSums) reopen(idx int) error {
	old := js.added[idx]
	if old == nil {
		return nil
	}
	t := js.tasks[idx]
	delete(js.added, idx)
	return js.sums.Remove(t.I, t.J, t.K, old)
}

// write has r read the counts from the sums and the job's blocks, checks
// them against the job's total and writes the counts files into dir.
func (js *jobSums) write(ctx context.Context, r CountsReader, dir string, total uint64) error {
	if len(js.added) != len(js.tasks) {
		return fmt.Errorf("per-vertex counts of %d of %d subtasks", len(js.added), len(js.tasks))
	}
	c, err := r.ReadCounts(ctx, CountsRequest{Store: js.store, Manifest: js.m, Sums: js.sums, IDs: js.ids})
	if err != nil {
		return err
	}
	if err := c.Check(total); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := counts.WriteVertices(ctx, filepath.Join(dir, verticesFile), c); err != nil {
		return err
	}
	if c.PerEdge {
		if _, err := counts.WriteEdges(ctx, filepath.Join(dir, edgesFile), c); err != nil {
			return err
		}
	}
	return nil
}

// countsDir is the directory of a job's counts files: under StateDir, or
// under a directory of this process's own that Run removes on return.
func (s *Server) countsDir(id api.JobID) (string, error) {
	if s.cfg.StateDir != "" {
		return filepath.Join(s.cfg.StateDir, "counts", string(id)), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tmpCounts == "" {
		d, err := os.MkdirTemp("", "trigrid-counts-*")
		if err != nil {
			return "", err
		}
		s.tmpCounts = d
	}
	return filepath.Join(s.tmpCounts, string(id)), nil
}

// removeTempCounts removes the counts of a coordinator without StateDir.
func (s *Server) removeTempCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tmpCounts != "" {
		if err := os.RemoveAll(s.tmpCounts); err != nil {
			s.log.Warn("removing the per-vertex counts", "dir", s.tmpCounts, "err", err)
		}
	}
}

// settleCounts applies a scheduler.DecideSubtaskDone or
// DecideSubtaskReopened to its job's sums; an error fails the job (never
// a silently partial result). Run goroutine only.
func (s *Server) settleCounts(d scheduler.Decision) {
	j := s.jobs[d.Job]
	if j == nil || j.sums == nil || j.state.Final() {
		return
	}
	var err error
	if d.Kind == scheduler.DecideSubtaskDone {
		if err = j.sums.settle(d.Ref.Index, d.Partial); err == nil {
			if perr := s.savePartial(d.Job, d.Ref.Index, d.Triangles, d.Partial); perr != nil {
				s.log.Error("saving a subtask's partial counts; a restart would count it again", "job", d.Job, "subtask", d.Ref.Index, "err", perr)
			}
		}
	} else {
		s.dropPartial(d.Job, d.Ref.Index)
		err = j.sums.reopen(d.Ref.Index)
	}
	if err != nil {
		s.failCounts(j, fmt.Errorf("coordinator: job %s: per-vertex counts: %w", j.rec.ID, err))
	}
}

// failCounts fails a per-vertex job whose sums went wrong.
func (s *Server) failCounts(j *jobInfo, err error) {
	j.sums = nil
	if s.sched.Holds(j.rec.ID) {
		if ds, cerr := s.sched.CancelJob(j.rec.ID); cerr == nil {
			s.pending = append(s.pending, ds...)
		}
	}
	s.endJob(j, api.JobFailed, 0, err)
}

// finishCounts writes a per-vertex job's counts files in the background
// once the scheduler has its total; the job is done only when they are
// written (failed when they cannot be). Until then it shows every
// subtask done and still runs; a coordinator stopped meanwhile writes
// them again after its restart, from the saved partials. Run goroutine
// only.
func (s *Server) finishCounts(j *jobInfo, total uint64) {
	id, js, perEdge := j.rec.ID, j.sums, j.rec.PerEdge
	fail := func(err error) {
		s.endJob(j, api.JobFailed, 0, fmt.Errorf("coordinator: job %s: per-vertex counts: %w", id, err))
	}
	if js == nil {
		fail(errors.New("its sums were lost"))
		return
	}
	reader := s.cfg.CountsReader
	if reader == nil { // a job resumed by a coordinator without one
		fail(errors.New("this coordinator has no counts reader"))
		return
	}
	j.sums = nil
	dir, err := s.countsDir(id)
	if err != nil {
		fail(err)
		return
	}
	ctx := s.runCtx
	go func() {
		// On an error the saved partials stay: failing the job removes
		// them, a shutdown keeps them for the restart.
		err := js.write(ctx, reader, dir, total)
		var sums map[string]uint64
		if err == nil {
			sums, err = hashCountsFiles(dir, perEdge)
		}
		if err == nil {
			if rerr := os.RemoveAll(filepath.Join(dir, "partials")); rerr != nil {
				s.log.Warn("removing a done job's partial counts", "job", id, "err", rerr)
			}
		}
		s.post(context.Background(), func() {
			if j.state.Final() {
				return
			}
			if err != nil {
				fail(err)
				return
			}
			s.log.Info("per-vertex counts written", "job", id, "dir", dir)
			j.rec.CountsFiles = sums
			s.endJob(j, api.JobDone, total, nil)
		})
	}()
}

// hashCountsFiles returns the xxhash64 of a done job's counts files in
// dir, by name.
func hashCountsFiles(dir string, perEdge bool) (map[string]uint64, error) {
	names := []string{verticesFile}
	if perEdge {
		names = append(names, edgesFile)
	}
	out := map[string]uint64{}
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		h := xxhash.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		out[name] = h.Sum64()
	}
	return out, nil
}

// dropCounts forgets the sums and removes the counts directory of a
// per-vertex job that ended without a result.
func (s *Server) dropCounts(j *jobInfo) {
	j.sums = nil
	dir, err := s.countsDir(j.rec.ID)
	if err == nil {
		err = os.RemoveAll(dir)
	}
	if err != nil {
		s.log.Warn("removing an ended job's per-vertex counts", "job", j.rec.ID, "err", err)
	}
}
