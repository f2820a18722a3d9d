package pipeline

import (
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/plan"
)

// Choosing P for speed on one GPU. The smallest P whose subtasks fit the
// device is not always the fastest: its blocks may leave no room beside
// the three of a subtask for the blocks' indexes (the kernels run slower),
// while a larger P copies more (each subtask uploads about two blocks, and
// there are P^3 subtasks of |E|/P^2 edges) and pays the fixed cost of more
// uploads and subtasks. fastP models the count phase for each candidate
// and plan.ChooseP keeps the fastest.

// SpeedModel holds the rates fastP models a one-GPU count phase with.
type SpeedModel struct {
	// CopyRate is the bytes per second of uploads.
	CopyRate float64
	// UploadSeconds is the fixed cost of one upload (the block's check,
	// its indexes, synchronizations).
	UploadSeconds float64
	// SubtaskSeconds is the fixed cost of one subtask (scheduling, the
	// kernel's launches and preparation).
	SubtaskSeconds float64
	// EdgeSeconds is kernel seconds per forward edge of the graph with
	// the blocks' indexes resident (the kernel work of all subtasks
	// together, less their fixed costs).
	EdgeSeconds float64
	// NoIndexFactor multiplies the kernel time when the indexes do not
	// fit beside a subtask's blocks.
	NoIndexFactor float64
	// IndexShare is the indexes' size as a share of their block's.
	IndexShare float64
}

// DefaultSpeedModel holds rates fitted to runs on one NVIDIA H200 (rmat
// graphs under device-memory caps, blocks uploaded from pinned host memory;
// docs/decisions/2026-11-24-blocks-pinned-in-place.md).
func DefaultSpeedModel() SpeedModel {
	return SpeedModel{CopyRate: 50e9, UploadSeconds: 0.15e-3, SubtaskSeconds: 0.4e-3, EdgeSeconds: 0.5e-9,
		NoIndexFactor: 2, IndexShare: 0.8}
}

// seconds is the modelled count phase of a graph of n vertices and e
// forward edges cut into p x p hash blocks (taken as equal: e/p^2 edges
// over n/p rows) on a device of budget bytes.
func (m SpeedModel) seconds(n, e int64, p int, budget int64) float64 {
	pp := int64(p)
	rows, edges := (n+pp-1)/pp, e/(pp*pp)
	block := gpu.BlockBytes(rows, edges)
	room := budget - gpu.ContextBytes
	ids := func(i, j int) int { return i*p + j }
	var seq [][3]int
	for _, t := range reuseOrder(hashTasks(p)) {
		seq = append(seq, [3]int{ids(t.I, t.J), ids(t.I, t.K), ids(t.J, t.K)})
	}
	plan := gpu.PlanUploads(seq, func(int) int64 { return rows }, func(int) int64 { return edges }, room, maxDeviceSlots, deviceAhead)
	kernel := float64(e) * m.EdgeSeconds
	distinct := int64(3) // the largest subtask's blocks; P = 1 has one
	if p == 1 {
		distinct = 1
	}
	if float64(distinct*block)*(1+m.IndexShare) > float64(room) {
		kernel *= m.NoIndexFactor
	}
	return float64(plan.Bytes)/m.CopyRate + float64(plan.Uploads)*m.UploadSeconds +
		float64(len(seq))*m.SubtaskSeconds + kernel
}

// maxDeviceSlots is the blocks a GPU counter keeps resident (TG_MAX_SLOTS).
const maxDeviceSlots = 16

// hashTasks is every subtask of a p x p hash partition.
func hashTasks(p int) []partition.Subtask {
	ts := make([]partition.Subtask, 0, p*p*p)
	for i := range p {
		for j := range p {
			for k := range p {
				ts = append(ts, partition.Subtask{I: i, J: j, K: k})
			}
		}
	}
	return ts
}

// fastP is plan.ChooseP for a graph of n vertices and e forward edges on
// one GPU of budget bytes, modelled by m, P fitting from pFit.
func fastP(m SpeedModel, n, e int64, pFit int, budget int64) (int, plan.Reason) {
	return plan.ChooseP(plan.PRequest{Fit: pFit, Modelled: true, Useful: partition.UsefulP(e),
		Seconds: func(p int) float64 { return m.seconds(n, e, p, budget) }})
}
