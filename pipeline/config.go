package pipeline

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/plan"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

// Progress receives the progress of long phases. Update may be called from
// any goroutine.
type Progress interface {
	Start(phase, unit string, total int64)
	Update(done, total int64)
	Done()
}

// Config configures the commands of this package. Start from
// DefaultConfig.
type Config struct {
	// Read says how graph files are parsed (format, bad lines). Its
	// Workers and Progress are set from this Config.
	Read edgeio.ReadOptions
	// Order is the vertex order of orientation; the zero value is degree
	// order, which partitioning and the device fast path need.
	Order graph.Order
	// Workers is the number of CPU goroutines of every parallel phase
	// (reading, cleaning, ordering, partitioning); 0 means GOMAXPROCS.
	Workers int
	// Slots are the devices that count: one per GPU, or the CPU. A whole
	// graph is counted on the first; a partitioned count runs one local
	// worker slot per entry. Counting needs at least one.
	Slots []worker.Slot
	// Devices, when not nil, supplies Slots and Device in their place for
	// CountFile, which calls it once, in a goroutine of its own, while the
	// file is read, so that finding and starting a GPU overlaps the
	// read. An error from it stops the read and is
	// CountFile's error, as it is. Nil: Slots and Device are used as set.
	// The other commands of this package need Slots.
	Devices func() (slots []worker.Slot, device string, err error)
	// DeviceLimit is the device memory a GPU counter will be limited to,
	// when known before the device starts (--device-mem-limit); 0: not
	// known. An input whose pairs' two 8-byte keys exceed it cannot be
	// cleaned on the device whole, so the host numbers its ids while the
	// device starts instead of after (compactEarly).
	DeviceLimit uint64
	// Device names where the counting runs, for the report ("cpu", the
	// GPU's name); "" leaves the report's device empty.
	Device string
	// Verify recounts with the reference CPU kernel and fails on a
	// mismatch: the whole graph, or every subtask through the same blocks.
	// On a device that cleans and orients graphs itself it also checks
	// that device's statistics against the host's.
	Verify bool
	// PerVertex asks for per-vertex (and per-edge) counts, whole or
	// through partitions and shards, the files they go to and the top
	// vertices and edges (counts.Options); the zero value counts totals
	// only.
	PerVertex counts.Options

	// Scheme and P split a count into P x P blocks and P^3 subtasks
	// (CountFilePartitioned); the zero Scheme is no scheme, an error
	// there (DefaultConfig sets hash). P = 0 picks the smallest P whose
	// largest subtask fits Budget (bytes), which must then be positive.
	Scheme storage.Scheme
	P      int
	Budget int64
	// Model is how P = 0 accounts a subtask's memory; the zero value is
	// partition.HostModel() (the CPU kernels).
	Model partition.MemModel
	// ModelFromDevice sets Model once Devices has chosen the slots (the
	// device is started while the file is read): GPUMemModel for a GPU,
	// partition.HostModel otherwise.
	ModelFromDevice bool
	// RowStream says whether a count on one GPU keeps only each
	// subtask's JK resident and streams IJ and IK through the device in
	// row ranges beside the kernel (gpu.Counter.SetRowStreaming), the
	// subtasks grouped by (J, K) so that each JK is uploaded once. The zero
	// value, StreamAuto, streams when Budget leaves no room for three
	// blocks and the searched block's index but does for JK, its index and
	// the ranges (docs/gpu.md, "Streaming rows").
	RowStream StreamMode
	// RowRanges says how a whole-graph count (P = 1) on a GPU that cannot
	// hold the forward graph counts it: in row ranges with its columns in
	// host memory (StreamOn, kernels.RangeCounter), in blocks as
	// `--partitions 0` does (StreamOff); StreamAuto counts in row ranges.
	RowRanges StreamMode

	// partitioned is set by CountFilePartitioned: the count is split into
	// blocks (plan.Request.Partitioned).
	partitioned bool
	// CacheBytes bounds the decoded blocks each local worker keeps
	// (worker.Config.CacheBytes): 0 means worker.DefaultCacheBytes,
	// negative keeps none.
	CacheBytes int64
	// Prefetch is how many assignments per slot a local worker loads
	// ahead of the one counting (worker.Config.Prefetch); 0 loads none
	// ahead.
	Prefetch int
	// Loaders is how many goroutines each local worker loads blocks ahead
	// with (worker.Config.Loaders): 0 means Workers, negative none.
	Loaders int

	// blocks is the cache the local workers share, begun while the
	// devices started (startShardDevices); nil: each makes its own.
	blocks *worker.Blocks

	// groupJK: the scheduler groups subtasks by JK (a GPU streaming rows
	// keeps JK resident); set by the partitioned count.
	groupJK bool

	// Progress receives phase progress; nil reports none.
	Progress Progress
	// Logger receives messages; nil discards them.
	Logger *slog.Logger
}

// DefaultConfig returns the configuration `trigrid count` starts from:
// degree order, all cores, hash scheme, whole graph, the worker's default
// cache and prefetch. The caller adds Slots.
func DefaultConfig() Config {
	wc := worker.DefaultConfig()
	return Config{
		Order:      graph.OrderDegree,
		Scheme:     storage.SchemeHash,
		P:          1,
		CacheBytes: wc.CacheBytes,
		Prefetch:   wc.Prefetch,
	}
}

// validate checks c and fills in the meaning of zero values.
func (c *Config) validate() error { return c.check(false) }

// check is validate where deferred allows Devices in place of Slots.
func (c *Config) check(deferred bool) error {
	if len(c.Slots) == 0 && (!deferred || c.Devices == nil) {
		return errors.New("pipeline: config: no counting slots")
	}
	if c.P < 0 {
		return fmt.Errorf("pipeline: config: P = %d", c.P)
	}
	if c.Prefetch < 0 {
		return fmt.Errorf("pipeline: config: Prefetch = %d", c.Prefetch)
	}
	c.fill()
	return nil
}

// fill sets the zero values' meaning, for the paths that do not count.
func (c *Config) fill() {
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	c.Read.Workers = c.Workers
	if c.Progress == nil {
		c.Progress = nopProgress{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// StreamMode is Config.RowStream.
type StreamMode int

const (
	StreamAuto StreamMode = iota // decided by the blocks and the budget
	StreamOn                     // always, on one GPU
	StreamOff                    // never
)

// plan is m as the planner names it.
func (m StreamMode) plan() plan.StreamMode {
	switch m {
	case StreamOn:
		return plan.StreamOn
	case StreamOff:
		return plan.StreamOff
	}
	return plan.StreamAuto
}

// ParseStreamMode reads "auto", "on" or "off".
func ParseStreamMode(s string) (StreamMode, error) {
	switch s {
	case "auto", "":
		return StreamAuto, nil
	case "on":
		return StreamOn, nil
	case "off":
		return StreamOff, nil
	}
	return 0, fmt.Errorf("%q: want auto, on or off", s)
}

type nopProgress struct{}

func (nopProgress) Start(string, string, int64) {}
func (nopProgress) Update(int64, int64)         {}
func (nopProgress) Done()                       {}
