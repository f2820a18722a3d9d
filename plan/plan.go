// Package plan decides how one `trigrid count` of a graph file runs: how
// the file is read, where its edges are cleaned and oriented, how the
// forward graph is laid out for the count (whole, row ranges, 2D blocks,
// partitioned) and what is done when a step finds the device too small.
//
// Choose is pure: it reads the figures it is given (the graph's sizes,
// measured by the caller's memory models; the device's capabilities,
// reported once by its counter; the request's flags) and performs no I/O.
// The pipeline calls it as facts become known (before the read, once the
// device is started, once the forward graph is built); a later call, with
// more facts, never contradicts an earlier one on a choice already made.
// The reasons behind each rule, with their measurements, are in
// docs/decisions/*.md, named in each Reason.
package plan

import "fmt"

// Where is a place a step runs.
type Where string

// The places a step runs.
const (
	Device Where = "device"
	Host   Where = "host"
)

// Layout is how the forward graph is counted.
type Layout string

// The layouts.
const (
	// Whole: one subtask over the whole forward graph.
	Whole Layout = "whole"
	// RowRanges: the whole forward graph with its columns in host memory
	// and a range of its rows on the device at a time.
	RowRanges Layout = "row-ranges"
	// Blocks: as `count --partitions 0`, P chosen for the device's memory.
	Blocks Layout = "blocks"
	// Partitioned: P x P blocks as --partitions asked.
	Partitioned Layout = "partitioned"
)

// Read is the form the file is read in.
type Read string

// The read forms.
const (
	// ReadIDs: 32-bit pairs where every id allows, else edges.
	ReadIDs Read = "ids"
	// ReadEdges: 64-bit edges.
	ReadEdges Read = "edges"
)

// GraphStats are the graph's figures known when Choose is called; zero
// where not known yet. Byte figures come from the memory model of the
// counter that would hold them.
type GraphStats struct {
	// Pairs is the number of input pairs (read, or estimated: Estimated).
	Pairs uint64 `json:"pairs,omitempty"`
	// PrepBytes is the least device memory cleaning the pairs whole
	// needs (0: not known).
	PrepBytes uint64 `json:"prep_bytes,omitempty"`
	// Forward: the forward graph is built (or estimated) and Rows,
	// Edges, DeviceBytes and HostFits describe it.
	Forward bool  `json:"forward,omitempty"`
	Rows    int64 `json:"rows,omitempty"`
	Edges   int64 `json:"edges,omitempty"`
	// DeviceBytes is the forward graph's memory on the device (its
	// offsets and columns, without index or scratch).
	DeviceBytes uint64 `json:"device_bytes,omitempty"`
	// HostFits: a CPU subtask budget of Request.DeviceLimit holds the
	// whole forward graph under the CPU kernels' memory model.
	HostFits bool `json:"host_fits,omitempty"`
	// Staged: the input was staged on the device while it was read.
	Staged bool `json:"staged,omitempty"`
	// Estimated: the figures are estimates from the file's size, not
	// counts of what was read.
	Estimated bool `json:"estimated,omitempty"`
	// Marked: the host numbered the ids early (Plan.Early) and kept
	// them marked in the pairs; MarksFit: the device's pieces can take
	// the marked pairs at Request.DeviceLimit and map them.
	Marked   bool `json:"marked,omitempty"`
	MarksFit bool `json:"marks_fit,omitempty"`
	// Spanned: the host scanned the pairs (early, Plan.Early, or after
	// the device refused them whole): IDSpan is their largest id + 1 and
	// the ids of their loops are listed; SpanFits: the device's pieces
	// can take IDSpan vertex words at the device's limit.
	Spanned  bool   `json:"spanned,omitempty"`
	IDSpan   uint64 `json:"id_span,omitempty"`
	SpanFits bool   `json:"span_fits,omitempty"`
}

