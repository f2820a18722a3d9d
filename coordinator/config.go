package coordinator

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/coordinator/scheduler"
)

// Config configures a coordinator Server.
type Config struct {
	// Scheduler tunes the scheduling core (leases in ticks, attempts,
	// speculation, verification).
	Scheduler scheduler.Config
	// StateDir holds the job database (StateFile) and the shards of jobs
	// submitted as graph files (jobs/ID/). A restarted coordinator with
	// the same StateDir resumes its unfinished jobs without recounting
	// settled subtasks. "" keeps everything in memory: jobs are lost with
	// the process and graph jobs' shards go to mem:// stores, which
	// workers can only fetch over gRPC.
	StateDir string
	// TickInterval is the scheduler's tick: the unit of leases and
	// speculation ages. Shorter ticks notice lost attempts sooner at the
	// cost of more wakeups. 0 means 100 ms.
	TickInterval time.Duration
	// HeartbeatInterval is how often workers are told to send heartbeats;
	// it must be well under the lease (Scheduler.LeaseTicks ticks). 0
	// means 1 s.
	HeartbeatInterval time.Duration
	// Partitioner cuts submitted graph files into shards (the command
	// hands it the pipeline's). nil refuses graph files when they are
	// submitted: the coordinator then takes shard stores only.
	Partitioner Partitioner
	// CountsReader reads a done per-vertex job's blocks to turn its
	// summed partials into counts (the command hands it the pipeline's).
	// nil refuses per-vertex and per-edge jobs when they are submitted.
	CountsReader CountsReader
	// Kernels are the kernels a job may name (the command lists trigrid's
	// CPU and GPU kernels). Submit refuses any other name, naming these,
	// so that a typo fails at once rather than after RecountWaitTicks
	// without a worker that has it. "" (each worker's own) is always
	// accepted; empty accepts every name.
	Kernels KernelNames
	// DeviceMemory is the memory budget per subtask used to choose P for
	// a job submitted with Partitions 0 when no connected worker reports
	// its device memory. 0 means such a job fails saying so.
	DeviceMemory int64
	// ChunkSize is the data size of one FetchShard chunk. 0 means 1 MiB;
	// it is capped at api.MaxChunk.
	ChunkSize int
	// FetchConcurrency bounds the FetchShard calls served at once; each
	// holds one whole shard in memory while it streams, so this bounds the
	// memory shard serving takes. Further calls wait. 0 means 8.
	FetchConcurrency int
	// SendQueue is how many messages may wait for one worker's stream; a
	// worker that falls this far behind is disconnected (its attempts are
	// requeued) rather than slowing the coordinator. 0 means 1024.
	SendQueue int
	// KeepFinished is how many finished jobs keep their per-subtask detail
	// (the dashboard's grid and attempts) in memory; older finished jobs keep
	// only their final status. 0 means 16.
	KeepFinished int
	// KeepShards keeps the shards cut from a submitted graph file
	// (StateDir/jobs/ID/) when their job ends. false deletes them once the
	// job is done, failed or cancelled; its record and final status stay.
	KeepShards bool
	// DataDirs are the directories a graph file submitted by path must
	// lie in, checked after the path is cleaned and its symbolic links
	// resolved; the error for a path outside them names it. Empty refuses
	// every graph file (shard stores are still accepted).
	DataDirs []string
	// Registry receives the coordinator's Prometheus metrics. nil makes a
	// new registry (see Server.Registry).
	Registry *prometheus.Registry
	// Version is sent to workers in the Welcome.
	Version string
	Logger  *slog.Logger
}

// DefaultConfig returns the defaults: scheduler.DefaultConfig, 100 ms
// ticks (so 10 s leases), 1 s heartbeats, state in memory.
func DefaultConfig() Config {
	return Config{
		Scheduler:         scheduler.DefaultConfig(),
		TickInterval:      100 * time.Millisecond,
		HeartbeatInterval: time.Second,
		ChunkSize:         1 << 20,
		FetchConcurrency:  8,
		SendQueue:         1024,
		KeepFinished:      16,
	}
}

// Validate fills zero fields with defaults and rejects impossible values.
func (c *Config) Validate() error {
	d := DefaultConfig()
	if err := c.Scheduler.Validate(); err != nil {
		return err
	}
	if c.TickInterval == 0 {
		c.TickInterval = d.TickInterval
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = d.HeartbeatInterval
	}
	if c.ChunkSize == 0 {
		c.ChunkSize = d.ChunkSize
	}
	c.ChunkSize = min(c.ChunkSize, api.MaxChunk)
	if c.SendQueue == 0 {
		c.SendQueue = d.SendQueue
	}
	if c.FetchConcurrency == 0 {
		c.FetchConcurrency = d.FetchConcurrency
	}
	if c.KeepFinished == 0 {
		c.KeepFinished = d.KeepFinished
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.TickInterval < 0:
		return fmt.Errorf("coordinator: tick interval %v: must be positive", c.TickInterval)
	case c.HeartbeatInterval < 0:
		return fmt.Errorf("coordinator: heartbeat interval %v: must be positive", c.HeartbeatInterval)
	case c.ChunkSize < 0 || c.SendQueue < 0 || c.FetchConcurrency < 0 || c.KeepFinished < 0:
		return fmt.Errorf("coordinator: chunk size %d, send queue %d, fetch concurrency %d: must be positive",
			c.ChunkSize, c.SendQueue, c.FetchConcurrency)
	case c.DeviceMemory < 0:
		return fmt.Errorf("coordinator: device memory %d: must not be negative", c.DeviceMemory)
	}
	if lease := c.Lease(); c.HeartbeatInterval*2 > lease {
		return fmt.Errorf("coordinator: heartbeat interval %v is more than half the lease %v (%d ticks of %v)",
			c.HeartbeatInterval, lease, c.Scheduler.LeaseTicks, c.TickInterval)
	}
	return nil
}

// Lease is the lease as a duration.
func (c *Config) Lease() time.Duration { return time.Duration(c.Scheduler.LeaseTicks) * c.TickInterval }
