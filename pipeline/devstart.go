package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/plan"
	"github.com/trigrid/trigrid/worker"
)

// pendingCounter is the counter of a whole count, made in a goroutine of
// its own while the file is read: starting a GPU (loading its driver,
// creating its context) and reading need not wait for each other.
type pendingCounter struct {
	// ctx is the read's context: cancelled when the device cannot be had.
	ctx    context.Context
	cancel context.CancelFunc
	// maybeDevice: the counter may be a GPU, so the read keeps the input
	// in the form the device takes.
	maybeDevice bool
	done        chan struct{}
	counter     kernels.Counter
	slots       []worker.Slot
	device      string
	err         error
}

// startCounter starts making the counter of cfg's first slot, after
// cfg.Devices when that is set.
func startCounter(ctx context.Context, cfg *Config) *pendingCounter {
	rctx, cancel := context.WithCancel(ctx)
	pc := &pendingCounter{ctx: rctx, cancel: cancel, done: make(chan struct{}),
		slots: cfg.Slots, device: cfg.Device}
	devices := cfg.Devices
	pc.maybeDevice = devices != nil || cfg.Slots[0].Device.Kind == "gpu"
	log := cfg.Logger
	go func() {
		defer close(pc.done)
		t := time.Now()
		if devices != nil {
			slots, device, err := devices()
			log.Debug("device selected", "device", device, "seconds", since(t), "err", err)
			if err == nil && len(slots) == 0 {
				err = errors.New("pipeline: config: no counting slots")
			}
			if err != nil {
				pc.err = err
				cancel()
				return
			}
			pc.slots, pc.device = slots, device
		}
		t = time.Now()
		pc.counter, pc.err = pc.slots[0].NewCounter("")
		log.Debug("counter created", "seconds", since(t), "err", pc.err)
		if pc.err != nil {
			cancel()
		}
	}()
	return pc
}

// wait returns the counter once it is made and sets cfg's Slots and
// Device to those it was made from.
func (pc *pendingCounter) wait(cfg *Config) (kernels.Counter, error) {
	<-pc.done
	pc.cancel()
	if pc.err != nil {
		return nil, pc.err
	}
	cfg.Slots, cfg.Device = pc.slots, pc.device
	if cfg.ModelFromDevice {
		cfg.Model = partition.HostModel()
		if pc.slots[0].Device.Kind == "gpu" {
			cfg.Model = GPUMemModel()
		}
	}
	return pc.counter, nil
}

// input is a file's edges as read: edges, or 32-bit pairs (u0, v0, ...)
// read straight from a binary file or narrowed in place for a device.
type input struct {
	edges []graph.Edge
	p32   []uint32
	// staged, when not nil, holds p32 on the device already
	// (readIDsStaged); it is released by whoever read the input.
	staged *kernels.IDStage
}

// idPairs gives the input as a device takes its own ids: the 32-bit
// pairs (and their staged copy) as they are, else the edges' ids as
// 64-bit pairs in the edges' memory.
func (in *input) idPairs() kernels.IDPairs {
	if in.p32 != nil {
		return kernels.IDPairs{P32: in.p32, Staged: in.staged}
	}
	return kernels.IDPairs{P64: graph.WideIDs(in.edges)}
}

// toEdges gives the input as edges, widening 32-bit pairs into new
// memory.
func (in *input) toEdges(workers int) []graph.Edge {
	if in.p32 != nil {
		return graph.WidenPairs(in.p32, workers)
	}
	return in.edges
}

// readIDs reads path for a device that takes the input's own ids: as
// 32-bit pairs when every id allows it and the file is a binary file or an
// uncompressed edge list (edgeio.ReadFileIDs), else as edges. watch, when
// not nil, sees a 32-bit binary file's pairs as they are read.
func readIDs(ctx context.Context, path string, cfg *Config, rep *Report, watch edgeio.PairsWatcher) (input, error) {
	t := time.Now()
	cfg.Progress.Start("read", "bytes", -1)
	ro := cfg.Read
	ro.Progress = cfg.Progress.Update
	ro.Pairs32 = watch
	p32, edges, rs, err := edgeio.ReadFileIDs(ctx, path, ro)
	cfg.Progress.Done()
	if err != nil {
		return input{}, err
	}
	noteRead(rep, rs, t)
	return input{p32: p32, edges: edges}, nil
}

