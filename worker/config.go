package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/storage"
)

// DefaultCacheBytes keeps a few blocks of a graph of some 100M edges.
const DefaultCacheBytes = 1 << 30

// DefaultMaxPrefetch bounds the assignments per slot the worker pulls
// ahead by itself: enough for subtasks of microseconds behind a round
// trip of a millisecond or two.
const DefaultMaxPrefetch = 256

// Slot is one counting device: a GPU, or the CPU. Each slot counts one
// assignment at a time with counters of its own.
type Slot struct {
	// Device describes the slot for the coordinator (api.Hello).
	Device api.Device
	// NewCounter makes a counter for kernel on this device; "" is the
	// slot's default kernel. The slot keeps the counter while assignments
	// ask for the same kernel and closes it (io.Closer) when it is done.
	NewCounter func(kernel string) (kernels.Counter, error)
}

// Config configures a Worker. Start from DefaultConfig.
type Config struct {
	// ID names the worker to the coordinator; "" means "worker".
	ID api.WorkerID
	// Instance identifies this worker process to the coordinator, the same
	// on every reconnect (api.Hello.Instance); "" means a fresh one
	// (NewInstance).
	Instance string
	// Conn carries assignments in and results out: the in-process run's
	// or the gRPC client's. Required.
	Conn Conn
	// Slots are the devices counted on, one assignment at a time each.
	// At least one is required.
	Slots []Slot
	// Source serves the blocks of assignments whose Store is "" (the
	// in-process run's partition). nil fails such assignments.
	Source Source
	// OpenStore opens the store an assignment's Store URL names; the
	// worker reads its manifest once and keeps it open. nil means
	// storage.Open.
	OpenStore func(ctx context.Context, url string) (storage.Store, error)
	// CacheBytes bounds the decoded blocks kept between assignments (raw
	// CSR bytes). Blocks in use are held by their assignments regardless.
	// 0 means DefaultCacheBytes; negative keeps nothing, which also turns
	// prefetching off.
	CacheBytes int64
	// Prefetch is how many assignments per slot the worker pulls ahead of
	// the ones counting, loading their blocks meanwhile. More hides more
	// load time but holds subtasks another worker could take. 0 pulls an
	// assignment only when a slot is free. MaxPrefetch, when above a
	// Prefetch of 1 or more, lets the worker keep more ahead as its
	// measured subtask and round-trip times ask (pace.go); when below, it
	// is Prefetch.
	Prefetch    int
	MaxPrefetch int
	// Blocks, when not nil, is the cache the worker reads its blocks from
	// (NewBlocks; CacheBytes then does not apply), which its maker may have
	// begun to fill (Blocks.Preload). Several workers may share one.
	Blocks *Blocks
	// Loaders is how many goroutines fetch and decode the blocks of held
	// assignments ahead of the slots (each takes a core while it decodes);
	// 0 means Cores. Negative loads nothing ahead: each slot loads its
	// blocks itself.
	Loaders int
	// HeartbeatInterval is how often the worker tells the coordinator it
	// is alive and what it holds; it must be well under the coordinator's
	// lease. 0 sends no heartbeats (the in-process run needs none).
	HeartbeatInterval time.Duration
	// DrainTimeout is how long running assignments may go on counting
	// after Run's context ends; what is unfinished then is handed back.
	// 0 hands everything back at once.
	DrainTimeout time.Duration
	// ReportTimeout bounds each Report and Heartbeat made after Run's
	// context ended (handing back while draining). 0 means 10 s.
	ReportTimeout time.Duration
	// Version and Kernels describe the worker in its hello; Cores is the
	// CPU cores it may use, 0 meaning GOMAXPROCS.
	Version string
	Kernels []string
	Cores   int
	// Logger receives the worker's messages; nil discards them.
	Logger *slog.Logger
	// Metrics receives the worker's Prometheus series (NewMetrics); nil
	// records none.
	Metrics *Metrics
}

// DefaultConfig returns a configuration with the tunables set; the caller
// adds the Conn, Slots and a block source.
func DefaultConfig() Config {
	return Config{
		ID:         "worker",
		CacheBytes: DefaultCacheBytes,
		// At least two assignments ahead per slot keep the next subtask's
		// blocks decoded while the current one counts; more when a round
		// trip to the coordinator takes longer than two subtasks (pace.go).
		Prefetch:          2,
		MaxPrefetch:       DefaultMaxPrefetch,
		HeartbeatInterval: 2 * time.Second,
		// A subtask counts in seconds; a drain of this length lets most
		// finish rather than be counted again elsewhere.
		DrainTimeout:  30 * time.Second,
		ReportTimeout: 10 * time.Second,
	}
}

// Validate checks cfg and fills in the meaning of zero values.
func (c *Config) Validate() error {
	if c.Conn == nil {
		return errors.New("worker: config: no Conn")
	}
	if len(c.Slots) == 0 {
		return errors.New("worker: config: no slots (give at least one device)")
	}
	for n, s := range c.Slots {
		if s.NewCounter == nil {
			return fmt.Errorf("worker: config: slot %d (%s) has no NewCounter", n, s.Device.Name)
		}
	}
	if c.Prefetch < 0 || c.MaxPrefetch < 0 {
		return fmt.Errorf("worker: config: Prefetch %d, MaxPrefetch %d: negative", c.Prefetch, c.MaxPrefetch)
	}
	c.MaxPrefetch = max(c.MaxPrefetch, c.Prefetch)
	if c.Prefetch == 0 {
		c.MaxPrefetch = 0
	}
	if c.HeartbeatInterval < 0 || c.DrainTimeout < 0 || c.ReportTimeout < 0 {
		return errors.New("worker: config: negative interval")
	}
	if c.ID == "" {
		c.ID = "worker"
	}
	if c.Instance == "" {
		c.Instance = NewInstance()
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = DefaultCacheBytes
	}
	if c.ReportTimeout == 0 {
		c.ReportTimeout = 10 * time.Second
	}
	if c.Cores <= 0 {
		c.Cores = runtime.GOMAXPROCS(0)
	}
	if c.Loaders == 0 {
		c.Loaders = c.Cores
	}
	if c.OpenStore == nil {
		c.OpenStore = func(ctx context.Context, url string) (storage.Store, error) { return storage.Open(url) }
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
