package worker

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/kernels"
)

// Metrics are a worker's Prometheus series, all prefixed trigrid_worker_
// (docs/metrics.md lists them): its attempts by outcome, their times as
// histograms, its devices' busy time and memory, and its block caches'
// lookups. Labels are bounded: an outcome, a device (the slot's index),
// a cache ("host", "device"); never a subtask or a job. Make them with
// NewMetrics and set Config.Metrics, one Metrics per Worker; a nil
// *Metrics records nothing.
type Metrics struct {
	subtasks                      *prometheus.CounterVec // by outcome
	kernel, fetch, decode, upload prometheus.Histogram
	busy                          *prometheus.CounterVec // by device
	memUsed, memLimit             *prometheus.GaugeVec   // by device
	hits, misses                  *prometheus.CounterVec // by cache
	cacheBytes                    prometheus.Gauge
}

// attemptBuckets are the histograms' buckets, in seconds: from 100 µs (a
// block served from memory) to about 7 minutes (a large subtask on a
// CPU).
var attemptBuckets = prometheus.ExponentialBuckets(1e-4, 4, 12)

// NewMetrics registers a worker's series with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const ns = "trigrid_worker"
	hist := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: name, Help: help, Buckets: attemptBuckets})
	}
	byDevice := []string{"device"}
	m := &Metrics{
		subtasks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "subtasks_total",
			Help: "Attempts ended, by outcome: counted, failed, handed_back (a cancelled attempt is not counted)."}, []string{"outcome"}),
		kernel: hist("kernel_seconds", "Kernel time of each counted attempt."),
		fetch:  hist("fetch_seconds", "Time each counted attempt spent fetching its blocks' bytes (0 when all were cached)."),
		decode: hist("decode_seconds", "Time each counted attempt spent decoding its blocks (0 when all were cached)."),
		upload: hist("upload_seconds", "Time each counted attempt spent moving its blocks to the device (0 on the CPU)."),
		busy: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "device_busy_seconds_total",
			Help: "Time a device (a GPU, or the CPU's cores) was busy counting: uploads and kernels, by slot index."}, byDevice),
		memUsed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "device_memory_used_bytes",
			Help: "Device memory the slot's counters hold after their last count (blocks kept for reuse, scratch); 0 on the CPU."}, byDevice),
		memLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "device_memory_limit_bytes",
			Help: "Memory the slot may use for a subtask, as the worker told the coordinator (0 when unknown)."}, byDevice),
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "block_cache_hits_total",
			Help: "Block lookups of counting attempts that found the block cached or loading, by cache: host (decoded blocks in memory) or device."}, []string{"cache"}),
		misses: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "block_cache_misses_total",
			Help: "Block lookups of counting attempts that had to load (host) or upload (device) the block, by cache."}, []string{"cache"}),
		cacheBytes: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "block_cache_bytes",
			Help: "Raw CSR bytes of the decoded blocks the host cache keeps between attempts."}),
	}
	for _, c := range []prometheus.Collector{m.subtasks, m.kernel, m.fetch, m.decode, m.upload, m.busy,
		m.memUsed, m.memLimit, m.hits, m.misses, m.cacheBytes} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, o := range []string{"counted", "failed", "handed_back"} {
		m.subtasks.WithLabelValues(o)
	}
	m.hits.WithLabelValues("host")
	m.misses.WithLabelValues("host")
	return m, nil
}

// CacheCounter returns the counter that cache ("host" or "device") feeds;
// its series appear with the first lookup.
func (m *Metrics) CacheCounter(cache string) kernels.CacheCounter {
	if m == nil {
		return noCacheCounter{}
	}
	return cacheCounter{m: m, cache: cache}
}

type cacheCounter struct {
	m     *Metrics
	cache string
}

func (c cacheCounter) Lookup(hit bool) {
	if hit {
		c.m.hits.WithLabelValues(c.cache).Inc()
	} else {
		c.m.misses.WithLabelValues(c.cache).Inc()
	}
}

type noCacheCounter struct{}

func (noCacheCounter) Lookup(bool) {}

// attach readies m for a worker of these slots: their memory limits, and
// counters that feed the device cache's series when they have a cache
// (kernels.CacheCounted). It returns the slots to use.
func (m *Metrics) attach(slots []Slot) []Slot {
	if m == nil {
		return slots
	}
	out := make([]Slot, len(slots))
	device := m.CacheCounter("device")
	for i, s := range slots {
		idx := strconv.Itoa(i)
		m.memLimit.WithLabelValues(idx).Set(float64(s.Device.Memory))
		m.memUsed.WithLabelValues(idx).Set(0)
		m.busy.WithLabelValues(idx)
		next := s.NewCounter
		s.NewCounter = func(kernel string) (kernels.Counter, error) {
			c, err := next(kernel)
			if cc, ok := c.(kernels.CacheCounted); ok && err == nil {
				cc.SetCacheCounter(device)
			}
			return c, err
		}
		out[i] = s
	}
	return out
}

// observe records an attempt slot st ended with r (not a cancelled one),
// and what the slot and the host cache hold after it. Slot goroutine.
func (w *Worker) observe(st *slotState, r api.Result) {
	m := w.cfg.Metrics
	if m == nil {
		return
	}
	switch {
	case r.HandedBack:
		m.subtasks.WithLabelValues("handed_back").Inc()
	case r.Err != "":
		m.subtasks.WithLabelValues("failed").Inc()
	default:
		m.subtasks.WithLabelValues("counted").Inc()
		m.kernel.Observe(r.KernelTime.Seconds())
		m.fetch.Observe(r.Fetch.Seconds())
		m.decode.Observe(r.Decode.Seconds())
		m.upload.Observe(r.Upload.Seconds())
	}
	idx := strconv.Itoa(st.index)
	busy := r.Busy
	if busy == 0 {
		busy = r.Upload + r.KernelTime
	}
	m.busy.WithLabelValues(idx).Add(busy.Seconds())
	m.memUsed.WithLabelValues(idx).Set(float64(st.deviceBytes()))
	m.cacheBytes.Set(float64(w.cache.held()))
}

// hostLookup records a counting attempt's lookup in the host cache.
func (m *Metrics) hostLookup(hit bool) {
	if m != nil {
		cacheCounter{m: m, cache: "host"}.Lookup(hit)
	}
}

// deviceBytes is the device memory the slot's counters hold now.
func (s *slotState) deviceBytes() uint64 {
	var n uint64
	add := func(c kernels.Counter) {
		if d, ok := c.(interface{ DeviceStats() kernels.DeviceStats }); ok {
			n += d.DeviceStats().UsedBytes
		}
	}
	add(s.def)
	for _, c := range s.byKernel {
		add(c)
	}
	return n
}
