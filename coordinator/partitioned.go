package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// PartitionedConfig says how a count splits the graph into 2D blocks.
type PartitionedConfig struct {
	Scheme storage.Scheme
	// P is the number of vertex groups; 0 picks the smallest P whose
	// largest subtask fits Budget.
	P int
	// Budget is the memory one subtask may use (bytes) when P is 0.
	Budget int64
	// Workers is the number of subtasks counted at once (see
	// LocalConfig.Workers); 0 is the runner's default.
	Workers int
}

// CountFilePartitioned counts one graph file through P x P in-memory
// blocks and P^3 subtasks, exactly as workers count shards, without
// writing any.
func CountFilePartitioned(ctx context.Context, path string, cfg CountConfig, pc PartitionedConfig) (*Report, error) {
	start := time.Now()
	rep := &Report{File: path, Device: cfg.Device}
	fwd, err := LoadForward(ctx, path, &cfg, rep)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	p := pc.P
	if p == 0 {
		if pc.Budget <= 0 {
			return nil, fmt.Errorf("coordinator: --partitions 0 needs a memory budget")
		}
		p, err = partition.ChoosePForGraph(fwd, pc.Scheme, pc.Budget, partition.MemModel{}, cfg.Workers)
		if err != nil {
			return nil, fmt.Errorf("%s: choosing P: %w", path, err)
		}
		cfg.Logger.Info("chose P", "p", p, "budget", pc.Budget)
	}
	cfg.Progress.Start("partition", "", -1)
	part, err := partition.PartitionInMemory(ctx, fwd, partition.Config{Scheme: pc.Scheme, P: p, Workers: cfg.Workers})
	cfg.Progress.Done()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Seconds.Partition = since(t)
	tasks := part.Subtasks()
	if err := runSubtasks(ctx, PartitionSource{Part: part}, tasks, &cfg, pc, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Partition.Scheme, rep.Partition.P = pc.Scheme.String(), p
	rep.Partition.Blocks = part.Balance().NonEmpty
	if cfg.Verify {
		if err := verify(ctx, kernels.Whole(fwd), rep.Triangles, rep.Kernel, rep); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	finish(rep, start)
	return rep, nil
}

// CountShards counts a partitioned graph from its store, every subtask on
// this machine.
func CountShards(ctx context.Context, store storage.Store, cfg CountConfig, pc PartitionedConfig) (*Report, error) {
	if err := cfg.validate(); err != nil {
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
	tasks := partition.Subtasks(m)
	if err := runSubtasks(ctx, StoreSource{Store: store, Manifest: m}, tasks, &cfg, pc, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", store.URL(), err)
	}
	rep.Partition.Scheme, rep.Partition.P, rep.Partition.Blocks = m.Scheme.String(), m.P, len(m.Shards)
	finish(rep, start)
	return rep, nil
}

func runSubtasks(ctx context.Context, src BlockSource, tasks []partition.Subtask, cfg *CountConfig, pc PartitionedConfig, rep *Report) error {
	t := time.Now()
	cfg.Progress.Start("count", "subtasks", int64(len(tasks)))
	var name string
	res, err := RunLocal(ctx, src, tasks, LocalConfig{
		Workers: pc.Workers,
		NewCounter: func() (c kernels.Counter, err error) {
			c, err = cfg.NewCounter()
			if err == nil {
				name = c.Name()
			}
			return c, err
		},
		Progress: func(done, total int) { cfg.Progress.Update(int64(done), int64(total)) },
		Logger:   cfg.Logger,
	})
	cfg.Progress.Done()
	if err != nil {
		return err
	}
	rep.Kernel = name
	rep.Triangles = res.Triangles
	rep.Seconds.Count = since(t)
	rep.Partition = &PartitionInfo{Subtasks: make([]SubtaskReport, len(res.Subtasks))}
	var kernel time.Duration
	for i, s := range res.Subtasks {
		kernel += s.KernelTime
		rep.Partition.Subtasks[i] = SubtaskReport{I: s.I, J: s.J, K: s.K, Triangles: s.Triangles, Edges: s.Edges, Work: s.Work,
			KernelMS: float64(s.KernelTime.Microseconds()) / 1000}
	}
	rep.Seconds.Kernel = kernel.Seconds()
	return nil
}