// DeviceCaps is what the counter of the first slot can do, plain data
// reported once when it is made. Before it is made only MaybeGPU is
// known (Known is false).
type DeviceCaps struct {
	// Known: the counter is made and the fields below are its own.
	Known bool `json:"known"`
	// MaybeGPU: the counter is, or may turn out to be, a GPU's.
	MaybeGPU bool `json:"maybe_gpu"`
	// GPU: the counter is a GPU's; Limit is the memory it may hold.
	GPU   bool   `json:"gpu"`
	Limit uint64 `json:"limit,omitempty"`
	// Devices is the number of counting slots (GPUs, or 1 for the CPU).
	Devices int `json:"devices"`
	// Prepare: cleans, orients and counts compacted pairs resident.
	Prepare bool `json:"prepare,omitempty"`
	// PrepareIDs: the same from the input's own ids.
	PrepareIDs bool `json:"prepare_ids,omitempty"`
	// Stage: takes the input's ids while they are read.
	Stage bool `json:"stage,omitempty"`
	// Orient: cleans and orients compacted pairs, handing the forward
	// graph back (in pieces when they do not fit whole).
	Orient bool `json:"orient,omitempty"`
	// OrientIDs: the same from the input's own ids.
	OrientIDs bool `json:"orient_ids,omitempty"`
	// OrientMarked: maps ids the host numbered as it orients them.
	OrientMarked bool `json:"orient_marked,omitempty"`
	// Ranges: counts a forward graph it cannot hold in row ranges.
	Ranges bool `json:"ranges,omitempty"`
	// MaxSplit is the largest P it splits a forward graph into on the
	// device (0: it does not).
	MaxSplit int `json:"max_split,omitempty"`
	// ContextBytes is the memory its context takes before any block;
	// IndexShare the size of a block's index as a share of the block.
	ContextBytes uint64  `json:"context_bytes,omitempty"`
	IndexShare   float64 `json:"index_share,omitempty"`
}

// Request is what the command asked for.
type Request struct {
	// Degree: the vertex order is by degree (the device paths need it).
	Degree bool
	// Verify: --verify (the host rebuilds and the reference recounts).
	Verify bool
	// Partitioned: --partitions other than 1; P (0: chosen for Budget)
	// and Scheme as given.
	Partitioned bool
	P           int
	Scheme      string
	// RowRangesOff: --row-ranges off.
	RowRangesOff bool
	// DeviceLimit is --device-mem-limit (0: none); on the CPU it bounds a
	// subtask as a GPU's memory does.
	DeviceLimit uint64
	// PerVertex: per-vertex counts, which build the forward graph as a
	// partitioned count does (one block) and count it whole.
	PerVertex bool
	// Kernel is --kernel.
	Kernel string
}

// blocks reports whether the forward graph is built for blocks (a
// partitioned or per-vertex count).
func (r Request) blocks() bool { return r.Partitioned || r.PerVertex }

// Plan is how a count runs.
type Plan struct {
	Read Read `json:"read"`
	// Stage: the pairs are handed to the device while they are read, when
	// the device is ready first.
	Stage bool `json:"stage"`
	// Early: the host numbers the ids while the device starts (the pairs
	// cannot be cleaned on the device whole); the device maps them as it
	// orients them where it can.
	Early bool `json:"early"`
	// Clean is where the edges are cleaned (duplicates, loops, ids);
	// FromIDs: the device takes the input's own ids, else compacted ones.
	Clean   Where `json:"clean"`
	FromIDs bool  `json:"from_ids"`
	// Orient is where the forward graph of compacted pairs is built;
	// MapIDs: the device maps the ids numbered early as it orients them.
	Orient Where `json:"orient"`
	MapIDs bool  `json:"map_ids,omitempty"`
	// KeepMarks: the ids numbered early stay marked in the pairs for the
	// device to map; without it the host rewrites them while the device
	// starts.
	KeepMarks bool `json:"keep_marks,omitempty"`
	// SpanIDs: the device takes the input's ids, scanned early, as its
	// vertices and numbers them as it cleans and orients them in pieces;
	// the host numbers none.
	SpanIDs bool `json:"span_ids,omitempty"`
	// Resident: the device keeps the graph it cleaned and counts it
	// whole in place (Layout is Whole).
	Resident bool   `json:"resident"`
	Layout   Layout `json:"layout"`
	// HostModel: Blocks are sized by the CPU kernels' memory model, not
	// the device's.
	HostModel bool `json:"host_model,omitempty"`
	// P and Scheme split a Partitioned count; DeviceSplit: the device
	// splits the forward graph into its blocks and keeps them.
	P           int    `json:"p,omitempty"`
	Scheme      string `json:"scheme,omitempty"`
	DeviceSplit bool   `json:"device_split,omitempty"`
	Kernel      string `json:"kernel"`
	// Fallbacks are, in order, what happens where a step finds the
	// device too small at run time.
	Fallbacks []string `json:"fallbacks,omitempty"`
	Reasons   []Reason `json:"reasons"`
}

