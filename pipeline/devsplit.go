package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

// deviceSplit is a partitioned count's request that the device which
// builds the forward graph also split it into blocks, and what came of it:
// the partition (its blocks in host memory, the same blocks resident on
// the device) and the counter that holds them, for the subtasks' slot.
type deviceSplit struct {
	part    *partition.Partition
	counter kernels.Counter
	// released waits until the input's memory, dead once the device has
	// the graph, has gone back to the operating system (nil: not asked).
	// Given back while the device splits and counts rather than at the
	// process's exit, where it would add to the run.
	released func()
}

// wait returns once what ds started in the background is done.
func (ds *deviceSplit) wait() {
	if ds != nil && ds.released != nil {
		ds.released()
	}
}

// blockGroups is the device split's description of layout l.
func blockGroups(l *partition.Layout) kernels.BlockGroups {
	g := kernels.BlockGroups{P: l.P}
	if l.Scheme == storage.SchemeRange {
		g.Bounds = l.Bounds
		g.Groups = make([]int32, len(l.Bounds)-1)
		for r := range g.Groups {
			g.Groups[r] = int32(storage.RangeGroup(r, l.P))
		}
	}
	return g
}

// splitIDsOnDevice is loadForBlocks's device path when the device splits
// too: the device compacts, cleans and orients in, keeps the forward
// graph, and splits it by cfg's scheme into the blocks of ds.part, which
// it holds resident. The range scheme's bounds come from the forward graph
// on the host (ForwardOut), as does --verify's check, which also requires
// the device's blocks equal to the host's split. fwd is nil when neither
// needed it. done is false, with no error, when the pairs do not fit the
// device (in is then intact). When the blocks do not fit beside the
// forward graph, the forward graph comes back for the host to split
// (ds.part nil).
func splitIDsOnDevice(ctx context.Context, path string, dev kernels.Device, in *input, cfg *Config, rep *Report, wantIDs bool,
	host *kernels.HostBlocks, ds *deviceSplit) (*graph.CSR, []uint64, bool, error) {
	p := in.idPairs()
	t := time.Now()
	cfg.Progress.Start("order", "", -1)
	ids, st, err := dev.KeepIDsOnDevice(ctx, p, wantIDs, host)
	cfg.Progress.Done()
	if dev.DoesNotFit(err) {
		cfg.Logger.Info("the edge list does not fit the device for preprocessing from its own ids; compacting on the host", "err", err)
		// The host compacts the ids in place next and may hand them to the
		// device again in one upload: the staged pieces' pins go first (a
		// copy may not span several pinned ranges).
		releaseStage(in.staged, cfg.Logger)
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, true, fmt.Errorf("%s: orient with %s: %w", path, dev.Name(), err)
	}
	edges := in.edges
	// The device has the graph: the input is unpinned while the host goes
	// on (the caller's release then finds nothing left to do).
	if in.staged != nil {
		go releaseStage(in.staged, cfg.Logger)
	}
	*in = input{}
	p = kernels.IDPairs{}
	if !cfg.Verify {
		ds.released = freeWhileCounting()
	}
	notePrep(rep, st)
	rep.Seconds.Order = since(t)

	var fwd *graph.CSR
	if cfg.Verify || cfg.Scheme == storage.SchemeRange {
		if fwd, err = dev.ForwardOut(ctx, false); err != nil {
			return nil, nil, true, fmt.Errorf("%s: %w", path, err)
		}
	}
	if cfg.Verify {
		if err := checkDeviceForward(ctx, path, edges, fwd, ids, &deviceCount{stats: st, ids: true}, cfg, rep, wantIDs); err != nil {
			return nil, nil, true, err
		}
	}
	t = time.Now()
	cfg.Progress.Start("partition", "", -1)
	defer cfg.Progress.Done()
	var l *partition.Layout
	if fwd != nil {
		l, err = partition.NewLayout(fwd, cfg.Scheme, cfg.P, cfg.Workers)
	} else {
		l, err = partition.NewHashLayout(int64(st.Vertices), cfg.P)
	}
	if err != nil {
		return nil, nil, true, fmt.Errorf("%s: %w", path, err)
	}
	blocks, err := dev.SplitOnDevice(ctx, blockGroups(l))
	if dev.DoesNotFit(err) {
		cfg.Logger.Info("the blocks do not fit the device beside the forward graph; splitting on the host", "err", err)
		if fwd == nil {
			fwd, err = dev.ForwardOut(ctx, true)
			if err != nil {
				return nil, nil, true, fmt.Errorf("%s: %w", path, err)
			}
		}
		return fwd, ids, true, ctx.Err()
	}
	if err != nil {
		return nil, nil, true, fmt.Errorf("%s: split with %s: %w", path, dev.Name(), err)
	}
	part := &partition.Partition{Layout: l, Blocks: blocks}
	if cfg.Verify {
		if err := checkDeviceBlocks(ctx, fwd, part, cfg.Workers); err != nil {
			return nil, nil, true, fmt.Errorf("%s: %w", path, err)
		}
	}
	ds.part, ds.counter = part, dev
	rep.Seconds.Partition = since(t)
	return fwd, ids, true, ctx.Err()
}

// checkDeviceBlocks fails unless part's blocks equal the host's split of
// fwd by the same layout, array for array.
func checkDeviceBlocks(ctx context.Context, fwd *graph.CSR, part *partition.Partition, workers int) error {
	host, err := partition.SplitLayout(ctx, fwd, part.Layout, workers)
	if err != nil {
		return err
	}
	p := part.P()
	for b, h := range host.Blocks {
		d := part.Blocks[b]
		if d.NCols != h.NCols || !slices.Equal(d.Offsets, h.Offsets) || !slices.Equal(d.Cols, h.Cols) {
			return fmt.Errorf("verify: the device's block (%d,%d) (%d rows, %d edges) differs from the host's split (%d rows, %d edges)",
				b/p, b%p, d.NumRows(), d.NumEdges(), h.NumRows(), h.NumEdges())
		}
	}
	return nil
}

// notePrep records the device's cleaning and orientation figures.
func notePrep(rep *Report, st kernels.PrepStats) {
	rep.Vertices, rep.Edges = int64(st.Vertices), int64(st.Edges)
	r := rep.removed()
	r.SelfLoops, r.Duplicates, r.IsolatedIDs = st.SelfLoops, st.Duplicates, st.IsolatedIDs
	noteUnusedIDs(rep)
	rep.Order = graph.OrderDegree.String()
	maxOut := int64(st.MaxForward)
	rep.Wedges, rep.MaxDegree, rep.MaxOutDegree = st.Wedges, int64(st.MaxDegree), &maxOut
}

// handOver makes slot's first counter of its default kernel c, whose
// device holds the blocks already; later counters are made as slot
// makes them. The returned function closes c unless the slot handed it
// out (whoever took it closes it).
func handOver(slot worker.Slot, c kernels.Counter, log *slog.Logger) (worker.Slot, func()) {
	var (
		mu    sync.Mutex
		given bool
	)
	newCounter := slot.NewCounter
	slot.NewCounter = func(kernel string) (kernels.Counter, error) {
		mu.Lock()
		defer mu.Unlock()
		if !given && (kernel == "" || kernel == c.Name()) {
			given = true
			return c, nil
		}
		return newCounter(kernel)
	}
	return slot, func() {
		mu.Lock()
		defer mu.Unlock()
		if !given {
			given = true
			closeCounter(c, log)
		}
	}
}
