package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/plan"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

// CountFile counts the triangles of one graph file in this process: the
// whole forward graph as one subtask on the first slot, as plan.Choose
// lays it out (rep.Plan). The device is found and started while the file
// is read (cfg.Devices); the plan is chosen again as the input's size, the
// counter and the forward graph become known, and where a step finds the
// device too small, again without the capability that declined. Per-vertex
// counts take countFilePerVertex.
func CountFile(ctx context.Context, path string, cfg Config) (*Report, error) {
	if err := cfg.check(true); err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &Report{File: path}
	if cfg.PerVertex.Wanted() {
		return countFilePerVertex(ctx, path, cfg, rep, start)
	}
	dev := startCounter(ctx, &cfg)
	in, g, early, err := readPlanned(ctx, path, dev, &cfg, rep)
	defer releaseStage(in.staged, cfg.Logger)
	t := time.Now()
	counter, derr := dev.wait(&cfg)
	rep.Seconds.DeviceWait = since(t)
	if derr != nil {
		return nil, derr
	}
	defer closeCounter(counter, cfg.Logger)
	if err != nil {
		return nil, err
	}
	rep.Device = cfg.Device
	rep.Kernel = counter.Name()
	caps := capsOf(counter, dev, &cfg)
	pl := choose(g, caps, &cfg, counter.Name(), rep)
	if early != nil {
		// A graph larger than the device: its ids were numbered while
		// the device started; the device orients them (in pieces) and
		// counts in row ranges or blocks.
		fwd, _, err := orientEarly(ctx, path, early, pl, counter, &cfg, rep, false)
		if err != nil {
			return nil, err
		}
		return countForward(ctx, path, fwd, g, caps, counter, &cfg, rep, start)
	}
	return countClean(ctx, path, &in, g, caps, pl, counter, &cfg, rep, start)
}

// readPlanned reads path as the plan before the device is made says
// (staged while read, numbered early) and returns the input, its figures
// and the ids numbered early (nil unless the plan numbers them).
func readPlanned(ctx context.Context, path string, dev *pendingCounter, cfg *Config, rep *Report) (input, plan.GraphStats, *earlyIDs, error) {
	req := planRequest(cfg, "")
	pl := plan.Choose(plan.GraphStats{}, pendingCaps(dev, cfg), req)
	var (
		in  input
		err error
	)
	if pl.Read == plan.ReadIDs {
		in, err = readIDsStaged(ctx, path, dev, pl.Stage, cfg, rep)
	} else {
		in.edges, err = readEdges(dev.ctx, path, cfg, rep)
	}
	if err != nil {
		return in, plan.GraphStats{}, nil, err
	}
	g := pairStats(inputPairs(&in))
	g.Staged = in.staged != nil
	if pl = plan.Choose(g, pendingCaps(dev, cfg), req); !pl.Early {
		return in, g, nil, nil
	}
	early, err := compactEarly(path, &in, &g, dev, cfg, rep)
	return in, g, early, err
}