// Reason is why one choice of a Plan was made.
type Reason struct {
	Choice string `json:"choice"`
	Why    string `json:"why"`
	// Record is the decision record (docs/decisions/) with the
	// measurements behind the rule, if any.
	Record string `json:"record,omitempty"`
}

// Decision records cited by the reasons.
const (
	recFromIDs    = "2026-11-24-device-path-from-input-ids.md"
	recStaged     = "2026-11-24-input-staged-while-read.md"
	recMapped     = "2026-11-24-ids-mapped-on-the-device.md"
	recPieces     = "2026-11-24-preprocessing-in-pieces.md"
	recSpan       = "2026-12-01-out-of-core-in-place.md"
	recRefused    = "2026-12-02-pinned-pieces-and-refused-ids.md"
	recRanges     = "2026-11-24-row-ranges-over-blocks.md"
	recPinned     = "2026-11-24-blocks-pinned-in-place.md"
	recSplit      = "2026-11-24-partitioned-split-on-the-device.md"
	recHostFwd    = "2026-11-24-host-forward-build.md"
	recGPUKernel  = "2026-11-21-gpu-auto-kernel-rules.md"
	recCPUKernel  = "2026-11-21-cpu-kernel-choice.md"
	recRangeFolds = "2026-11-21-range-scheme-folded.md"
)

// Choose decides how a count of a graph with stats g runs on a counter
// with caps d for request r.
func Choose(g GraphStats, d DeviceCaps, r Request) Plan {
	p := Plan{Kernel: r.Kernel, Clean: Host, Orient: Host, Layout: Whole}
	why := func(choice, reason, record string) {
		p.Reasons = append(p.Reasons, Reason{Choice: choice, Why: reason, Record: record})
	}
	chooseRead(&p, d, r, why)
	chooseEarly(&p, g, d, r, why)
	if r.blocks() {
		chooseForBlocks(&p, d, r, why)
	} else {
		chooseWhole(&p, g, d, r, why)
	}
	chooseKernel(&p, d, r, why)
	return p
}

type noter func(choice, reason, record string)

func chooseRead(p *Plan, d DeviceCaps, r Request, why noter) {
	// A partitioned count with --verify on a device keeps the input as
	// edges for an independent host build.
	keepEdges := r.blocks() && r.Verify && d.MaybeGPU
	switch {
	case !r.Degree:
		p.Read = ReadEdges
		why("read=edges", "the order is not by degree: the host cleans and orients", "")
		return
	case keepEdges:
		p.Read = ReadEdges
		why("read=edges", "--verify on a device keeps the input as read for an independent host build", "")
		return
	}
	p.Read = ReadIDs
	why("read=ids", "degree order: 32-bit pairs where every id allows, half the memory of edges, nothing decoded for a binary file", recFromIDs)
	if d.MaybeGPU && (!d.Known || d.Stage) {
		p.Stage = true
		why("stage", "a device that takes staged ids gets the pairs of a large 32-bit binary file pinned in place and copied while the read goes on, when it is ready before the read ends", recStaged)
	}
}

func chooseEarly(p *Plan, g GraphStats, d DeviceCaps, r Request, why noter) {
	if !d.MaybeGPU || r.DeviceLimit == 0 || r.Verify || !r.Degree || g.Staged || g.PrepBytes == 0 || g.PrepBytes <= r.DeviceLimit {
		return
	}
	p.Early = true
	why("early", fmt.Sprintf("cleaning the pairs whole needs %d device bytes, more than --device-mem-limit %d: the host numbers the ids while the device starts, the device maps them as it orients in pieces (unless the input was staged, or the pieces could not map them: the host rewrites them then)", g.PrepBytes, r.DeviceLimit), recMapped)
	if spanTaken(g, d, r) {
		p.SpanIDs = true
		why("span-ids", fmt.Sprintf("the ids span %d vertex words, at most one a pair (%d pairs), and the device's pieces take them: the device numbers them as it cleans and orients them, the host only scans them", g.IDSpan, g.Pairs), recSpan)
		return
	}
	switch {
	case g.Marked && g.MarksFit:
		p.KeepMarks = true
		why("keep-marks", "the device's pieces can take the marked pairs: the device maps the ids as it orients them", recMapped)
	case g.Marked:
		why("rewrite-ids", "the device's pieces could not take the marked pairs at --device-mem-limit: the host rewrites the ids while the device starts", recMapped)
	}
}

