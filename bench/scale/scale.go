// Package scale is `trigrid bench scale`: for each worker count N it
// starts a coordinator and N workers as separate processes of the
// running binary on loopback (the gRPC, gossip and shard path of a real
// cluster), counts one shard store as a job, checks the count against an
// independent whole-graph count, and reports job time, kernel, fetch and
// decode time, speedup and parallel efficiency against one worker, the
// time imbalance ratio (TRUST's IR) and TEPS.
//
// Every run gets a fresh cluster, so every job is a first job: cold
// worker caches, no connection reused. Processes and temporary
// directories are removed when Bench returns, on an error or a cancelled
// context too.
package scale

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/storage"
)

// Progress shows the bench's phases (cmd/trigrid's progress bar or log
// lines); nil shows nothing.
type Progress interface {
	Start(phase, unit string, total int64)
	Update(done, total int64)
	Note(msg string)
	Done()
}

// Config is one bench. Start from DefaultConfig.
type Config struct {
	// Exe is the trigrid binary every coordinator and worker runs.
	Exe string
	// Graph is a graph file to read, count and partition with Scheme and
	// P (read with Read); Shards a store to count as it is. One of them.
	Graph  string
	Read   edgeio.ReadOptions
	Shards string
	Scheme storage.Scheme
	P      int
	// Workers are the worker counts, each run Repeat times; 1 must be
	// among them.
	Workers []int
	Repeat  int
	// Devices are GPU indexes: worker w counts on Devices[w % len], so
	// there is one worker per GPU up to len(Devices) workers. Empty means
	// CPU workers of CoresPerWorker cores each (GOMAXPROCS too).
	Devices        []int
	CoresPerWorker int
	// Kernel is the job's kernel ("" is each worker's auto). CacheBytes
	// and Prefetch are the workers' --cache and --prefetch (Prefetch 0
	// leaves the worker's default).
	Kernel     string
	CacheBytes int64
	Prefetch   int
	// WorkerArgs and CoordinatorArgs are appended to every worker's and
	// coordinator's command line.
	WorkerArgs, CoordinatorArgs []string
	// TempDir holds the runs' state and a graph file's shards ("" is the
	// system's).
	TempDir string
	// StartTimeout bounds a cluster's start (the coordinator ready, every
	// worker connected); JobTimeout one job; StopGrace how long a
	// process may take to stop after SIGTERM.
	StartTimeout, JobTimeout, StopGrace time.Duration
	Progress                            Progress
}

// DefaultConfig is one repeat on CPU workers of one core each, the
// workers' default cache, a hash partition of P = 8 for a graph file.
func DefaultConfig() Config {
	return Config{
		Scheme: storage.SchemeHash, P: 8, Workers: []int{1, 2}, Repeat: 1, CoresPerWorker: 1,
		CacheBytes: 1 << 30, StartTimeout: time.Minute, JobTimeout: time.Hour, StopGrace: 10 * time.Second,
	}
}

// validate checks c before anything starts; errors name the flag.
func (c *Config) validate() error {
	switch {
	case c.Exe == "":
		return errors.New("bench scale: no binary to start")
	case (c.Graph == "") == (c.Shards == ""):
		return errors.New("bench scale: give --graph FILE or --shards URL, one of them")
	case c.Graph != "" && (c.P < 1 || c.P > api.MaxPartitions):
		return fmt.Errorf("bench scale: --partitions %d: want 1 to %d", c.P, api.MaxPartitions)
	case c.Graph != "" && !c.Scheme.Valid():
		return fmt.Errorf("bench scale: --scheme: %v is not hash or range", c.Scheme)
	case c.Repeat < 1:
		return fmt.Errorf("bench scale: --repeat %d: want 1 or more", c.Repeat)
	case len(c.Devices) == 0 && c.CoresPerWorker < 1:
		return fmt.Errorf("bench scale: --cores-per-worker %d: want 1 or more", c.CoresPerWorker)
	case c.Prefetch < 0:
		return fmt.Errorf("bench scale: --prefetch %d: want 0 (the workers' default) or more", c.Prefetch)
	case c.StartTimeout <= 0 || c.JobTimeout <= 0 || c.StopGrace <= 0:
		return errors.New("bench scale: timeouts must be positive")
	}
	one := false
	for _, n := range c.Workers {
		if n < 1 || n > 4096 {
			return fmt.Errorf("bench scale: --workers: %d workers: want 1 to 4096", n)
		}
		one = one || n == 1
	}
	if !one {
		return fmt.Errorf("bench scale: --workers %v: include 1, the run speedup and efficiency are measured against", c.Workers)
	}
	for _, d := range c.Devices {
		if d < 0 || d >= api.MaxDevices {
			return fmt.Errorf("bench scale: --devices: %d is not a GPU index", d)
		}
	}
	return nil
}

