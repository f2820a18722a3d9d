package clustertest

import (
	"fmt"
	"testing"
	"time"
)

// startCluster starts a coordinator and n CPU workers with extra worker
// flags.
func startCluster(t *testing.T, n int, coordArgs []string, workerArgs ...string) (*coord, []*proc) {
	t.Helper()
	c := startCoordinator(t, coordArgs...)
	var ws []*proc
	for i := range n {
		ws = append(ws, startWorker(t, c, fmt.Sprintf("w%d", i+1), workerArgs...))
	}
	return c, ws
}

func checkDone(t *testing.T, r result, err error, stderr string, want uint64) {
	t.Helper()
	if err != nil {
		t.Fatalf("job failed: %v\n%s", err, stderr)
	}
	if r.State != "done" || r.Triangles == nil {
		t.Fatalf("job ended %s without a total: %+v", r.State, r)
	}
	if *r.Triangles != want {
		t.Fatalf("distributed count %d, independent count %d", *r.Triangles, want)
	}
}

// A coordinator and 4 worker processes count ca-GrQc at P = 4 with both
// schemes, from the graph file (the coordinator partitions it) and from a
// shard store, exactly. Two of the workers read the shards from the store
// directory, two fetch them from the coordinator.
func TestCountFourWorkers(t *testing.T) {
	t.Parallel()
	file := grqc(t)
	want := wholeCount(t, file)
	if want != grqcTriangles {
		t.Fatalf("whole-graph count %d, published %d", want, grqcTriangles)
	}
	c, _ := startCluster(t, 2, nil)
	startWorker(t, c, "fetch1", "--fetch-shards")
	startWorker(t, c, "fetch2", "--fetch-shards")
	for _, scheme := range []string{"hash", "range"} {
		t.Run(scheme+"/file", func(t *testing.T) {
			r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "4", "--scheme", scheme, file)
			checkDone(t, r, err, stderr, want)
			if r.Subtasks == 0 || r.Subtasks > 64 {
				t.Errorf("%d subtasks at P=4", r.Subtasks)
			}
		})
		t.Run(scheme+"/shards", func(t *testing.T) {
			dir := partitionShards(t, file, 4, scheme)
			r, stderr, err := submitWait(t, c, 2*time.Minute, "--shards", dir)
			checkDone(t, r, err, stderr, want)
		})
	}
	// A job that names a CPU kernel, and one whose P the coordinator
	// chooses from the workers' memory.
	t.Run("kernel=merge", func(t *testing.T) {
		r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "2", "--kernel", "merge", file)
		checkDone(t, r, err, stderr, want)
	})
	t.Run("P=auto", func(t *testing.T) {
		r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "0", file)
		checkDone(t, r, err, stderr, want)
	})
	if sums, _ := metrics(t, c); sums["trigrid_coordinator_shard_bytes_served_total"] == 0 {
		t.Error("the coordinator served no shard bytes to the workers that fetch them")
	}
}