// spanTaken: the pairs were scanned, their ids span at most one vertex
// word a pair, and the device's pieces take them (plan.Plan.SpanIDs).
func spanTaken(g GraphStats, d DeviceCaps, r Request) bool {
	return g.Spanned && g.SpanFits && g.IDSpan <= g.Pairs && (!d.Known || d.OrientMarked) && !r.blocks()
}

// chooseWhole is a count with --partitions 1.
func chooseWhole(p *Plan, g GraphStats, d DeviceCaps, r Request, why noter) {
	const (
		piecesFail   = "the pieces' work area does not fit the device: the host cleans and orients"
		residentFail = "the compacted pairs do not fit the device resident: the host cleans and orients"
	)
	orientsCompacted := d.Ranges && d.Orient && !r.Verify
	switch {
	case !r.Degree || !d.Known:
	case p.Early && p.SpanIDs:
		p.Clean, p.FromIDs, p.Orient = Device, true, Device
		why("clean=device", "the ids were scanned while the device started; the device numbers, cleans and orients them in pieces, the host keeps the keys", recSpan)
		p.Fallbacks = append(p.Fallbacks, "the pieces decline the ids as they are: the host numbers them and the device maps them as it orients them (in pieces)", piecesFail)
	case p.Early:
		earlyOrient(p, d)
		why("clean=host", "the ids were numbered while the device started; the device orients them in pieces", recPieces)
		if p.Orient == Device {
			p.Fallbacks = append(p.Fallbacks, piecesFail)
		}
	case spanTaken(g, d, r) && !r.Verify:
		p.Clean, p.FromIDs, p.Orient, p.SpanIDs = Device, true, Device, true
		why("clean=device", "the device refused the ids whole and the host scanned them: the device numbers, cleans and orients them in pieces", recRefused)
		p.Fallbacks = append(p.Fallbacks, "the pieces decline the ids as they are: the host compacts them and the device orients them (in pieces)", piecesFail)
	case d.PrepareIDs:
		p.Clean, p.FromIDs, p.Orient, p.Resident = Device, true, Device, true
		why("clean=device", "the device compacts, cleans, orients and counts the input's own ids in place: no round trip through host memory", recFromIDs)
		if orientsCompacted {
			p.Fallbacks = append(p.Fallbacks, "the device cannot take the ids whole: the host scans them and, when the pieces take them, the device numbers, cleans and orients them in pieces; else the host compacts them and the device orients them (in pieces); the forward graph is counted as laid out once built", piecesFail)
		} else {
			p.Fallbacks = append(p.Fallbacks, "the device cannot take the ids whole: the host compacts them and the device cleans and counts them resident", residentFail)
		}
	case orientsCompacted:
		p.Orient = Device
		why("clean=host", "the host compacts the ids; the device orients them (in pieces when they do not fit whole)", recPieces)
		p.Fallbacks = append(p.Fallbacks, piecesFail)
	case d.Prepare:
		p.Clean, p.Orient, p.Resident = Device, Device, true
		why("clean=device", "the host compacts the ids; the device cleans, orients and counts them resident", recFromIDs)
		p.Fallbacks = append(p.Fallbacks, residentFail)
	}
	if p.Resident && r.Verify {
		why("verify", "the host cleans and orients the input as read; the device's figures must equal the host's and its count the reference's", "")
	}
	if p.Clean == Host && p.Orient == Host {
		why("clean=host", hostWhy(d, r), recHostFwd)
	}
	chooseLayout(p, g, d, r, why)
}

// earlyOrient is where ids numbered early are oriented.
func earlyOrient(p *Plan, d DeviceCaps) {
	p.MapIDs = d.OrientMarked
	if d.Orient {
		p.Orient = Device
	}
}

func hostWhy(d DeviceCaps, r Request) string {
	switch {
	case !r.Degree:
		return "the order is not by degree: the host cleans and orients"
	case !d.Known:
		return "the counter is not made yet"
	}
	return "the counter does not clean or orient on the device: the host builds the forward graph"
}

