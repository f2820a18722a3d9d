package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/plan"
)

// loadForBlocks is Load for a count that splits the forward graph into
// blocks (a partitioned or per-vertex count), as plan.Choose says
// (rep.Plan): the device compacts, cleans and orients the input's own ids
// and hands back the forward graph with each forward id's input id
// (orientIDsOnDevice), or splits it into its blocks too
// (splitIDsOnDevice); or the host compacts the ids (in the input's own
// memory, or while the device starts: compactEarly) and the device
// orients them (orientCompacted); or the host builds the forward graph.
// Where the device declines, the plan is chosen again without that
// capability. The counter is closed before it returns, so the device
// memory is free for the subtasks. With cfg.Devices the device is found
// and started while the file is read (cfg's Slots and Device are set from
// it). With cfg.Verify on a device the host also builds the forward graph
// from the input and the two must be equal, array for array.
//
// With split, a plan whose device splits the forward graph into its
// blocks (plan.Plan.DeviceSplit) leaves in split the partition and the
// counter, left open, that holds its blocks resident, and the forward
// graph returned is nil unless --verify or the range scheme needed it on
// the host.
func loadForBlocks(ctx context.Context, path string, cfg *Config, rep *Report, wantIDs bool, split *deviceSplit) (*graph.CSR, []uint64, error) {
	dev := startCounter(ctx, cfg)
	in, g, early, rerr := readPlanned(ctx, path, dev, cfg, rep)
	defer releaseStage(in.staged, cfg.Logger)
	var host *kernels.HostBlocks
	if split != nil && rerr == nil && in.p32 != nil && plan.Choose(g, pendingCaps(dev, cfg), planRequest(cfg, "")).DeviceSplit {
		// The memory the blocks come back into is made while the device
		// starts and builds the forward graph.
		host = kernels.MakeHostBlocks(kernels.IDPairs{P32: in.p32}, cfg.P)
	}
	t := time.Now()
	counter, err := dev.wait(cfg)
	rep.Seconds.DeviceWait = since(t)
	if err != nil {
		return nil, nil, err
	}
	keep := false
	defer func() {
		if !keep {
			closeCounter(counter, cfg.Logger)
			host.Discard()
		}
	}()
	caps := capsOf(counter, dev, cfg)
	pl := choose(g, caps, cfg, counter.Name(), rep)
	if host != nil && !pl.DeviceSplit {
		host.Discard() // several GPUs, or no device split: no use for it
	}
	if rerr != nil {
		return nil, nil, rerr
	}
	if early != nil {
		return orientEarly(ctx, path, early, pl, counter, cfg, rep, wantIDs)
	}
	if pl.Read == plan.ReadEdges && !pl.FromIDs || pl.Orient == plan.Host && in.p32 == nil {
		// Edges the host builds from as they are.
		edges := in.toEdges(cfg.Workers)
		in = input{}
		return hostForward(ctx, path, hostInput{edges: edges}, cfg, rep, wantIDs)
	}
	if pl.FromIDs {
		var (
			fwd  *graph.CSR
			ids  []uint64
			done bool
		)
		if pl.DeviceSplit && split != nil {
			fwd, ids, done, err = splitIDsOnDevice(ctx, path, counter.(kernels.Device), &in, cfg, rep, wantIDs, host, split)
			if err == nil && split.counter != nil {
				keep = true
			} else {
				split.part, split.counter = nil, nil
			}
		} else {
			fwd, ids, done, err = orientIDsOnDevice(ctx, path, counter.(kernels.Device), &in, cfg, rep, wantIDs)
		}
		if done || err != nil {
			return fwd, ids, err
		}
		caps.OrientIDs = false
		pl = choose(g, caps, cfg, counter.Name(), rep)
	}
	host.Scanned() // no longer read: the pairs may change
	keepEdges := pl.Read == plan.ReadEdges && cfg.Verify
	return forwardOfInput(ctx, path, &in, pl, counter, keepEdges, cfg, rep, wantIDs)
}

// forwardOfInput builds the forward graph of in, which the device could
// not take whole from its own ids: the host compacts the ids (in their own
// memory unless keepEdges, compactInput), then orientCompacted orients
// them as pl says. in is consumed. With cfg.Verify the host also builds
// the forward graph from the edges kept and the two must be equal.
func forwardOfInput(ctx context.Context, path string, in *input, pl plan.Plan, counter kernels.Counter, keepEdges bool, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	c, edges, err := compactInput(path, in, keepEdges, cfg, rep)
	if err != nil {
		return nil, nil, err
	}
	return orientCompacted(ctx, path, c, edges, pl, counter, cfg, rep, wantIDs)
}

// compactInput compacts in's ids on the host, in their own memory unless
// keepEdges (then edges returns the input's edges, intact). in is
// consumed; the time is rep.Seconds.Clean.
func compactInput(path string, in *input, keepEdges bool, cfg *Config, rep *Report) (c *graph.Compacted, edges []graph.Edge, err error) {
	t := time.Now()
	cfg.Progress.Start("clean", "", -1)
	opts := graph.CleanOptions{Workers: cfg.Workers, Progress: cfg.Progress.Update}
	switch {
	case in.p32 != nil:
		c, err = graph.CompactPairsInPlace(in.p32, opts)
	case keepEdges:
		edges = in.edges
		c, err = graph.Compact(edges, opts)
	default:
		c, err = graph.CompactInPlace(in.edges, opts)
	}
	*in = input{}
	cfg.Progress.Done()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Seconds.Clean = since(t)
	return c, edges, nil
}

