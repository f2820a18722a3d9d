package plan

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// gpuCaps is a started GPU counter of the kernels/gpu library: every
// device path, a limit of 1 GiB.
var gpuCaps = DeviceCaps{Known: true, MaybeGPU: true, GPU: true, Limit: 1 << 30, Devices: 1,
	Prepare: true, PrepareIDs: true, Stage: true, Orient: true, OrientIDs: true, OrientMarked: true,
	Ranges: true, MaxSplit: 4, ContextBytes: 2 << 20, IndexShare: 0.8}

var cpuCaps = DeviceCaps{Known: true, Devices: 1}

func with(d DeviceCaps, f func(*DeviceCaps)) DeviceCaps { f(&d); return d }

// fwd is a built forward graph of b device bytes.
func fwd(b uint64, hostFits bool) GraphStats {
	return GraphStats{Pairs: 1000, Forward: true, Rows: 100, Edges: 1000, DeviceBytes: b, HostFits: hostFits}
}

// chooseWant is what TestChoose checks of a plan.
type chooseWant struct {
	read                     Read
	stage, early, spanIDs    bool
	clean, orient            Where
	fromIDs, resident, split bool
	layout                   Layout
	hostModel                bool
	record                   string // a record some reason cites ("" none needed)
}

// chooseCase is one row of TestChoose: a case the pipeline handles.
type chooseCase struct {
	name string
	g    GraphStats
	d    DeviceCaps
	r    Request
	want chooseWant
}