// earlyIDs is the input's ids as the host readied them while the device
// started: numbered but not rewritten (marked, for a device that maps them
// as it orients them), or compacted.
type earlyIDs struct {
	marked    *graph.MarkedPairs
	compacted *graph.Compacted
	span      *spanIDs
}

// spanIDs is 32-bit pairs of the input's own ids, scanned but not
// numbered: the device numbers them (plan.Plan.SpanIDs).
type spanIDs struct {
	pairs []uint32
	scan  graph.PairScan
}

// compactEarly readies in's ids on the host as soon as they are read,
// while dev's device starts, for a plan that numbers them early (the
// device could not clean them whole anyway: plan.Plan.Early). 32-bit
// pairs are numbered (graph.MarkPairs) and left for the device to map as
// it orients them in pieces (orientEarly), unless the plan for the marks
// says otherwise (plan.Plan.KeepMarks: the pieces would not take them at
// cfg.DeviceLimit, gpu.PiecesMayTake); other input is compacted. g is the
// input's figures; in is consumed.
func compactEarly(path string, in *input, g *plan.GraphStats, dev *pendingCounter, cfg *Config, rep *Report) (*earlyIDs, error) {
	pairs := inputPairs(in)
	cfg.Logger.Debug("the pairs cannot fit the device whole: numbering their ids while it starts", "pairs", pairs, "device_limit", cfg.DeviceLimit)
	p32 := in.p32
	if p32 == nil {
		c, _, err := compactInput(path, in, false, cfg, rep)
		if err != nil {
			return nil, err
		}
		return &earlyIDs{compacted: c}, nil
	}
	// Once started, a device that orients in pieces readies the host
	// memory it would pin and make first while the ids are numbered.
	var prep sync.WaitGroup
	defer prep.Wait()
	prep.Go(func() {
		<-dev.done
		if op, ok := dev.counter.(kernels.Device); ok && dev.err == nil && op.Caps().Orient {
			op.PrepareOrient(p32)
		}
	})
	t := time.Now()
	cfg.Progress.Start("clean", "", -1)
	span, err := scanSpan(path, p32, g, pendingCaps(dev, cfg), cfg.DeviceLimit, cfg)
	if span != nil || err != nil {
		*in = input{}
		cfg.Progress.Done()
		rep.Seconds.Clean = since(t)
		return &earlyIDs{span: span}, err
	}
	m, err := graph.MarkPairs(p32, graph.CleanOptions{Workers: cfg.Workers, Progress: cfg.Progress.Update})
	*in = input{}
	cfg.Progress.Done()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	gm := *g
	gm.Marked = true
	gm.MarksFit = m.Bits != nil && gpu.PiecesMayTake(cfg.DeviceLimit, pairs, uint64(len(m.OrigID)), uint64(len(m.Bits)))
	if !plan.Choose(gm, pendingCaps(dev, cfg), planRequest(cfg, "")).KeepMarks {
		// The device could not map them: rewritten now, still while it
		// starts.
		c, err := m.Compact()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rep.Seconds.Clean = since(t)
		return &earlyIDs{compacted: c}, nil
	}
	rep.Seconds.Clean = since(t)
	return &earlyIDs{marked: m}, nil
}

