package simulate

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/trigrid/trigrid/bench/report"
	"github.com/trigrid/trigrid/partition"
)

// ModelKind and ModelFormat name and version a cost model file.
const (
	ModelKind   = "trigrid-cost-model"
	ModelFormat = 1
)

// Model is the cost model of a simulated worker: a linear model of a
// subtask's kernel time in its work estimate and of a block's load time
// in its size, plus the job's fixed start and end (see
// docs/decisions/2026-12-01-simulator-cost-model.md).
type Model struct {
	Kind   string `json:"kind"`
	Format int    `json:"format"`
	// Device is "cpu" or "gpu", what the fitted runs counted on.
	Device string `json:"device"`
	// A subtask's kernel time is KernelNsPerSubtask + KernelNsPerWork *
	// Work (partition.Subtask.Work).
	KernelNsPerSubtask float64 `json:"kernel_ns_per_subtask"`
	KernelNsPerWork    float64 `json:"kernel_ns_per_work"`
	// A block the worker does not hold costs LoadNsPerBlock +
	// LoadNsPerElement * (rows + edges) to fetch and decode, and
	// UploadNsPerElement * (rows + edges) to move to the device (busy
	// time, as the worker counts it).
	LoadNsPerBlock     float64 `json:"load_ns_per_block"`
	LoadNsPerElement   float64 `json:"load_ns_per_element"`
	UploadNsPerElement float64 `json:"upload_ns_per_element"`
	// StartNs is from the job's submission to its first subtask's start
	// (the coordinator reading the manifest, the first hand-outs); EndNs
	// from the last result to the job's end; MessageNs one way between
	// coordinator and worker.
	StartNs   float64 `json:"start_ns"`
	EndNs     float64 `json:"end_ns"`
	MessageNs float64 `json:"message_ns"`
	// The worker: one slot; CacheBytes of decoded blocks kept (LRU);
	// Prefetch assignments pulled ahead of the one counting. With
	// OverlapLoads the blocks of pulled assignments load beside the
	// kernel (a GPU worker, a CPU worker of several cores); without, a
	// subtask's loads run before its kernel on the same core.
	CacheBytes   int64 `json:"cache_bytes"`
	Prefetch     int   `json:"prefetch"`
	OverlapLoads bool  `json:"overlap_loads"`
	// Host, when set, is the one machine the fitted runs' CPU workers
	// shared (bench scale's workers on one host). The kernel and load
	// costs above are then those of a worker with its cores to itself,
	// which is what a simulated worker has: each its own machine.
	// OnHost gives the costs of workers sharing the host again.
	Host *Host `json:"host,omitempty"`
	// Fit says what the figures were fitted to.
	Fit *FitInfo `json:"fit,omitempty"`
}

// Host is a machine that CPU workers share with each other and with the
// machine's other processes.
type Host struct {
	// Cores is the machine's; CoresPerWorker each worker's (its
	// GOMAXPROCS); OtherCores the cores' worth of CPU the rest of the
	// machine took while the fitted runs ran (their median; the
	// coordinator and every other process).
	Cores          int     `json:"cores"`
	CoresPerWorker int     `json:"cores_per_worker"`
	OtherCores     float64 `json:"other_cores"`
}

// Slowdown is how much slower each of n workers computes on the host
// than on cores of its own, with others cores' worth of other work
// runnable beside them: the runnable work over the cores, at least 1
// (a fair scheduler shares the cores evenly among what is runnable).
func (h Host) Slowdown(n int, others float64) float64 {
	if h.Cores < 1 {
		return 1
	}
	return max(1, (float64(n*max(1, h.CoresPerWorker))+max(0, others))/float64(h.Cores))
}

// OnHost returns m as n workers sharing m's host (with its other
// processes) would run it: the kernel and load costs times the host's
// slowdown. A model without a host is returned unchanged.
func (m Model) OnHost(n int) Model {
	if m.Host == nil {
		return m
	}
	f := m.Host.Slowdown(n, m.Host.OtherCores)
	m.KernelNsPerSubtask *= f
	m.KernelNsPerWork *= f
	m.LoadNsPerBlock *= f
	m.LoadNsPerElement *= f
	return m
}

// FitInfo records a fit's data.
type FitInfo struct {
	Source   string `json:"source"`
	P        int    `json:"p"`
	Subtasks int    `json:"subtasks"`
	Workers  []int  `json:"workers"`
	Runs     int    `json:"runs"`
}

// Check rejects a model that cannot be simulated; where names it.
func (m *Model) Check(where string) error {
	switch {
	case m.Kind != ModelKind:
		return fmt.Errorf("simulate: %s: kind %q, not %q", where, m.Kind, ModelKind)
	case m.Format != ModelFormat:
		return fmt.Errorf("simulate: %s: format %d; this build reads format %d", where, m.Format, ModelFormat)
	case m.Prefetch < 0 || m.Prefetch > 1<<16:
		return fmt.Errorf("simulate: %s: prefetch %d", where, m.Prefetch)
	case m.CacheBytes < 0:
		return fmt.Errorf("simulate: %s: cache of %d bytes", where, m.CacheBytes)
	}
	for name, v := range map[string]float64{"kernel_ns_per_subtask": m.KernelNsPerSubtask, "kernel_ns_per_work": m.KernelNsPerWork,
		"load_ns_per_block": m.LoadNsPerBlock, "load_ns_per_element": m.LoadNsPerElement, "upload_ns_per_element": m.UploadNsPerElement,
		"start_ns": m.StartNs, "end_ns": m.EndNs, "message_ns": m.MessageNs} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("simulate: %s: %s = %v: want a finite value of at least 0", where, name, v)
		}
	}
	if h := m.Host; h != nil && (h.Cores < 1 || h.CoresPerWorker < 1 || h.OtherCores < 0 || math.IsNaN(h.OtherCores) || math.IsInf(h.OtherCores, 0)) {
		return fmt.Errorf("simulate: %s: host of %d cores, %d a worker, %v taken by other processes: want at least 1, 1 and 0",
			where, h.Cores, h.CoresPerWorker, h.OtherCores)
	}
	if m.KernelNsPerSubtask == 0 && m.KernelNsPerWork == 0 {
		return fmt.Errorf("simulate: %s: every subtask would take no time", where)
	}
	return nil
}

// kernelNs is subtask t's kernel time.
func (m *Model) kernelNs(t partition.Subtask) int64 {
	return int64(m.KernelNsPerSubtask + m.KernelNsPerWork*float64(t.Work))
}

// loadNs and uploadNs are a missing block's costs.
func (m *Model) loadNs(s partition.BlockStat) int64 {
	return int64(m.LoadNsPerBlock + m.LoadNsPerElement*float64(s.Rows+s.Edges))
}

func (m *Model) uploadNs(s partition.BlockStat) int64 {
	return int64(m.UploadNsPerElement * float64(s.Rows+s.Edges))
}

// ReadModel reads a cost model file.
func ReadModel(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	return DecodeModel(path, data)
}

// DecodeModel parses and checks a cost model; where names it in errors.
func DecodeModel(where string, data []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("simulate: %s: %w", where, err)
	}
	if err := m.Check(where); err != nil {
		return nil, err
	}
	return &m, nil
}

// WriteModel writes m as indented JSON.
func WriteModel(path string, m *Model) error {
	if err := report.WriteJSON(path, m); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	return nil
}
