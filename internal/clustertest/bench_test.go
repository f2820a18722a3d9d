package clustertest

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkTwoWorkersVsLocal compares, on the same shards (rmat of scale
// TRIGRID_BENCH_SCALE, default 20, edge factor 16, P = 4, hash), a
// coordinator with two CPU worker processes against `trigrid count
// --shards` in one process. Each op is one whole count; both report the
// count's wall time (the cluster's from submit to result, the local one
// from the command's start to its exit) as the median of the ops, in
// seconds, and check the totals agree.
func BenchmarkTwoWorkersVsLocal(b *testing.B) {
	scale := 20
	if s := os.Getenv("TRIGRID_BENCH_SCALE"); s != "" {
		scale, _ = strconv.Atoi(s)
	}
	file := genGraph(b, scale, 16)
	dir := partitionShards(b, file, 4, "hash")
	var local uint64
	b.Run("local", func(b *testing.B) {
		var times []float64
		defer func() { reportMedian(b, times) }()
		for range b.N {
			start := time.Now()
			out, stderr, err := cli(b, 10*time.Minute, "count", "--json", "--device", "cpu", "--progress", "none", "--shards", dir)
			if err != nil {
				b.Fatalf("count --shards: %v\n%s", err, stderr)
			}
			times = append(times, time.Since(start).Seconds())
			var rep struct {
				Triangles uint64 `json:"triangles"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				b.Fatal(err)
			}
			local = rep.Triangles
		}
	})
	b.Run("coordinator+2workers", func(b *testing.B) {
		c := startCoordinator(b, "--tick", "100ms", "--lease-ticks", "100", "--heartbeat", "1s")
		startWorker(b, c, "w1")
		startWorker(b, c, "w2")
		var times []float64
		defer func() { reportMedian(b, times) }()
		for range b.N {
			start := time.Now()
			out, stderr, err := cli(b, 10*time.Minute, "submit", "--coordinator", c.grpc, "--wait", "--json", "--shards", dir)
			if err != nil {
				b.Fatalf("submit: %v\n%s", err, stderr)
			}
			times = append(times, time.Since(start).Seconds())
			var r result
			if err := json.Unmarshal([]byte(out), &r); err != nil || r.Triangles == nil {
				b.Fatalf("submit output %q: %v", out, err)
			}
			if local != 0 && *r.Triangles != local {
				b.Fatalf("cluster counted %d, count --shards %d", *r.Triangles, local)
			}
		}
	})
}

func reportMedian(b *testing.B, times []float64) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	b.ReportMetric(times[len(times)/2], "median-s/count")
	b.Logf("seconds per count: %.2f", times)
}