// chooseCases has one row per case the pipeline handles, with the
// measured reason (a decision record) in its comment.
func chooseCases() []chooseCase {
	deg := Request{Degree: true, Kernel: "auto"}
	req := func(f func(*Request)) Request { r := deg; f(&r); return r }
	type want = chooseWant
	return []chooseCase{
		// The host builds the forward graph in any order other than degree.
		{"cpu degeneracy", GraphStats{}, cpuCaps, req(func(r *Request) { r.Degree = false }),
			want{read: ReadEdges, clean: Host, orient: Host, layout: Whole}},
		// 32-bit pairs halve the input's memory
		// (2026-11-24-device-path-from-input-ids.md); the CPU builds from them
		// (2026-11-24-host-forward-build.md).
		{"cpu degree", fwd(1<<20, true), cpuCaps, deg,
			want{read: ReadIDs, clean: Host, orient: Host, layout: Whole, record: recHostFwd}},
		// --device-mem-limit on the CPU bounds a subtask as a GPU's memory does.
		{"cpu over device-mem-limit", fwd(1<<20, false), cpuCaps, req(func(r *Request) { r.DeviceLimit = 1 << 20 }),
			want{read: ReadIDs, clean: Host, orient: Host, layout: Blocks, hostModel: true}},
		// Before the device starts: the pairs are staged while read
		// (2026-11-24-input-staged-while-read.md).
		{"gpu not started", GraphStats{}, DeviceCaps{MaybeGPU: true}, deg,
			want{read: ReadIDs, stage: true, clean: Host, orient: Host, layout: Whole, record: recStaged}},
		// The device cleans the input's own ids and counts them resident
		// (2026-11-24-device-path-from-input-ids.md).
		{"gpu from ids", GraphStats{Pairs: 1000}, gpuCaps, deg,
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, fromIDs: true, resident: true, layout: Whole, record: recFromIDs}},
		// --verify: the same, the host rebuilding beside it.
		{"gpu from ids verify", GraphStats{Pairs: 1000}, gpuCaps, req(func(r *Request) { r.Verify = true }),
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, fromIDs: true, resident: true, layout: Whole}},
		// Pairs beyond --device-mem-limit: ids numbered while the device
		// starts and mapped on it (2026-11-24-ids-mapped-on-the-device.md),
		// oriented in pieces (2026-11-24-preprocessing-in-pieces.md).
		{"gpu early", GraphStats{Pairs: 1 << 30, PrepBytes: 1 << 35}, gpuCaps, req(func(r *Request) { r.DeviceLimit = 1 << 30 }),
			want{read: ReadIDs, stage: true, early: true, clean: Host, orient: Device, layout: Whole, record: recMapped}},
		// rmat 28 at CSR/4: 2^32 pairs of ids below 2^28, scanned early;
		// the device numbers them in its pieces, the host's numbering of
		// 21.6 s goes (2026-12-01-out-of-core-in-place.md).
		{"gpu early span ids", GraphStats{Pairs: 1 << 32, PrepBytes: 1 << 37, Spanned: true, IDSpan: 1 << 28, SpanFits: true},
			with(gpuCaps, func(d *DeviceCaps) { d.Limit = 4478646269 }), req(func(r *Request) { r.DeviceLimit = 4478646269 }),
			want{read: ReadIDs, stage: true, early: true, spanIDs: true, clean: Device, fromIDs: true, orient: Device, layout: Whole, record: recSpan}},
		// Ids sparser than the pairs, or vertex words the pieces cannot
		// take: the host numbers them (2026-11-24-ids-mapped-on-the-device.md).
		{"gpu early sparse ids", GraphStats{Pairs: 1 << 20, PrepBytes: 1 << 35, Spanned: true, IDSpan: 1 << 30, SpanFits: true}, gpuCaps, req(func(r *Request) { r.DeviceLimit = 1 << 30 }),
			want{read: ReadIDs, stage: true, early: true, clean: Host, orient: Device, layout: Whole, record: recMapped}},
		{"gpu early span too wide", GraphStats{Pairs: 1 << 30, PrepBytes: 1 << 35, Spanned: true, IDSpan: 1 << 28}, gpuCaps, req(func(r *Request) { r.DeviceLimit = 1 << 30 }),
			want{read: ReadIDs, stage: true, early: true, clean: Host, orient: Device, layout: Whole, record: recMapped}},
		// --verify keeps the input as read: no early numbering.
		{"gpu early verify", GraphStats{Pairs: 1 << 30, PrepBytes: 1 << 35}, gpuCaps, req(func(r *Request) { r.DeviceLimit = 1 << 30; r.Verify = true }),
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, fromIDs: true, resident: true, layout: Whole}},
		// A range counter without the ids' path: host compaction, device
		// orientation (2026-11-24-preprocessing-in-pieces.md).
		{"gpu ranges without ids", GraphStats{Pairs: 1000}, with(gpuCaps, func(d *DeviceCaps) { d.PrepareIDs = false }), deg,
			want{read: ReadIDs, stage: true, clean: Host, orient: Device, layout: Whole, record: recPieces}},
		// Refused whole, then scanned: the device's pieces number the ids
		// (2026-12-02-pinned-pieces-and-refused-ids.md); --verify keeps
		// the compacted pairs resident, ids too wide for the pieces are
		// compacted by the host.
		{"gpu refused then spanned", GraphStats{Pairs: 1 << 33, Spanned: true, IDSpan: 1 << 29, SpanFits: true},
			with(gpuCaps, func(d *DeviceCaps) { d.PrepareIDs = false }), deg,
			want{read: ReadIDs, stage: true, spanIDs: true, clean: Device, fromIDs: true, orient: Device, layout: Whole, record: recRefused}},
		{"gpu refused spanned verify", GraphStats{Pairs: 1 << 33, Spanned: true, IDSpan: 1 << 29, SpanFits: true},
			with(gpuCaps, func(d *DeviceCaps) { d.PrepareIDs = false }), req(func(r *Request) { r.Verify = true }),
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, resident: true, layout: Whole}},
		{"gpu refused span too wide", GraphStats{Pairs: 1 << 33, Spanned: true, IDSpan: 1 << 29},
			with(gpuCaps, func(d *DeviceCaps) { d.PrepareIDs = false }), deg,
			want{read: ReadIDs, stage: true, clean: Host, orient: Device, layout: Whole, record: recPieces}},
		// A preprocessor of compacted pairs only: cleaned and counted resident.
		{"gpu compacted resident", GraphStats{Pairs: 1000}, with(gpuCaps, func(d *DeviceCaps) { d.PrepareIDs, d.Ranges = false, false }), deg,
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, resident: true, layout: Whole}},
		// A forward graph the device holds whole.
		{"gpu forward fits", fwd(1<<20, true), with(gpuCaps, func(d *DeviceCaps) { d.PrepareIDs = false }), deg,
			want{read: ReadIDs, stage: true, clean: Host, orient: Device, layout: Whole}},
		// One the device does not: row ranges beat blocks
		// (2026-11-24-row-ranges-over-blocks.md).
		{"gpu forward too large", fwd(1<<30, true), with(gpuCaps, func(d *DeviceCaps) { d.PrepareIDs = false }), deg,
			want{read: ReadIDs, stage: true, clean: Host, orient: Device, layout: RowRanges, record: recRanges}},
		// --row-ranges off: blocks, pinned in place
		// (2026-11-24-blocks-pinned-in-place.md).
		{"gpu forward too large ranges off", fwd(1<<30, true), with(gpuCaps, func(d *DeviceCaps) { d.PrepareIDs = false }), req(func(r *Request) { r.RowRangesOff = true }),
			want{read: ReadIDs, stage: true, clean: Host, orient: Device, layout: Blocks, record: recPinned}},
		// --partitions 2 on one GPU: split on the device
		// (2026-11-24-partitioned-split-on-the-device.md).
		{"partitioned device split", GraphStats{Pairs: 1000}, gpuCaps, req(func(r *Request) { r.Partitioned, r.P, r.Scheme = true, 2, "hash" }),
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, fromIDs: true, split: true, layout: Partitioned, record: recSplit}},
		// P beyond what the device splits: the host splits.
		{"partitioned P 8", GraphStats{Pairs: 1000}, gpuCaps, req(func(r *Request) { r.Partitioned, r.P, r.Scheme = true, 8, "hash" }),
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, fromIDs: true, layout: Partitioned}},
		// Two GPUs count the subtasks: the host splits.
		{"partitioned two gpus", GraphStats{Pairs: 1000}, with(gpuCaps, func(d *DeviceCaps) { d.Devices = 2 }), req(func(r *Request) { r.Partitioned, r.P, r.Scheme = true, 2, "hash" }),
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, fromIDs: true, layout: Partitioned}},
		// P chosen for the budget (2026-11-24-blocks-pinned-in-place.md).
		{"partitioned P 0", GraphStats{Pairs: 1000}, gpuCaps, req(func(r *Request) { r.Partitioned, r.P, r.Scheme = true, 0, "hash" }),
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, fromIDs: true, layout: Partitioned, record: recPinned}},
		// --verify on a device keeps the input as edges.
		{"partitioned verify", GraphStats{Pairs: 1000}, gpuCaps, req(func(r *Request) { r.Partitioned, r.P, r.Scheme, r.Verify = true, 8, "range", true }),
			want{read: ReadEdges, clean: Device, orient: Device, fromIDs: true, layout: Partitioned, record: recRangeFolds}},
		// A device that orients compacted pairs only.
		{"partitioned orient compacted", GraphStats{Pairs: 1000}, with(gpuCaps, func(d *DeviceCaps) { d.OrientIDs = false }), req(func(r *Request) { r.Partitioned, r.P, r.Scheme = true, 2, "hash" }),
			want{read: ReadIDs, stage: true, clean: Host, orient: Device, layout: Partitioned}},
		// An input staged while read is on the device already: not numbered
		// early (2026-11-24-input-staged-while-read.md).
		{"gpu staged not early", GraphStats{Pairs: 1 << 30, PrepBytes: 1 << 35, Staged: true}, gpuCaps, req(func(r *Request) { r.DeviceLimit = 1 << 30 }),
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, fromIDs: true, resident: true, layout: Whole}},
		// Before the device of a partitioned count starts, the blocks' host
		// memory is made (2026-11-24-partitioned-split-on-the-device.md).
		{"partitioned gpu not started", GraphStats{}, DeviceCaps{MaybeGPU: true, Devices: 1, MaxSplit: 4}, req(func(r *Request) { r.Partitioned, r.P, r.Scheme = true, 2, "hash" }),
			want{read: ReadIDs, stage: true, clean: Host, orient: Host, split: true, layout: Partitioned, record: recSplit}},
		// Per-vertex counts build as a partitioned count of one block and
		// count it whole, split on the device.
		{"per-vertex gpu", GraphStats{Pairs: 1000}, gpuCaps, req(func(r *Request) { r.PerVertex = true }),
			want{read: ReadIDs, stage: true, clean: Device, orient: Device, fromIDs: true, split: true, layout: Whole}},
		// Per-vertex counts on the CPU.
		{"per-vertex cpu", GraphStats{Pairs: 1000}, cpuCaps, req(func(r *Request) { r.PerVertex = true }),
			want{read: ReadIDs, clean: Host, orient: Host, layout: Whole}},
		// Per-vertex counts with --verify on a device keep the input as edges.
		{"per-vertex gpu verify", GraphStats{Pairs: 1000}, gpuCaps, req(func(r *Request) { r.PerVertex, r.Verify = true, true }),
			want{read: ReadEdges, clean: Device, orient: Device, fromIDs: true, split: true, layout: Whole}},
		// Partitioned on the CPU.
		{"partitioned cpu", GraphStats{Pairs: 1000}, cpuCaps, req(func(r *Request) { r.Partitioned, r.P, r.Scheme = true, 2, "hash" }),
			want{read: ReadIDs, clean: Host, orient: Host, layout: Partitioned}},
	}
}

