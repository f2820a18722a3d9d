package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
)

// Progress receives the progress of long phases. Update may be called from
// any goroutine.
type Progress interface {
	Start(phase, unit string, total int64)
	Update(done, total int64)
	Done()
}

// CountConfig configures an in-process count of one graph file.
type CountConfig struct {
	Read  edgeio.ReadOptions
	Order graph.Order
	// Workers is the number of CPU goroutines for every parallel phase; 0
	// means all cores.
	Workers int
	// NewCounter makes the kernel that counts subtasks. Each local worker
	// gets its own, so a Counter need not be safe for concurrent use.
	NewCounter func() (kernels.Counter, error)
	// Device names where the counter runs, for the report ("cpu", the GPU's
	// name).
	Device string
	// Verify recounts with the reference kernel and fails on a mismatch.
	Verify bool
	// PerVertex asks for per-vertex (and per-edge) counts, the files they
	// go to and the top vertices and edges (counts.Options); the zero
	// value counts totals only.
	PerVertex counts.Options
	Progress  Progress
	Logger    *slog.Logger
}

func (c *CountConfig) validate() error {
	if c.NewCounter == nil {
		return fmt.Errorf("coordinator: CountConfig.NewCounter is nil")
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	c.Read.Workers = c.Workers
	if c.Progress == nil {
		c.Progress = nopProgress{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

type nopProgress struct{}

func (nopProgress) Start(string, string, int64) {}
func (nopProgress) Update(int64, int64)         {}
func (nopProgress) Done()                       {}

// LoadForward reads, cleans, orders and orients a graph file into its
// forward CSR, filling the matching parts of rep.
func LoadForward(ctx context.Context, path string, cfg *CountConfig, rep *Report) (*graph.CSR, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	edges, err := readEdges(ctx, path, cfg, rep)
	if err != nil {
		return nil, err
	}
	fwd, _, err := forwardOf(ctx, path, edges, cfg, rep, false)
	return fwd, err
}

func readEdges(ctx context.Context, path string, cfg *CountConfig, rep *Report) ([]graph.Edge, error) {
	t := time.Now()
	cfg.Progress.Start("read", "bytes", -1)
	ro := cfg.Read
	ro.Progress = cfg.Progress.Update
	edges, rs, err := edgeio.ReadFile(ctx, path, ro)
	cfg.Progress.Done()
	if err != nil {
		return nil, err
	}
	rep.Input = &Input{Format: rs.Format.String(), Compression: rs.Compression, Bytes: rs.Bytes, Lines: rs.Lines, RawEdges: rs.Edges,
		Header: rs.Header, HeaderLine: rs.HeaderLine, DeclaredVertices: rs.DeclaredVertices}
	rep.removed().BadLines = rs.BadLines
	rep.Seconds.Read = since(t)
	return edges, nil
}

// noteUnusedIDs sets Removed.UnusedDeclaredIDs once cleaning has counted
// the distinct ids of the input: those with an edge (Vertices) and those
// only in self-loops (IsolatedIDs). A Matrix Market file's indices never
// exceed its declared size, so the difference is the declared ids that no
// entry uses.
func noteUnusedIDs(rep *Report) {
	if rep.Input == nil || rep.Removed == nil {
		return
	}
	used := uint64(rep.Vertices) + rep.Removed.IsolatedIDs
	if d := rep.Input.DeclaredVertices; d > used {
		rep.Removed.UnusedDeclaredIDs = d - used
	}
}

// forwardOf cleans and orients edges on the host. The caller's edges are
// released as soon as cleaning is done (the slice is not used afterwards),
// so peak memory is the larger of two neighbouring stages.
// With wantIDs it also returns the input id of every forward id.
func forwardOf(ctx context.Context, path string, edges []graph.Edge, cfg *CountConfig, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	prog := cfg.Progress
	t := time.Now()
	prog.Start("clean", "", -1)
	und, cs, err := graph.Clean(edges, graph.CleanOptions{Workers: cfg.Workers, Progress: prog.Update})
	prog.Done()
	edges = nil
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Vertices, rep.Edges = cs.Vertices, cs.Edges
	r := rep.removed()
	r.SelfLoops, r.Duplicates, r.IsolatedIDs = cs.SelfLoops, cs.Duplicates, cs.IsolatedIDs
	noteUnusedIDs(rep)
	rep.Seconds.Clean = since(t)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}

	t = time.Now()
	prog.Start("order", "", -1)
	orig := und.OrigID
	if !wantIDs {
		und.OrigID = nil // free it before the forward graph is built
	}
	fwd, rank, os, err := graph.Orient(und, cfg.Order, cfg.Workers)
	prog.Done()
	und = nil
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Order = cfg.Order.String()
	rep.Wedges, rep.MaxDegree, rep.MaxOutDegree, rep.Degeneracy = os.Wedges, os.MaxDegree, &os.MaxOutDegree, os.Degeneracy
	rep.Seconds.Order = since(t)
	var ids []uint64
	if wantIDs {
		ids = make([]uint64, len(rank))
		for c, r := range rank {
			ids[r] = orig[c]
		}
	}
	return fwd, ids, ctx.Err()
}

// CountFile counts the triangles of one graph file in this process: the
// whole forward graph as one subtask. On a GPU with degree order it hands
// the compacted edges to the device, which cleans, orients and counts
// them without a round trip through host memory.
func CountFile(ctx context.Context, path string, cfg CountConfig) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &Report{File: path, Device: cfg.Device}
	counter, err := cfg.NewCounter()
	if err != nil {
		return nil, err
	}
	defer closeCounter(counter, cfg.Logger)
	rep.Kernel = counter.Name()
	edges, err := readEdges(ctx, path, &cfg, rep)
	if err != nil {
		return nil, err
	}
	perVertex := cfg.PerVertex.Wanted()
	if gc, ok := counter.(*gpu.Counter); ok && cfg.Order == graph.OrderDegree && !cfg.Verify && !perVertex {
		done, err := countOnDevice(ctx, gc, edges, &cfg, rep)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if done {
			finish(rep, start)
			return rep, nil
		}
	}
	fwd, ids, err := forwardOf(ctx, path, edges, &cfg, rep, perVertex)
	edges = nil
	if err != nil {
		return nil, err
	}
	if perVertex {
		err = countWholePerVertex(ctx, fwd, ids, counter, &cfg, rep)
	} else {
		err = countWhole(ctx, fwd, counter, &cfg, rep)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	finish(rep, start)
	return rep, nil
}

// countOnDevice cleans, orients and counts on the GPU. It reports false,
// with no error, when the graph does not fit the device, so the caller can
// clean on the host instead.
func countOnDevice(ctx context.Context, gc *gpu.Counter, edges []graph.Edge, cfg *CountConfig, rep *Report) (bool, error) {
	t := time.Now()
	cfg.Progress.Start("clean", "", -1)
	c, err := graph.Compact(edges, graph.CleanOptions{Workers: cfg.Workers, Progress: cfg.Progress.Update})
	cfg.Progress.Done()
	if err != nil {
		return false, err
	}
	rep.Seconds.Clean = since(t)
	t = time.Now()
	prep, err := gc.Preprocess(c.Pairs, uint64(len(c.OrigID)), false)
	if errors.Is(err, gpu.ErrOutOfMemory) {
		cfg.Logger.Info("the edge list does not fit the GPU for preprocessing; cleaning on the host", "err", err)
		rep.Seconds.Clean = 0
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st := prep.Stats
	rep.Vertices, rep.Edges = c.Stats.Vertices, int64(st.Edges)
	r := rep.removed()
	r.SelfLoops, r.Duplicates, r.IsolatedIDs = c.Stats.SelfLoops, st.Duplicates, c.Stats.IsolatedIDs
	noteUnusedIDs(rep)
	rep.Order = graph.OrderDegree.String()
	maxOut := int64(st.MaxForward)
	rep.Wedges, rep.MaxDegree, rep.MaxOutDegree = st.Wedges, int64(st.MaxDegree), &maxOut
	rep.Seconds.Order = since(t)
	t = time.Now()
	res, err := gc.CountResident(ctx)
	if err != nil {
		return false, fmt.Errorf("count with %s: %w", gc.Name(), err)
	}
	rep.Triangles = res.Triangles
	rep.Kernel = kernelName(gc)
	rep.Seconds.Count = since(t)
	rep.Seconds.Kernel = res.KernelTime.Seconds()
	return true, nil
}

func countWhole(ctx context.Context, fwd *graph.CSR, counter kernels.Counter, cfg *CountConfig, rep *Report) error {
	t := time.Now()
	cfg.Progress.Start("count", "edges", fwd.NumEdges())
	res, err := counter.Count(ctx, kernels.Whole(fwd))
	cfg.Progress.Done()
	if errors.Is(err, gpu.ErrOutOfMemory) {
		return fmt.Errorf("count with %s: the graph does not fit the GPU (%w); use --partitions 0 to split it into subtasks that fit", counter.Name(), err)
	}
	if err != nil {
		return fmt.Errorf("count with %s: %w", counter.Name(), err)
	}
	rep.Triangles = res.Triangles
	rep.Kernel = kernelName(counter)
	rep.Seconds.Count = since(t)
	rep.Seconds.Kernel = res.KernelTime.Seconds()
	if cfg.Verify {
		return verify(ctx, kernels.Whole(fwd), res.Triangles, counter.Name(), rep)
	}
	return nil
}

// kernelName says which kernel ran: "auto (hashcol)" rather than "auto".
func kernelName(c kernels.Counter) string {
	if lk, ok := c.(interface{ LastKernel() string }); ok {
		if k := lk.LastKernel(); k != "" && k != c.Name() {
			return c.Name() + " (" + k + ")"
		}
	}
	return c.Name()
}

func verify(ctx context.Context, t kernels.Subtask, got uint64, kernel string, rep *Report) error {
	ref, err := kernels.NewCPU("reference", kernels.CPUOptions{})
	if err != nil {
		return err
	}
	want, err := ref.Count(ctx, t)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if want.Triangles != got {
		return fmt.Errorf("verify: kernel %s counted %d triangles, the reference counts %d", kernel, got, want.Triangles)
	}
	rep.Verified = true
	return nil
}

func closeCounter(c kernels.Counter, log *slog.Logger) {
	if cl, ok := c.(io.Closer); ok {
		if err := cl.Close(); err != nil {
			log.Warn("closing kernel", "kernel", c.Name(), "err", err)
		}
	}
}

func finish(rep *Report, start time.Time) {
	rep.Transitivity = counts.Transitivity(rep.Triangles, rep.Wedges)
	rep.Seconds.Total = since(start)
	if rep.Seconds.Total > 0 {
		rep.EdgesPerSecond = float64(rep.Edges) / rep.Seconds.Total
	}
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }
