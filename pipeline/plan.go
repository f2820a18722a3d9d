package pipeline

import (
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/plan"
)

// capsOf is what dev's counter can do, as plan.Choose takes it: the one
// place that asks a counter which capability interfaces it has. cfg's
// slots are those the counter was made from. MaybeGPU stays what was
// known before the counter was made (the input was read for it).
func capsOf(counter kernels.Counter, dev *pendingCounter, cfg *Config) plan.DeviceCaps {
	d := plan.DeviceCaps{Known: true, Devices: len(cfg.Slots), MaybeGPU: dev.maybeDevice,
		ContextBytes: gpu.ContextBytes, IndexShare: DefaultSpeedModel().IndexShare}
	d.Limit, d.GPU = deviceLimit(counter)
	if dv, ok := counter.(kernels.Device); ok {
		c := dv.Caps()
		d.Prepare, d.PrepareIDs, d.Stage = c.Prepare, c.PrepareIDs, c.Stage
		d.Orient, d.OrientIDs, d.OrientMarked, d.MaxSplit = c.Orient, c.OrientIDs, c.OrientMarked, c.MaxSplit
	}
	_, d.Ranges = counter.(kernels.RangeCounter)
	if !oneDevice(cfg) {
		d.MaxSplit = 0 // the device split is for one GPU counting every subtask
	}
	return d
}

// pendingCaps is what is known of dev's counter before it is made: it
// may be a GPU's, which splits up to gpu.MaxSplitP, and devices still to
// be found (cfg.Devices) count as one.
func pendingCaps(dev *pendingCounter, cfg *Config) plan.DeviceCaps {
	d := plan.DeviceCaps{MaybeGPU: dev.maybeDevice, Devices: len(cfg.Slots)}
	if cfg.Devices != nil {
		d.Devices = 1
	}
	if dev.maybeDevice {
		d.MaxSplit = gpu.MaxSplitP
	}
	return d
}

// planRequest is cfg as plan.Choose takes it; kernel is the counter's.
func planRequest(cfg *Config, kernel string) plan.Request {
	r := plan.Request{Degree: cfg.Order == graph.OrderDegree, Verify: cfg.Verify, RowRangesOff: !wantsRowRanges(cfg.RowRanges),
		DeviceLimit: cfg.DeviceLimit, PerVertex: cfg.PerVertex.Wanted(), Kernel: kernel}
	if cfg.partitioned {
		r.Partitioned, r.P = true, cfg.P
		if cfg.Scheme != 0 {
			r.Scheme = cfg.Scheme.String()
		}
	}
	return r
}

// pairStats are the figures of pairs input pairs read.
func pairStats(pairs uint64) plan.GraphStats {
	return plan.GraphStats{Pairs: pairs, PrepBytes: uint64(gpu.PreprocessMinBytes(pairs, 0))}
}

// inputPairs is the number of pairs in.
func inputPairs(in *input) uint64 {
	if in.p32 != nil {
		return uint64(len(in.p32) / 2)
	}
	return uint64(len(in.edges))
}

// forwardStats are the figures of the forward graph fwd: its device
// bytes (gpu.BlockBytes) and whether a CPU subtask of cfg.DeviceLimit
// holds it (fitsHost).
func forwardStats(fwd *graph.CSR, cfg *Config) plan.GraphStats {
	g := plan.GraphStats{Forward: true, Rows: fwd.NumRows(), Edges: fwd.NumEdges(),
		DeviceBytes: uint64(gpu.BlockBytes(fwd.NumRows(), fwd.NumEdges()))}
	g.HostFits = cfg.DeviceLimit == 0 || fitsHost(fwd, cfg.DeviceLimit)
	return g
}

// choose is plan.Choose for a count of cfg on counter, noted in rep.
func choose(g plan.GraphStats, caps plan.DeviceCaps, cfg *Config, kernel string, rep *Report) plan.Plan {
	p := plan.Choose(g, caps, planRequest(cfg, kernel))
	rep.Plan = &p
	return p
}