// chooseLayout lays out a whole count's forward graph (once built: the
// layout of a resident count is Whole).
func chooseLayout(p *Plan, g GraphStats, d DeviceCaps, r Request, why noter) {
	switch {
	case p.Resident:
		why("layout=whole", "the device counts the graph it holds", "")
	case !g.Forward:
		why("layout=whole", "the forward graph's size is known once it is built: whole if it fits, else row ranges or blocks", "")
	case d.GPU && d.Limit > 0 && !fitsWhole(g, d):
		if d.Ranges && !r.RowRangesOff {
			p.Layout = RowRanges
			why("layout=row-ranges", fmt.Sprintf("the forward graph (%d device bytes) with its index and scratch exceeds the device's %d: its rows go through the device in ranges, its columns in host memory; ranges cost no split and beat blocks", g.DeviceBytes, d.Limit), recRanges)
			p.Fallbacks = append(p.Fallbacks, "a row does not fit the device: counted in blocks as --partitions 0 does")
			return
		}
		p.Layout = Blocks
		why("layout=blocks", fmt.Sprintf("the forward graph (%d device bytes) exceeds the device's %d and row ranges are off or not offered: the smallest P that fits, blocks streamed pinned in place", g.DeviceBytes, d.Limit), recPinned)
	case !d.GPU && r.DeviceLimit > 0 && !g.HostFits:
		p.Layout, p.HostModel = Blocks, true
		why("layout=blocks", "on the CPU the whole count exceeds --device-mem-limit under the CPU kernels' memory model: blocks as --partitions 0 does", "")
	default:
		why("layout=whole", "the forward graph fits the counter whole", "")
	}
}

// fitsWhole reports whether the device holds the whole forward graph with
// its index and the kernel's scratch (a sixteenth of the room).
func fitsWhole(g GraphStats, d DeviceCaps) bool {
	room := float64(d.Limit) - float64(d.ContextBytes)
	b := float64(g.DeviceBytes)
	return (1+d.IndexShare)*b+room/16 <= room
}

// chooseForBlocks is a count with --partitions other than 1, or
// per-vertex counts.
func chooseForBlocks(p *Plan, d DeviceCaps, r Request, why noter) {
	p.Layout, p.P, p.Scheme = Partitioned, r.P, r.Scheme
	if !r.Partitioned {
		p.P, p.Scheme = 1, ""
	}
	splits := r.Degree && d.MaybeGPU && p.P >= 1 && p.P <= d.MaxSplit && d.Devices == 1
	switch {
	case !r.Partitioned:
		p.Layout = Whole
		why("layout=whole", "per-vertex counts: the forward graph as one block", "")
	case r.P == 0:
		why("layout=partitioned", "--partitions 0: the smallest P whose largest subtask fits the budget", recPinned)
	default:
		why("layout=partitioned", fmt.Sprintf("--partitions %d", r.P), "")
	}
	if r.Scheme == "range" {
		why("scheme=range", "the range scheme folds its subtasks", recRangeFolds)
	}
	switch {
	case !d.Known && splits:
		// Before the device is made: the memory the blocks come back into
		// is made while it starts.
		p.DeviceSplit = true
		why("device-split", "the device may split the forward graph into its blocks: their host memory is made while it starts", recSplit)
		fallthrough
	case !r.Degree || !d.Known:
		why("clean=host", hostWhy(d, r), recHostFwd)
		return
	case p.Early:
		earlyOrient(p, d)
		why("clean=host", "the ids were numbered while the device started; the device orients them in pieces", recPieces)
	case d.OrientIDs:
		p.Clean, p.FromIDs, p.Orient = Device, true, Device
		why("clean=device", "the device compacts, cleans and orients the input's own ids and hands back the forward graph", recFromIDs)
		p.Fallbacks = append(p.Fallbacks, "the device cannot take the ids whole: the host compacts them and the device orients them (in pieces)")
		if splits {
			p.DeviceSplit = true
			why("device-split", fmt.Sprintf("one GPU, P %d within the %d it splits: the device splits the forward graph and keeps the blocks resident for the subtasks", p.P, d.MaxSplit), recSplit)
		}
	case d.Orient:
		p.Orient = Device
		why("clean=host", "the host compacts the ids; the device orients them (in pieces when they do not fit whole)", recPieces)
	default:
		why("clean=host", hostWhy(d, r), recHostFwd)
	}
	if p.Orient == Device {
		p.Fallbacks = append(p.Fallbacks, "the pieces' work area does not fit the device: the host cleans and orients")
	}
}

func chooseKernel(p *Plan, d DeviceCaps, r Request, why noter) {
	if r.Kernel != "auto" && r.Kernel != "" {
		why("kernel="+r.Kernel, "as --kernel asked", "")
		return
	}
	if d.GPU || (!d.Known && d.MaybeGPU) {
		why("kernel=auto", "the GPU picks per subtask: wetric from 2^17 edges or 8 a row, polak below", recGPUKernel)
		return
	}
	why("kernel=auto", "the CPU picks per subtask among hashcol, hash and merge", recCPUKernel)
}
