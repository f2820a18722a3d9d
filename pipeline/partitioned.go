package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/plan"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

// CountFilePartitioned counts one graph file through P x P in-memory
// blocks and P^3 subtasks (cfg.Scheme, cfg.P), run by the in-process
// coordinator and workers exactly as workers count shards, without
// writing any. The forward graph is built on the first slot's device when
// it can (loadForBlocks), else on the host. With cfg.Devices the device is
// found and started while the file is read.
func CountFilePartitioned(ctx context.Context, path string, cfg Config) (*Report, error) {
	if err := cfg.check(true); err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &Report{File: path}
	cfg.partitioned = true
	perVertex := cfg.PerVertex.Wanted()
	var split *deviceSplit
	if cfg.P > 0 {
		split = &deviceSplit{}
	}
	fwd, ids, err := loadForBlocks(ctx, path, &cfg, rep, perVertex, split)
	defer split.wait()
	if err != nil {
		return nil, err
	}
	rep.Device = cfg.Device
	var (
		part *partition.Partition
		pFit int
	)
	if split != nil && split.part != nil {
		// The device split the forward graph: its counter, holding the
		// blocks, counts the subtasks.
		part = split.part
		slot, release := handOver(cfg.Slots[0], split.counter, cfg.Logger)
		defer release()
		cfg.Slots = []worker.Slot{slot}
	} else if part, pFit, err = splitOnHost(ctx, path, fwd, &cfg, rep); err != nil {
		return nil, err
	} else if !cfg.Verify && anyDevice(&cfg) {
		// The blocks are made: the forward graph (and the input whose
		// memory it took) goes back to the operating system while the
		// devices count, rather than at the process's exit, where freeing
		// it would add to the run.
		fwd = nil
		defer freeWhileCounting()()
	}
	return countBlocks(ctx, path, part, pFit, fwd, ids, &cfg, rep, start)
}