// countClean cleans, orients and counts in (consumed) as the plan pl says:
// the device cleans and counts it resident (from its own ids, or
// compacted by the host), or the host compacts it and the device orients
// it, or the host builds the forward graph; countForward counts what is
// not resident. A device that declines (DoesNotFit) is planned again
// without that capability.
func countClean(ctx context.Context, path string, in *input, g plan.GraphStats, caps plan.DeviceCaps, pl plan.Plan, counter kernels.Counter, cfg *Config, rep *Report, start time.Time) (*Report, error) {
	var (
		onDevice  *deviceCount
		compacted *graph.Compacted
		err       error
	)
	if pl.Resident && pl.FromIDs {
		onDevice, err = countIDsOnDevice(ctx, counter.(kernels.Device), in, cfg, rep)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if onDevice != nil && !cfg.Verify {
			finish(rep, start)
			return rep, nil
		}
		if onDevice == nil {
			caps.PrepareIDs = false
			fwd, err := orientDeclined(ctx, path, in, g, caps, counter, cfg, rep)
			if err != nil {
				return nil, err
			}
			if fwd != nil {
				return countForward(ctx, path, fwd, g, caps, counter, cfg, rep, start)
			}
			pl = choose(g, caps, cfg, counter.Name(), rep)
		}
	}
	if onDevice == nil && pl.Clean == plan.Host && pl.Orient == plan.Device {
		// A graph larger than the device: the host compacts its ids, the
		// device orients them (in pieces), and counts it in row ranges or
		// blocks.
		fwd, _, err := forwardOfInput(ctx, path, in, pl, counter, false, cfg, rep, false)
		if err != nil {
			return nil, err
		}
		return countForward(ctx, path, fwd, g, caps, counter, cfg, rep, start)
	}
	var p32 []uint32 // the host's 32-bit pairs
	if !caps.Prepare && in.p32 != nil {
		p32, *in = in.p32, input{}
	}
	edges := in.toEdges(cfg.Workers)
	*in = input{}
	if onDevice == nil && pl.Resident {
		// Without --verify the compaction consumes edges (the pairs take
		// their memory); --verify keeps them for an independent host clean.
		consume := !cfg.Verify
		onDevice, compacted, err = countOnDevice(ctx, counter.(kernels.Device), edges, consume, cfg, rep)
		if consume {
			edges = nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if onDevice != nil && !cfg.Verify {
			finish(rep, start)
			return rep, nil
		}
		if onDevice == nil {
			caps.Prepare = false
			choose(g, caps, cfg, counter.Name(), rep)
		}
	}
	host := *rep
	if rep.Removed != nil {
		r := *rep.Removed
		host.Removed = &r
	}
	src := hostInput{edges: edges, p32: p32}
	if edges == nil {
		src.c = compacted
	}
	fwd, _, err := hostForward(ctx, path, src, cfg, &host, false)
	edges, compacted = nil, nil
	if err != nil {
		return nil, err
	}
	if onDevice != nil {
		// --verify: the device's cleaning and orientation must agree with
		// the host's, and its count with the reference kernel's.
		if err := checkDevicePrep(onDevice, &host); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := verify(ctx, kernels.Whole(fwd), rep.Triangles, rep.Kernel, rep); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		finish(rep, start)
		return rep, nil
	}
	*rep = host
	return countForward(ctx, path, fwd, g, caps, counter, cfg, rep, start)
}

// countForward counts the forward graph fwd (of input figures g) with
// counter as the plan lays it out once its size is known: whole, in row
// ranges with its columns in host memory (falling back to blocks where a
// row does not fit), or in blocks as `count --partitions 0` does, sized by
// the GPU's memory or, on the CPU, by cfg.DeviceLimit under
// partition.HostModel.
func countForward(ctx context.Context, path string, fwd *graph.CSR, g plan.GraphStats, caps plan.DeviceCaps, counter kernels.Counter, cfg *Config, rep *Report, start time.Time) (*Report, error) {
	f := forwardStats(fwd, cfg)
	f.Pairs, f.PrepBytes, f.Staged = g.Pairs, g.PrepBytes, g.Staged
	f.Spanned, f.IDSpan, f.SpanFits = g.Spanned, g.IDSpan, g.SpanFits
	pl := choose(f, caps, cfg, counter.Name(), rep)
	switch pl.Layout {
	case plan.Blocks:
		limit, model := caps.Limit, GPUMemModel()
		if pl.HostModel {
			limit, model = cfg.DeviceLimit, partition.HostModel()
		}
		closeCounter(counter, cfg.Logger)
		return countAsBlocks(ctx, path, fwd, limit, model, cfg, rep, start)
	case plan.RowRanges:
		rc := counter.(kernels.RangeCounter)
		err := countInRanges(ctx, fwd, rc, cfg, rep)
		if err == nil {
			finish(rep, start)
			return rep, nil
		}
		if !rc.DoesNotFit(err) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		cfg.Logger.Info("a row of the graph does not fit the device; counting it in blocks", "err", err)
		// As `count --partitions 0` would: the counter's context gives
		// way to the subtasks' counters.
		closeCounter(counter, cfg.Logger)
		return countAsBlocks(ctx, path, fwd, caps.Limit, GPUMemModel(), cfg, rep, start)
	}
	if err := countWhole(ctx, fwd, counter, cfg, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	finish(rep, start)
	return rep, nil
}

// deviceCount is what the device path found, kept for --verify.
type deviceCount struct {
	stats kernels.PrepStats
	// ids: the device compacted the input's own ids, so it saw every
	// self-loop and counted the ids seen only in them.
	ids bool
}

// countOnDevice cleans, orients and counts on the device. When the graph
// does not fit it returns a nil count, no error, and the compacted edges,
// so the caller can finish cleaning on the host. With consume the
// compaction writes its pairs over edges, which the caller must not use
// afterwards.
func countOnDevice(ctx context.Context, dp kernels.Device, edges []graph.Edge, consume bool, cfg *Config, rep *Report) (*deviceCount, *graph.Compacted, error) {
	t := time.Now()
	cfg.Progress.Start("clean", "", -1)
	compact := graph.Compact
	if consume {
		compact = graph.CompactInPlace
	}
	c, err := compact(edges, graph.CleanOptions{Workers: cfg.Workers, Progress: cfg.Progress.Update})
	cfg.Progress.Done()
	if err != nil {
		return nil, nil, err
	}
	rep.Seconds.Clean = since(t)
	t = time.Now()
	st, err := dp.PrepareResident(ctx, c.Pairs, uint64(len(c.OrigID)))
	if dp.DoesNotFit(err) {
		cfg.Logger.Info("the edge list does not fit the device for preprocessing; cleaning on the host", "err", err)
		return nil, c, nil
	}
	if err != nil {
		return nil, nil, err
	}
	rep.Vertices, rep.Edges = c.Stats.Vertices, int64(st.Edges)
	r := rep.removed()
	r.SelfLoops, r.Duplicates, r.IsolatedIDs = c.Stats.SelfLoops, st.Duplicates, c.Stats.IsolatedIDs
	noteUnusedIDs(rep)
	rep.Order = graph.OrderDegree.String()
	maxOut := int64(st.MaxForward)
	rep.Wedges, rep.MaxDegree, rep.MaxOutDegree = st.Wedges, int64(st.MaxDegree), &maxOut
	rep.Seconds.Order = since(t)
	if err := countResident(ctx, dp, nil, rep); err != nil {
		return nil, nil, err
	}
	return &deviceCount{stats: st}, c, nil
}

// countResident counts the graph dv holds resident (the last
// PrepareResident or PrepareResidentIDs) into rep; released, when not
// nil, is called once the count is done.
func countResident(ctx context.Context, dv kernels.Device, released func(), rep *Report) error {
	t := time.Now()
	res, err := dv.CountResident(ctx)
	if released != nil {
		released()
	}
	if err != nil {
		return fmt.Errorf("count with %s: %w", dv.Name(), err)
	}
	rep.Triangles = res.Triangles
	rep.Kernel = worker.KernelName(dv)
	rep.Seconds.Count = since(t)
	rep.Seconds.Kernel = res.KernelTime.Seconds()
	return nil
}

// checkDevicePrep compares the graph the device built with the host's.
func checkDevicePrep(d *deviceCount, host *Report) error {
	st := d.stats
	type figures struct {
		Vertices, Edges, Wedges, MaxDegree, MaxForward int64
		Duplicates, SelfLoops                          uint64
	}
	dev := figures{int64(st.Vertices), int64(st.Edges), int64(st.Wedges), int64(st.MaxDegree), int64(st.MaxForward), st.Duplicates, st.SelfLoops}
	cpu := figures{host.Vertices, host.Edges, int64(host.Wedges), host.MaxDegree, *host.MaxOutDegree, host.Removed.Duplicates, host.Removed.SelfLoops}
	// Compacted pairs lose the self-loops of ids that appear only in
	// self-loops before the device sees them, so loops are compared only
	// where the device had the input's own ids (and then its isolated ids
	// too).
	if d.ids {
		if st.IsolatedIDs != host.Removed.IsolatedIDs {
			return fmt.Errorf("verify: the device found %d ids only in self-loops, the host %d", st.IsolatedIDs, host.Removed.IsolatedIDs)
		}
	} else {
		dev.SelfLoops, cpu.SelfLoops = 0, 0
	}
	if dev != cpu {
		return fmt.Errorf("verify: the device's cleaning and orientation gave %+v, the host's %+v", dev, cpu)
	}
	return nil
}

func countWhole(ctx context.Context, fwd *graph.CSR, counter kernels.Counter, cfg *Config, rep *Report) error {
	t := time.Now()
	cfg.Progress.Start("count", "edges", fwd.NumEdges())
	res, err := counter.Count(ctx, kernels.Whole(fwd))
	cfg.Progress.Done()
	if dp, ok := counter.(kernels.Device); ok && err != nil && dp.DoesNotFit(err) {
		return fmt.Errorf("count with %s: the graph does not fit the device (%w); use --partitions 0 to split it into subtasks that fit", counter.Name(), err)
	}
	if err != nil {
		return fmt.Errorf("count with %s: %w", counter.Name(), err)
	}
	rep.Triangles = res.Triangles
	rep.Kernel = worker.KernelName(counter)
	rep.Seconds.Count = since(t)
	rep.Seconds.Kernel = res.KernelTime.Seconds()
	if cfg.Verify {
		return verify(ctx, kernels.Whole(fwd), res.Triangles, counter.Name(), rep)
	}
	return nil
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

// deviceLimit is the device memory a GPU counter may hold (its
// --device-mem-limit, else the device's), when counter is one.
func deviceLimit(counter kernels.Counter) (uint64, bool) {
	m, ok := counter.(interface{ MemUsage() (used, limit uint64) })
	if !ok {
		return 0, false
	}
	_, limit := m.MemUsage()
	return limit, limit > 0
}

// fitsHost reports whether a subtask budget of limit bytes holds the whole
// forward graph under partition.HostModel, the CPU kernels' memory.
func fitsHost(fwd *graph.CSR, limit uint64) bool {
	return fitsHostSize(fwd.NumRows(), fwd.NumEdges(), limit)
}

// fitsHostSize is fitsHost for a forward graph of rows rows and edges
// edges.
func fitsHostSize(rows, edges int64, limit uint64) bool {
	whole := func(int, int) partition.BlockStat {
		return partition.BlockStat{Rows: rows, Edges: edges}
	}
	return partition.FitsBudget(1, whole, int64(min(limit, 1<<62)), partition.HostModel())
}

// countAsBlocks counts fwd, which a device of limit bytes does not hold
// whole under model, as `count --partitions 0` does: P chosen for the
// device, the blocks split on the host, the subtasks streamed through the
// device.
func countAsBlocks(ctx context.Context, path string, fwd *graph.CSR, limit uint64, model partition.MemModel, cfg *Config, rep *Report, start time.Time) (*Report, error) {
	cfg.Logger.Info("the graph does not fit the device whole; counting it in blocks", "graph_bytes",
		gpu.BlockBytes(fwd.NumRows(), fwd.NumEdges()), "limit", limit)
	cfg.P, cfg.Budget, cfg.Model = 0, int64(limit), model
	if cfg.Scheme == 0 {
		cfg.Scheme = storage.SchemeHash
	}
	part, pFit, err := splitOnHost(ctx, path, fwd, cfg, rep)
	if err != nil {
		return nil, err
	}
	return countBlocks(ctx, path, part, pFit, fwd, nil, cfg, rep, start)
}

// GPUMemModel is how P = 0 accounts a subtask's memory on a GPU: the
// library's allocations (gpu.BlockBytes), subtasks that do not fit
// counted in row ranges.
func GPUMemModel() partition.MemModel {
	return partition.MemModel{BlockBytes: gpu.BlockBytes, ScratchFixed: gpu.ContextBytes, RowSplit: true}
}