// scanSpan scans p32 (graph.ScanPairs) and returns them as pairs the
// device numbers when the plan for caps, with the scan's figures and the
// device's pieces at limit bytes, says so (plan.Plan.SpanIDs; g then
// holds those figures), else nil.
func scanSpan(path string, p32 []uint32, g *plan.GraphStats, caps plan.DeviceCaps, limit uint64, cfg *Config) (*spanIDs, error) {
	sc, err := graph.ScanPairs(p32, cfg.Workers)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	gs := *g
	gs.Spanned, gs.IDSpan = sc.LoopsListed, sc.MaxID+1
	gs.SpanFits = sc.LoopsListed && gpu.PiecesMayTake(limit, uint64(len(p32)/2), gs.IDSpan, 0)
	if !plan.Choose(gs, caps, planRequest(cfg, "")).SpanIDs {
		return nil, nil
	}
	*g = gs
	return &spanIDs{pairs: p32, scan: sc}, nil
}

// orientDeclined orients in, which the device refused to clean whole
// (countIDsOnDevice), as the plan says once the host has scanned its
// 32-bit pairs: the device numbers, cleans and orients them in pieces
// (plan.Plan.SpanIDs, orientSpan). A nil graph and no error: not taken
// (in is as it was); the caller then plans without the scan.
func orientDeclined(ctx context.Context, path string, in *input, g plan.GraphStats, caps plan.DeviceCaps, counter kernels.Counter, cfg *Config, rep *Report) (*graph.CSR, error) {
	if in.p32 == nil {
		return nil, nil // only 32-bit pairs are scanned
	}
	t := time.Now()
	s, err := scanSpan(path, in.p32, &g, caps, caps.Limit, cfg)
	if s == nil || err != nil {
		return nil, err
	}
	choose(g, caps, cfg, counter.Name(), rep)
	rep.Seconds.Clean += since(t)
	fwd, _, done, err := orientSpan(ctx, path, s, counter, cfg, rep, false)
	if err != nil || !done {
		return nil, err
	}
	*in = input{}
	return fwd, nil
}

// orientSpan builds the forward graph of s on counter's device, which
// numbers the ids (kernels.Device.OrientSpanOnDevice). The ids seen only
// in loops come from the scan's list, and the device's loops must be the
// scan's. done is false, with no error, when the device declines the pairs
// (they are as given then).
func orientSpan(ctx context.Context, path string, s *spanIDs, counter kernels.Counter, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, bool, error) {
	d, ok := counter.(kernels.Device)
	if !ok || !d.Caps().OrientMarked {
		return nil, nil, false, nil
	}
	t := time.Now()
	cfg.Progress.Start("order", "", -1)
	fwd, rank, st, err := d.OrientSpanOnDevice(ctx, s.pairs, s.scan.MaxID+1)
	cfg.Progress.Done()
	switch {
	case d.DoesNotFit(err):
		cfg.Logger.Info("the edge list does not fit the device for numbering its ids; numbering them on the host", "err", err)
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, true, fmt.Errorf("%s: orient with %s: %w", path, counter.Name(), err)
	case st.SelfLoops != s.scan.SelfLoops || uint64(len(rank)) != s.scan.MaxID+1:
		return nil, nil, true, fmt.Errorf("%s: orient with %s: %d self-loops and %d ranks, the scan found %d loops and ids up to %d",
			path, counter.Name(), st.SelfLoops, len(rank), s.scan.SelfLoops, s.scan.MaxID)
	}
	for _, u := range s.scan.LoopIDs {
		if rank[u] == ^uint32(0) {
			st.IsolatedIDs++
		}
	}
	notePrep(rep, st)
	var ids []uint64
	if wantIDs {
		ids = make([]uint64, st.Vertices)
		for id, r := range rank {
			if r != ^uint32(0) {
				ids[r] = uint64(id)
			}
		}
	}
	rep.Seconds.Order = since(t)
	return fwd, ids, true, ctx.Err()
}