// countBlocks counts the subtasks of part (split from fwd; pFit the
// smallest P that fits when P was chosen) on cfg's slots, checks them with
// --verify and adds per-vertex counts (ids: the input id of every forward
// id) into rep. fwd may be nil without --verify. cfg's slots are made to
// stream rows when one GPU should.
func countBlocks(ctx context.Context, path string, part *partition.Partition, pFit int, fwd *graph.CSR, ids []uint64,
	cfg *Config, rep *Report, start time.Time) (*Report, error) {
	perVertex := cfg.PerVertex.Wanted()
	p := part.P()
	src := worker.PartitionSource{Part: part}
	tasks := part.Subtasks()
	stream := false
	if oneDevice(cfg) {
		rows, edges := largestBlock(part)
		if stream = streamRows(cfg, rows, edges, rep); stream {
			tasks = streamOrder(tasks)
			cfg.Slots = []worker.Slot{streaming(cfg.Slots[0])}
			cfg.groupJK = true
		} else {
			tasks = reuseOrder(tasks)
		}
	}
	blockEdges := func(i, j int) int64 { return part.Block(i, j).NumEdges() }
	var sums *counts.Blocks
	if perVertex {
		sums = counts.NewBlocks(part.Layout, part.Layout.N, blockEdges, cfg.PerVertex.PerEdge())
	}
	if err := runSubtasks(ctx, src, "", tasks, cfg, rep, sums); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Partition.Scheme, rep.Partition.P, rep.Partition.PFit = cfg.Scheme.String(), p, pFit
	rep.Partition.RowStream = stream
	rep.Partition.Blocks = part.Balance().NonEmpty
	if cfg.Verify {
		// The whole graph through the reference kernel: independent of the
		// partitioning as well as of the kernel.
		if err := verify(ctx, kernels.Whole(fwd), rep.Triangles, rep.Kernel, rep); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if sums != nil {
		c, err := sums.Counts(ctx, ids, blockEdges, func(_ context.Context, i, j int) (*graph.CSR, error) { return part.Block(i, j), nil })
		if err == nil {
			err = finishPerVertex(ctx, c, cfg, rep)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	finish(rep, start)
	return rep, nil
}

// splitOnHost splits fwd into cfg's blocks on the host's cores, choosing P
// first when cfg.P is 0 (pFit is then the smallest P that fits).
func splitOnHost(ctx context.Context, path string, fwd *graph.CSR, cfg *Config, rep *Report) (*partition.Partition, int, error) {
	t := time.Now()
	p, pFit := cfg.P, 0
	var err error
	if p == 0 {
		if cfg.Budget <= 0 {
			return nil, 0, errors.New("pipeline: --partitions 0 needs a memory budget")
		}
		p, err = partition.ChoosePForGraph(fwd, cfg.Scheme, cfg.Budget, cfg.Model, cfg.Workers)
		if err != nil {
			return nil, 0, budgetError(path, cfg, err)
		}
		pFit = p
		var why plan.Reason
		if oneDevice(cfg) && cfg.Scheme == storage.SchemeHash {
			p, why = fastP(DefaultSpeedModel(), fwd.NumRows(), fwd.NumEdges(), pFit, cfg.Budget)
		} else {
			p, why = plan.ChooseP(plan.PRequest{Fit: pFit})
		}
		rep.noteReason(why)
		if rep.Plan != nil {
			rep.Plan.P = p
		}
		cfg.Logger.Info("chose P", "p", p, "smallest that fits", pFit, "budget", cfg.Budget)
	}
	cfg.Progress.Start("partition", "", -1)
	part, err := partition.PartitionInMemory(ctx, fwd, partition.Config{Scheme: cfg.Scheme, P: p, Workers: cfg.Workers})
	cfg.Progress.Done()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkHostBudget(part, cfg); err != nil {
		return nil, 0, err
	}
	rep.Seconds.Partition = since(t)
	return part, pFit, nil
}

// checkHostBudget holds the subtasks of a partition counted on the CPU to
// --device-mem-limit (cfg.DeviceLimit) under partition.HostModel, as a
// GPU's memory holds its own: a P given whose subtasks do not fit is an
// error naming the least that does for that P.
func checkHostBudget(part *partition.Partition, cfg *Config) error {
	if cfg.DeviceLimit == 0 || anyDevice(cfg) {
		return nil
	}
	p, m := part.P(), partition.HostModel()
	stat := func(i, j int) partition.BlockStat {
		b := part.Block(i, j)
		return partition.BlockStat{Rows: b.NumRows(), Edges: b.NumEdges()}
	}
	budget := int64(min(cfg.DeviceLimit, 1<<62))
	if partition.FitsBudget(p, stat, budget, m) {
		return nil
	}
	lo, hi := budget, 2*budget
	for !partition.FitsBudget(p, stat, hi, m) {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; partition.FitsBudget(p, stat, mid, m) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return fmt.Errorf("--device-mem-limit %s is below the least that can count this graph: %d bytes (P=%d)",
		sizeText(budget), hi, p)
}

// budgetError words a choice of P that failed: a budget no P fits names
// the least that does, as --device-mem-limit when that flag set the budget
// (cfg.DeviceLimit), else as the device's memory.
func budgetError(path string, cfg *Config, err error) error {
	var be *partition.BudgetError
	if !errors.As(err, &be) {
		return fmt.Errorf("%s: choosing P: %w", path, err)
	}
	if cfg.DeviceLimit > 0 && int64(cfg.DeviceLimit) == be.Budget {
		return fmt.Errorf("--device-mem-limit %s is below the least that can count this graph: %d bytes (P=%d)",
			sizeText(be.Budget), be.Least, be.P)
	}
	return fmt.Errorf("%s: choosing P: the device's memory, %s a subtask, is below the least that can count this graph: %d bytes (P=%d)",
		path, sizeText(be.Budget), be.Least, be.P)
}

// CountShards counts a partitioned graph from its store, every subtask in
// this process. cfg.Scheme and cfg.P are ignored: the store's apply. With
// cfg.Devices the devices are chosen and started while the first blocks
// are fetched and decoded (Seconds.DeviceWait is that wait).
func CountShards(ctx context.Context, store storage.Store, cfg Config) (*Report, error) {
	if err := cfg.check(true); err != nil {
		return nil, err
	}
	start := time.Now()
	m, err := storage.ReadManifest(ctx, store)
	if err != nil {
		return nil, err
	}
	rep := &Report{
		Shards: store.URL(), Device: cfg.Device,
		Vertices: m.Graph.Vertices, Edges: m.Graph.Edges, Wedges: m.Graph.Wedges,
		MaxDegree: m.Graph.MaxDegree, Order: m.Graph.Order, MaxOutDegree: m.Graph.MaxOutDegree,
	}
	if r := m.Graph.Removed; r != nil {
		rep.Removed = &Removed{SelfLoops: r.SelfLoops, Duplicates: r.Duplicates, IsolatedIDs: r.IsolatedIDs, BadLines: r.BadLines}
	}
	if in := m.Graph.Input; in != nil {
		rep.Input = &Input{Format: in.Format, Compression: in.Compression, Bytes: in.Bytes, RawEdges: in.RawEdges}
	}
	src := worker.StoreSource{Store: store, Manifest: m}
	tasks := partition.Subtasks(m)
	stop, err := startShardDevices(ctx, &cfg, rep, src, tasks)
	if err != nil {
		return nil, err
	}
	defer stop()
	if oneDevice(&cfg) {
		tasks = reuseOrder(tasks)
	}
	sums, ids, err := shardSums(ctx, store, m, cfg.PerVertex)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", store.URL(), err)
	}
	if err := runSubtasks(ctx, src, "", tasks, &cfg, rep, sums); err != nil {
		return nil, fmt.Errorf("%s: %w", store.URL(), err)
	}
	rep.Partition.Scheme, rep.Partition.P, rep.Partition.Blocks = m.Scheme.String(), m.P, len(m.Shards)
	if cfg.Verify {
		if err := verifySubtasks(ctx, src, tasks, &cfg, rep); err != nil {
			return nil, fmt.Errorf("%s: %w", store.URL(), err)
		}
	}
	if sums != nil {
		c, err := sums.Counts(ctx, ids, shardEdges(m), func(ctx context.Context, i, j int) (*graph.CSR, error) {
			b, _, err := src.Block(ctx, i, j)
			return b, err
		})
		if err == nil {
			err = finishPerVertex(ctx, c, &cfg, rep)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", store.URL(), err)
		}
	}
	finish(rep, start)
	return rep, nil
}

func runSubtasks(ctx context.Context, src worker.Source, store string, tasks []partition.Subtask, cfg *Config, rep *Report, sums *counts.Blocks) error {
	rc := *cfg
	if oneDevice(cfg) {
		rc.Prefetch = max(rc.Prefetch, deviceAhead)
	}
	res, err := runLocal(ctx, src, store, tasks, rc, sums)
	if err != nil {
		return err
	}
	rep.Triangles = res.Triangles
	// The count phase ends with the last result (the run's Wall): the
	// devices' release after it counts in the total only.
	rep.Seconds.Count = res.Wall.Seconds()
	rep.Partition = &PartitionInfo{Subtasks: make([]SubtaskReport, len(res.Subtasks))}
	var kernel time.Duration
	for i, s := range res.Subtasks {
		kernel += s.KernelTime
		rep.Partition.Subtasks[i] = SubtaskReport{I: s.I, J: s.J, K: s.K, Triangles: s.Triangles, Edges: s.Edges, Work: s.Work,
			KernelMS: float64(s.KernelTime.Microseconds()) / 1000}
	}
	rep.Kernel = runKernel(res.Subtasks)
	rep.Seconds.Kernel = kernel.Seconds()
	rep.DeviceMemory = res.Device
	rep.Engine = res.Engine
	return nil
}

// runKernel names the kernel of a run: the counter's name ("auto"), as
// results say "auto (hashcol)" per subtask.
func runKernel(rs []SubtaskResult) string {
	for _, r := range rs {
		if r.Kernel != "" {
			name, _, _ := strings.Cut(r.Kernel, " (")
			return name
		}
	}
	return ""
}

// verifySubtasks recounts every subtask with the reference CPU kernel
// through the same blocks and fails naming the first that differs.
func verifySubtasks(ctx context.Context, src worker.Source, tasks []partition.Subtask, cfg *Config, rep *Report) error {
	vc := *cfg
	vc.Slots = []worker.Slot{ReferenceSlot(cfg.Workers)}
	vc.Progress = nil
	res, err := RunLocal(ctx, src, "", tasks, vc)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	for x, s := range res.Subtasks {
		if got := rep.Partition.Subtasks[x].Triangles; got != s.Triangles {
			return fmt.Errorf("verify: subtask (%d,%d,%d): kernel %s counted %d triangles, the reference counts %d",
				s.I, s.J, s.K, rep.Kernel, got, s.Triangles)
		}
	}
	if res.Triangles != rep.Triangles {
		return fmt.Errorf("verify: kernel %s counted %d triangles, the reference counts %d", rep.Kernel, rep.Triangles, res.Triangles)
	}
	rep.Verified = true
	return nil
}

// ReferenceSlot is a CPU slot that counts with the reference kernel on
// workers goroutines (0: GOMAXPROCS), whatever kernel is asked for.
func ReferenceSlot(workers int) worker.Slot {
	return worker.Slot{Device: api.Device{Kind: "cpu", Name: "cpu"}, NewCounter: func(string) (kernels.Counter, error) {
		return kernels.NewCPU("reference", kernels.CPUOptions{Workers: workers})
	}}
}
