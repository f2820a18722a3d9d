package worker

import (
	"sync"
	"time"

	"github.com/trigrid/trigrid/api"
)

// Stats is where a worker's time went, summed over its attempts and the
// loads made for them: the figures a run reports phase by phase. Times of
// different phases overlap (loads run beside counts, on other cores).
type Stats struct {
	// Loaders is the number of goroutines that load blocks ahead
	// (Config.Loaders).
	Loaders int
	// Loads counts the blocks fetched and decoded, by the loaders and by
	// the slots; Fetch and Decode are their times (summed over the
	// goroutines that made them), Stage the loaders' time readying blocks
	// for a device (Stager).
	Loads                int
	Fetch, Decode, Stage time.Duration
	// Slots has one entry per slot, in slot order.
	Slots []SlotStats
}

// SlotStats is one slot's share of Stats: the attempts it counted.
type SlotStats struct {
	Device api.Device
	// Subtasks counts the attempts it counted (not those that failed or
	// were handed back).
	Subtasks int
	// Wait is the time its attempts waited for their blocks in host
	// memory (loads not done in time, on the slot's own goroutine or by
	// the loaders); Upload the time they waited for them to reach the
	// device and be ready there (kernels.Result.Upload); Kernel their
	// kernels' time. Busy is Upload + Kernel: the device's time on them.
	Wait, Upload, Kernel, Busy time.Duration
}

// engine is what a run's pipeline keeps beside the cache: the slots'
// streams, the stager the loaders ready blocks with, and the figures.
type engine struct {
	streams *streams
	stager  Stager
	stats   statsAcc
}

// start readies the engine for a run on slots, their counters made.
func (e *engine) start(cfg Config, slots []*slotState) {
	e.streams = newStreams(len(slots))
	e.stats.init(cfg.Loaders, cfg.Slots)
	// Every GPU slot's counters share their library's pinned memory, so
	// one stager serves them all.
	for _, st := range slots {
		if s, ok := st.def.(Stager); ok && st.cfg.Device.Kind == "gpu" {
			e.stager = s
			break
		}
	}
}

// statsAcc accumulates Stats; safe for concurrent use.
type statsAcc struct {
	mu sync.Mutex
	s  Stats
}

func (a *statsAcc) init(loaders int, slots []Slot) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.s.Loaders = loaders
	a.s.Slots = make([]SlotStats, len(slots))
	for i, s := range slots {
		a.s.Slots[i].Device = s.Device
	}
}

// loaded records one cache lookup: a load, unless it was a hit (the
// block was there, or another caller was loading it).
func (a *statsAcc) loaded(lt LoadTimes, hit bool) {
	if hit {
		return
	}
	a.mu.Lock()
	a.s.Loads++
	a.s.Fetch += lt.Fetch
	a.s.Decode += lt.Decode
	a.mu.Unlock()
}

func (a *statsAcc) staged(d time.Duration) {
	a.mu.Lock()
	a.s.Stage += d
	a.mu.Unlock()
}

// counted records an attempt slot counted: r with its wait for blocks.
func (a *statsAcc) counted(slot int, r api.Result, wait time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if slot < 0 || slot >= len(a.s.Slots) {
		return
	}
	s := &a.s.Slots[slot]
	s.Subtasks++
	s.Wait += wait
	s.Upload += r.Upload
	s.Kernel += r.KernelTime
	s.Busy += r.Busy
}

func (a *statsAcc) get() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.s
	s.Slots = append([]SlotStats(nil), a.s.Slots...)
	return s
}

// Stats returns the worker's figures so far (all of them once Run has
// returned).
func (w *Worker) Stats() Stats { return w.eng.stats.get() }