// orientCompacted builds the forward graph of the compacted c where pl
// orients: on counter's device (in pieces when it does not fit whole),
// else, or when it does not fit even so, on the host
// (graph.ForwardCompacted). With cfg.Verify the host also builds the
// forward graph from edges (the input as read) and the two must be equal.
func orientCompacted(ctx context.Context, path string, c *graph.Compacted, edges []graph.Edge, pl plan.Plan, counter kernels.Counter, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	if pl.Orient != plan.Device {
		return orientPairsOnHost(ctx, path, c, cfg, rep, wantIDs)
	}
	orienter := counter.(kernels.Device)
	t := time.Now()
	cfg.Progress.Start("order", "", -1)
	fwd, rank, st, err := orienter.OrientOnDevice(ctx, c.Pairs, uint64(len(c.OrigID)))
	cfg.Progress.Done()
	if orienter.DoesNotFit(err) {
		cfg.Logger.Info("the edge list does not fit the device for preprocessing; cleaning and orienting on the host", "err", err)
		if edges != nil {
			return hostForward(ctx, path, hostInput{edges: edges}, cfg, rep, wantIDs)
		}
		return hostForward(ctx, path, hostInput{c: c}, cfg, rep, wantIDs)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: orient with %s: %w", path, counter.Name(), err)
	}
	ids := noteDeviceForward(rep, c.Stats, st, rank, c.OrigID, wantIDs)
	c = nil
	rep.Seconds.Order = since(t)
	if cfg.Verify {
		if err := checkDeviceForward(ctx, path, edges, fwd, ids, &deviceCount{stats: st}, cfg, rep, wantIDs); err != nil {
			return nil, nil, err
		}
	}
	return fwd, ids, ctx.Err()
}

// noteDeviceForward notes in rep the forward graph a device built from
// ids the host numbered (cs) and returns, with wantIDs, each forward id's
// input id (origID through rank).
func noteDeviceForward(rep *Report, cs graph.CleanStats, st kernels.PrepStats, rank []uint32, origID []uint64, wantIDs bool) []uint64 {
	// The host saw the input's ids: its vertices, loops and ids seen only
	// in loops stand.
	st.Vertices, st.SelfLoops, st.IsolatedIDs = uint64(cs.Vertices), cs.SelfLoops, cs.IsolatedIDs
	notePrep(rep, st)
	if !wantIDs {
		return nil
	}
	ids := make([]uint64, len(rank))
	for v, r := range rank {
		ids[r] = origID[v]
	}
	return ids
}

// checkDeviceForward builds the forward graph of edges on the host and
// fails unless the device's (fwd, ids, d's stats) are the same graph: equal
// statistics, offsets, columns and input ids.
func checkDeviceForward(ctx context.Context, path string, edges []graph.Edge, fwd *graph.CSR, ids []uint64, d *deviceCount, cfg *Config, rep *Report, wantIDs bool) error {
	host := *rep
	host.Removed = nil
	hfwd, hids, err := hostForward(ctx, path, hostInput{edges: edges}, cfg, &host, wantIDs)
	if err != nil {
		return err
	}
	if err := checkDevicePrep(d, &host); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case hfwd.NCols != fwd.NCols || !slices.Equal(hfwd.Offsets, fwd.Offsets):
		return fmt.Errorf("%s: verify: the device's forward graph has other rows than the host's (%d and %d vertices)", path, fwd.NumRows(), hfwd.NumRows())
	case !slices.Equal(hfwd.Cols, fwd.Cols):
		return fmt.Errorf("%s: verify: the device's forward graph has other columns than the host's", path)
	case !slices.Equal(hids, ids):
		return fmt.Errorf("%s: verify: the device's ranks map forward ids to other input ids than the host's", path)
	}
	return nil
}

// orientIDsOnDevice is loadForBlocks's device path from the input's own
// ids: the device compacts, cleans and orients in (read-only) and hands
// back the forward graph with each forward id's input id. done is false,
// with no error, when the pairs do not fit the device; the caller then
// compacts on the host, in still intact.
func orientIDsOnDevice(ctx context.Context, path string, io kernels.Device, in *input, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, bool, error) {
	p := in.idPairs()
	t := time.Now()
	cfg.Progress.Start("order", "", -1)
	fwd, ids, st, err := io.OrientIDsOnDevice(ctx, p)
	cfg.Progress.Done()
	if io.DoesNotFit(err) {
		cfg.Logger.Info("the edge list does not fit the device for preprocessing from its own ids; compacting on the host", "err", err)
		// The host compacts the ids in place next and may hand them to the
		// device again in one upload: the staged pieces' pins go first (a
		// copy may not span several pinned ranges).
		releaseStage(in.staged, cfg.Logger)
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, true, fmt.Errorf("%s: orient with %s: %w", path, io.Name(), err)
	}
	edges := in.edges
	// The device has the graph: the input is unpinned while the host goes
	// on (the caller's release then finds nothing left to do).
	if in.staged != nil {
		go releaseStage(in.staged, cfg.Logger)
	}
	*in = input{}
	notePrep(rep, st)
	if !wantIDs {
		ids = nil
	}
	rep.Seconds.Order = since(t)
	if cfg.Verify {
		if err := checkDeviceForward(ctx, path, edges, fwd, ids, &deviceCount{stats: st, ids: true}, cfg, rep, wantIDs); err != nil {
			return nil, nil, true, err
		}
	}
	return fwd, ids, true, ctx.Err()
}
