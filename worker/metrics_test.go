package worker

import (
	"context"
	"errors"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

func newTestMetrics(t *testing.T) *Metrics {
	t.Helper()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A run's metrics agree with what it did: one counted attempt per
// result, each timed once in the histograms, and three host cache
// lookups per subtask. Without a cache every load is a miss (hits are
// lookups that shared another's load); with an unbounded one the misses
// are some of the loads (the prefetcher makes the others). The count
// itself is exact.
func TestMetricsOfARun(t *testing.T) {
	fwd := testForward(t, 10, 3)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := referenceCount(t, fwd)
	for _, cache := range []int64{-1, 1 << 40} {
		src := &countingSource{src: PartitionSource{Part: part}, loads: map[[2]int]int{}, bad: [2]int{-1, -1}}
		as := assignments("j", "", part.Subtasks())
		conn := newFakeConn(as)
		cfg := testConfig(t, conn, cpuSlots(2, "merge"), src)
		cfg.CacheBytes = cache
		m := newTestMetrics(t)
		cfg.Metrics = m
		runWorker(t, cfg)
		if got := sumResults(t, conn.check(t, as)); got != want {
			t.Fatalf("cache %d: count %d, whole graph %d", cache, got, want)
		}
		n := float64(len(as))
		if got := value(t, m.subtasks.WithLabelValues("counted")); got != n {
			t.Errorf("cache %d: subtasks_total{counted} %v, want %v", cache, got, n)
		}
		for name, h := range map[string]prometheus.Histogram{"kernel": m.kernel, "fetch": m.fetch, "decode": m.decode, "upload": m.upload} {
			if got := histogramCount(t, h); got != uint64(len(as)) {
				t.Errorf("cache %d: %s_seconds: %d observations, want %d", cache, name, got, len(as))
			}
		}
		loads := 0
		for _, c := range src.loads {
			loads += c
		}
		hits, misses := value(t, m.hits.WithLabelValues("host")), value(t, m.misses.WithLabelValues("host"))
		if hits+misses != 3*n || misses > float64(loads) || cache < 0 && misses != float64(loads) {
			t.Errorf("cache %d: %v hits, %v misses; %d loads, %v lookups", cache, hits, misses, loads, 3*n)
		}
		if held := value(t, m.cacheBytes); (cache > 0) != (held > 0) {
			t.Errorf("cache %d: block_cache_bytes %v", cache, held)
		}
	}
}

// fakeDevice is a counter with a device cache and device memory of its
// own: it reports one hit per count after the first, holds used bytes,
// counts 1 in 5 ms of kernel time and fails its at-th count.
type fakeDevice struct {
	calls *atomic.Int64
	at    int64
	used  uint64
	cache kernels.CacheCounter
}

func (f *fakeDevice) Name() string                           { return "fake" }
func (f *fakeDevice) SetCacheCounter(c kernels.CacheCounter) { f.cache = c }
func (f *fakeDevice) DeviceStats() kernels.DeviceStats {
	return kernels.DeviceStats{UsedBytes: f.used, PeakBytes: f.used}
}
func (f *fakeDevice) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	n := f.calls.Add(1)
	f.cache.Lookup(n > 1)
	if n == f.at {
		return kernels.Result{}, errors.New("device lost")
	}
	return kernels.Result{Triangles: 1, KernelTime: 5 * time.Millisecond}, nil
}

// A device slot's counter feeds the device cache series, its memory in
// use and limit show per slot, its busy time adds up its kernels', and a
// failed attempt counts as failed.
func TestMetricsOfADevice(t *testing.T) {
	fwd := testForward(t, 9, 4)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	slots := []Slot{{Device: api.Device{Kind: "gpu", Name: "fake", Memory: 1 << 30}, NewCounter: func(string) (kernels.Counter, error) {
		return &fakeDevice{calls: &calls, at: 3, used: 12345}, nil
	}}}
	as := assignments("j", "", part.Subtasks())
	conn := newFakeConn(as)
	cfg := testConfig(t, conn, slots, PartitionSource{Part: part})
	m := newTestMetrics(t)
	cfg.Metrics = m
	runWorker(t, cfg)
	rs := conn.check(t, as)
	n := float64(len(rs))
	if c, f := value(t, m.subtasks.WithLabelValues("counted")), value(t, m.subtasks.WithLabelValues("failed")); c != n-1 || f != 1 {
		t.Errorf("subtasks_total: %v counted, %v failed; want %v and 1", c, f, n-1)
	}
	if h, mi := value(t, m.hits.WithLabelValues("device")), value(t, m.misses.WithLabelValues("device")); h != n-1 || mi != 1 {
		t.Errorf("device cache: %v hits, %v misses; want %v and 1", h, mi, n-1)
	}
	if got := value(t, m.memUsed.WithLabelValues("0")); got != 12345 {
		t.Errorf("device_memory_used_bytes %v", got)
	}
	if got := value(t, m.memLimit.WithLabelValues("0")); got != 1<<30 {
		t.Errorf("device_memory_limit_bytes %v", got)
	}
	want := (n - 1) * (5 * time.Millisecond).Seconds()
	if got := value(t, m.busy.WithLabelValues("0")); got < want*0.999 || got > want*1.001 {
		t.Errorf("device_busy_seconds_total %v, want %v", got, want)
	}
}

func histogramCount(t *testing.T, h prometheus.Histogram) uint64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(h)
	fams, err := reg.Gather()
	if err != nil || len(fams) != 1 {
		t.Fatalf("gather: %v", err)
	}
	return fams[0].GetMetric()[0].GetHistogram().GetSampleCount()
}

// value reads a counter's or a gauge's value.
func value(t *testing.T, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	if m.Counter != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// descRecorder is a Registerer that keeps the names its collectors
// describe.
type descRecorder struct{ names map[string]bool }

var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (d *descRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		if m := descName.FindStringSubmatch(desc.String()); m != nil {
			d.names[m[1]] = true
		}
	}
	return nil
}
func (d *descRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		d.Register(c)
	}
}
func (d *descRecorder) Unregister(prometheus.Collector) bool { return false }

// docs/metrics.md lists exactly the worker's series (the multi-process
// test checks their types against a real scrape).
func TestMetricsDocumented(t *testing.T) {
	rec := &descRecorder{names: map[string]bool{}}
	if _, err := NewMetrics(rec); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(trigrid_worker_[a-z_]+)` \\|")
	docs := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			docs[m[1]] = true
		}
	}
	if len(rec.names) < 10 || !maps.Equal(rec.names, docs) {
		t.Errorf("registered %v\ndocumented %v", slices.Sorted(maps.Keys(rec.names)), slices.Sorted(maps.Keys(docs)))
	}
}