func TestChoose(t *testing.T) {
	for _, tc := range chooseCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := Choose(tc.g, tc.d, tc.r)
			got := chooseWant{read: p.Read, stage: p.Stage, early: p.Early, spanIDs: p.SpanIDs, clean: p.Clean, orient: p.Orient,
				fromIDs: p.FromIDs, resident: p.Resident, split: p.DeviceSplit, layout: p.Layout, hostModel: p.HostModel, record: tc.want.record}
			if got != tc.want {
				t.Errorf("Choose:\n got %+v\nwant %+v", got, tc.want)
			}
			if tc.want.record != "" && !slices.ContainsFunc(p.Reasons, func(r Reason) bool { return r.Record == tc.want.record }) {
				t.Errorf("no reason cites %s: %+v", tc.want.record, p.Reasons)
			}
			if len(p.Reasons) == 0 || !strings.HasPrefix(p.Reasons[0].Choice, "read=") {
				t.Errorf("reasons %+v: want the read's first", p.Reasons)
			}
			if _, err := json.Marshal(p); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A later call, with more facts, keeps the choices already made.
func TestChooseLaterAgrees(t *testing.T) {
	r := Request{Degree: true, Kernel: "auto"}
	before := Choose(GraphStats{}, DeviceCaps{MaybeGPU: true}, r)
	after := Choose(fwd(1<<30, true), gpuCaps, r)
	if before.Read != after.Read || before.Stage != after.Stage {
		t.Errorf("before the device %+v, after %+v", before, after)
	}
}
