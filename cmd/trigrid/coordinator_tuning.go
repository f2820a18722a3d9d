package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator"
)

// tuningFlags are the coordinator's finer settings: speculation, recounts,
// shard serving and memory bounds.
type tuningFlags struct {
	speculateAfter    float64
	speculateFactor   float64
	speculateMinTicks int64
	recountWaitTicks  int64
	fetchConcurrency  int
	chunkSize         string
	sendQueue         int
	keepFinished      int
	keepShards        bool
}

func (f *tuningFlags) add(cmd *cobra.Command) {
	d := coordinator.DefaultConfig()
	s := d.Scheduler
	fl := cmd.Flags()
	fl.Float64Var(&f.speculateAfter, "speculate-after", s.SpeculateAfter, "share of a job's subtasks done before stragglers are re-offered, in (0, 1]")
	fl.Float64Var(&f.speculateFactor, "speculate-factor", s.SpeculateFactor, "an attempt running this many times past its estimate is a straggler (at least 1)")
	fl.Int64Var(&f.speculateMinTicks, "speculate-min-ticks", s.SpeculateMinTicks, "attempts younger than this many ticks are never re-offered")
	fl.Int64Var(&f.recountWaitTicks, "recount-wait-ticks", s.RecountWaitTicks, "ticks a verification copy or recount waits for a qualifying worker before its job fails")
	fl.IntVar(&f.fetchConcurrency, "fetch-concurrency", d.FetchConcurrency, "shard fetches served at once, each holding one shard in memory; more wait")
	fl.StringVar(&f.chunkSize, "chunk-size", strconv.Itoa(d.ChunkSize), "data size of one shard-fetch chunk, e.g. 1MiB (at most 4MiB)")
	fl.IntVar(&f.sendQueue, "send-queue", d.SendQueue, "messages that may wait for one worker's stream; a worker this far behind is disconnected and its attempts requeued")
	fl.BoolVar(&f.keepShards, "keep-shards", false, "keep the shards cut from a submitted graph file under --state when its job ends (default: deleted, the final status kept)")
	fl.IntVar(&f.keepFinished, "keep-finished", d.KeepFinished, "finished jobs that keep their per-subtask detail in memory; older ones keep only their final status")
}

// apply sets the flags' values in cfg, refusing values the coordinator
// would not take with an error naming the flag.
func (f *tuningFlags) apply(cfg *coordinator.Config) error {
	switch {
	case f.speculateAfter <= 0 || f.speculateAfter > 1:
		return fmt.Errorf("--speculate-after %v: want a share in (0, 1]", f.speculateAfter)
	case f.speculateFactor < 1:
		return fmt.Errorf("--speculate-factor %v: want at least 1", f.speculateFactor)
	case f.speculateMinTicks < 1:
		return fmt.Errorf("--speculate-min-ticks %d: want at least 1", f.speculateMinTicks)
	case f.recountWaitTicks < 1:
		return fmt.Errorf("--recount-wait-ticks %d: want at least 1", f.recountWaitTicks)
	case f.fetchConcurrency < 1:
		return fmt.Errorf("--fetch-concurrency %d: want at least 1", f.fetchConcurrency)
	case f.sendQueue < 1:
		return fmt.Errorf("--send-queue %d: want at least 1", f.sendQueue)
	case f.keepFinished < 1:
		return fmt.Errorf("--keep-finished %d: want at least 1", f.keepFinished)
	}
	chunk, err := parseBytes(f.chunkSize)
	if err != nil {
		return fmt.Errorf("--chunk-size: %w", err)
	}
	if chunk < 1 || chunk > api.MaxChunk {
		return fmt.Errorf("--chunk-size %s: want 1 byte to %d bytes (4MiB)", f.chunkSize, api.MaxChunk)
	}
	s := &cfg.Scheduler
	s.SpeculateAfter, s.SpeculateFactor, s.SpeculateMinTicks, s.RecountWaitTicks =
		f.speculateAfter, f.speculateFactor, f.speculateMinTicks, f.recountWaitTicks
	cfg.FetchConcurrency, cfg.ChunkSize, cfg.SendQueue, cfg.KeepFinished =
		f.fetchConcurrency, int(chunk), f.sendQueue, f.keepFinished
	cfg.KeepShards = f.keepShards
	return nil
}

// checkScheduling refuses scheduler settings the coordinator would take
// 0 in for its default, or cannot run with, naming the flag: a tick,
// heartbeat, lease or attempt count must be positive.
func (f *coordinatorFlags) checkScheduling() error {
	switch {
	case f.tick <= 0:
		return fmt.Errorf("--tick %v: want a positive duration, e.g. %v", f.tick, coordinator.DefaultConfig().TickInterval)
	case f.heartbeat <= 0:
		return fmt.Errorf("--heartbeat %v: want a positive duration, e.g. %v", f.heartbeat, coordinator.DefaultConfig().HeartbeatInterval)
	case f.leaseTicks < 1:
		return fmt.Errorf("--lease-ticks %d: want at least 1", f.leaseTicks)
	case f.maxAttempts < 1:
		return fmt.Errorf("--max-attempts %d: want at least 1", f.maxAttempts)
	}
	return nil
}