// orientEarly builds the forward graph of the ids compactEarly readied:
// counter's device maps the marked ones as it orients them when pl says
// so (plan.Plan.MapIDs), else, or where it declines, the host rewrites
// them first (orientCompacted then).
func orientEarly(ctx context.Context, path string, e *earlyIDs, pl plan.Plan, counter kernels.Counter, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	if s := e.span; s != nil {
		if pl.SpanIDs {
			fwd, ids, done, err := orientSpan(ctx, path, s, counter, cfg, rep, wantIDs)
			if done || err != nil {
				return fwd, ids, err
			}
		}
		t := time.Now()
		m, err := graph.MarkPairs(s.pairs, graph.CleanOptions{Workers: cfg.Workers})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		rep.Seconds.Clean += since(t)
		e.marked = m
	}
	if m := e.marked; m != nil {
		if pl.MapIDs && m.Bits != nil {
			mo := counter.(kernels.Device)
			t := time.Now()
			cfg.Progress.Start("order", "", -1)
			fwd, rank, st, err := mo.OrientMarkedOnDevice(ctx, m)
			cfg.Progress.Done()
			switch {
			case err == nil:
				ids := noteDeviceForward(rep, m.Stats, st, rank, m.OrigID, wantIDs)
				rep.Seconds.Order = since(t)
				return fwd, ids, ctx.Err()
			case !mo.DoesNotFit(err):
				return nil, nil, fmt.Errorf("%s: orient with %s: %w", path, counter.Name(), err)
			}
			cfg.Logger.Info("the edge list does not fit the device for preprocessing; compacting it on the host", "err", err)
		}
		t := time.Now()
		c, err := m.Compact()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		rep.Seconds.Clean += since(t)
		e.compacted = c
	}
	return orientCompacted(ctx, path, e.compacted, nil, pl, counter, cfg, rep, wantIDs)
}

// countIDsOnDevice compacts, cleans, orients and counts the input on the
// device from the input's own ids. Without --verify, edges are narrowed to
// 32-bit pairs in their own memory when every id allows it (in then holds
// the pairs). When the graph does not fit it returns a nil count and no
// error, with in still holding the whole input.
func countIDsOnDevice(ctx context.Context, ip kernels.Device, in *input, cfg *Config, rep *Report) (*deviceCount, error) {
	t := time.Now()
	cfg.Progress.Start("clean", "", -1)
	var p kernels.IDPairs
	if in.p32 != nil {
		p.P32, p.Staged = in.p32, in.staged
	} else {
		edges := in.edges
		if cfg.Verify {
			edges = append([]graph.Edge(nil), edges...) // the host cleans the input as read
		}
		if p32, ok := graph.NarrowInPlace(edges, cfg.Workers); ok {
			p.P32 = p32
			if !cfg.Verify {
				in.edges, in.p32 = nil, p32
			}
		} else {
			p.P64 = graph.WideIDs(edges)
		}
	}
	cfg.Progress.Done()
	rep.Seconds.Clean = since(t)
	t = time.Now()
	st, err := ip.PrepareResidentIDs(ctx, p)
	if ip.DoesNotFit(err) {
		cfg.Logger.Info("the edge list does not fit the device for preprocessing from its own ids; compacting on the host", "err", err)
		// The host compacts the ids in place next and may hand them to the
		// device again in one upload: the staged pieces' pins go first (a
		// copy may not span several pinned ranges).
		releaseStage(in.staged, cfg.Logger)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	notePrep(rep, st)
	// The input is unpinned before the count: unpinned beside it, it
	// finished only after the count, holding its memory until then.
	tu := time.Now()
	releaseStage(in.staged, cfg.Logger)
	cfg.Logger.Debug("prepared on the device", "seconds", since(t), "unpin_seconds", since(tu))
	rep.Seconds.Order = since(t)
	// The graph is on the device: unless --verify needs the input, its
	// memory goes back to the operating system while the device counts,
	// rather than at the process's exit, where freeing it would add to the
	// run.
	var released func()
	if !cfg.Verify {
		in.edges, in.p32, in.staged = nil, nil, nil
		released = freeWhileCounting()
	}
	if err := countResident(ctx, ip, released, rep); err != nil {
		return nil, err
	}
	return &deviceCount{stats: st, ids: true}, nil
}