func (c *Config) workerCores() int {
	if len(c.Devices) > 0 {
		return 0
	}
	return c.CoresPerWorker
}

func (c *Config) progress() Progress {
	if c.Progress == nil {
		return nop{}
	}
	return c.Progress
}

type nop struct{}

func (nop) Start(string, string, int64) {}
func (nop) Update(int64, int64)         {}
func (nop) Note(string)                 {}
func (nop) Done()                       {}

// Bench runs the bench: prepare the store and the reference count, then
// every worker count Repeat times, each on a fresh cluster. A job whose
// count differs from the reference fails the bench at once with both
// numbers. Everything Bench started is gone when it returns.
func Bench(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "trigrid-bench-scale-")
	if err != nil {
		return nil, fmt.Errorf("bench scale: %w", err)
	}
	defer os.RemoveAll(dir)
	defer cfg.progress().Done()
	prep, err := prepare(ctx, &cfg, dir)
	if err != nil {
		return nil, err
	}
	m := prep.manifest
	rep := &Report{Format: ReportFormat, Source: cfg.Graph, Store: prep.store, Scheme: m.Scheme.String(), P: m.P,
		Vertices: m.Graph.Vertices, Edges: m.Graph.Edges, Triangles: prep.triangles, Reference: prep.reference,
		Device: "cpu", CoresPerWorker: cfg.workerCores(), HostCores: runtime.NumCPU(), CacheBytes: cfg.CacheBytes, Prefetch: cfg.Prefetch}
	if rep.Source == "" {
		rep.Source = cfg.Shards
	}
	rep.GroupSizes = append([]int64(nil), m.GroupSizes...)
	rep.BlockEdges = make([]int64, m.P*m.P)
	for _, s := range m.Shards {
		rep.BlockEdges[s.I*m.P+s.J] = int64(s.Edges)
	}
	if len(cfg.Devices) > 0 {
		rep.Device = "gpu"
	}
	for _, n := range cfg.Workers {
		if rep.Device == "cpu" && n*cfg.CoresPerWorker > rep.HostCores {
			cfg.progress().Note(fmt.Sprintf("%d workers of %d cores share this machine's %d: they count slower than %d machines would",
				n, cfg.CoresPerWorker, rep.HostCores, n))
		}
		if rep.Device == "gpu" && n > len(cfg.Devices) {
			cfg.progress().Note(fmt.Sprintf("%d workers share %d GPUs", n, len(cfg.Devices)))
		}
	}
	// Repeats outside, worker counts inside: a machine whose load drifts
	// slows every worker count alike rather than the last ones.
	for r := range cfg.Repeat {
		for _, n := range cfg.Workers {
			run, err := runOnce(ctx, &cfg, prep, n, r+1, filepath.Join(dir, fmt.Sprintf("run-%d-%d", n, r+1)))
			if err != nil {
				return nil, err
			}
			rep.Subtasks = int(run.subtasks)
			rep.Runs = append(rep.Runs, run.Run)
		}
	}
	if rep.Rows, err = Summarize(rep.Runs, rep.Edges); err != nil {
		return nil, err
	}
	return rep, nil
}

type measured struct {
	Run
	subtasks int64
}

// runOnce is one job on a fresh cluster of n workers.
func runOnce(ctx context.Context, cfg *Config, prep *prepared, n, repeat int, dir string) (measured, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return measured{}, fmt.Errorf("bench scale: %w", err)
	}
	cfg.progress().Start(fmt.Sprintf("%d worker%s, run %d of %d: starting", n, plural(n), repeat, cfg.Repeat), "", -1)
	cl, err := startCluster(ctx, cfg, n, dir, prep.store)
	if err != nil {
		return measured{}, err
	}
	cfg.progress().Start(fmt.Sprintf("%d worker%s, run %d of %d", n, plural(n), repeat, cfg.Repeat), "", -1)
	before := cl.cpu()
	res, err := cl.runJob(ctx, prep.store, cfg.progress().Update)
	if err != nil {
		cl.kill()
		return measured{}, err
	}
	after := cl.cpu()
	if err := cl.stop(cfg.StopGrace); err != nil {
		return measured{}, err
	}
	st := res.status
	if st.Triangles != prep.triangles {
		return measured{}, fmt.Errorf("bench scale: WRONG COUNT: job %s with %d workers counted %d triangles, the reference (%s) %d",
			st.Job, n, st.Triangles, prep.reference, prep.triangles)
	}
	run, err := measure(st, n, prep.manifest.Graph.Edges)
	if err != nil {
		return measured{}, err
	}
	run.Repeat, run.WallSeconds = repeat, res.wall.Seconds()
	run.shares(before, after, res.wall)
	return measured{Run: run, subtasks: st.Subtasks}, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
