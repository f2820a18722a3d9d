package worker

import (
	"context"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// stagedConn hands out one job's assignments, waits for all their results,
// calls between, then hands out the next job's.
type stagedConn struct {
	*fakeConn
	stages  [][]api.Assignment
	between func()

	smu      sync.Mutex
	stage    int
	reported int
}

func (c *stagedConn) Pull(ctx context.Context, max int) ([]api.Assignment, error) {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.stage > 0 && c.stage <= len(c.stages) && len(c.fakeConn.todo) == 0 {
		// Wait for the results of the stage handed out.
		c.fakeConn.mu.Lock()
		n := len(c.fakeConn.results)
		c.fakeConn.mu.Unlock()
		if n < c.reported {
			return nil, nil
		}
	}
	c.fakeConn.mu.Lock()
	empty := len(c.fakeConn.todo) == 0
	c.fakeConn.mu.Unlock()
	if empty && c.stage < len(c.stages) {
		if c.stage > 0 {
			c.between()
		}
		c.fakeConn.mu.Lock()
		c.fakeConn.todo = append(c.fakeConn.todo, c.stages[c.stage]...)
		c.fakeConn.gave = make(chan struct{})
		c.fakeConn.mu.Unlock()
		c.reported += len(c.stages[c.stage])
		c.stage++
	}
	return c.fakeConn.Pull(ctx, max)
}

func partitionInto(t *testing.T, st storage.Store, fwd *graph.CSR, sc storage.Scheme, p int) *storage.Manifest {
	t.Helper()
	ctx := context.Background()
	if _, err := partition.PartitionGraph(ctx, fwd, storage.GraphStats{Vertices: fwd.NumRows(), Edges: fwd.NumEdges()}, st,
		partition.Config{Scheme: sc, P: p, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	m, err := storage.ReadManifest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunStorePartitionedAgain: a long-lived worker counts two jobs on one
// store URL that was partitioned again in between (another graph, another
// P); the second job must not be served the first one's cached blocks or
// manifest.
func TestRunStorePartitionedAgain(t *testing.T) {
	url := "mem://worker-again-" + t.Name()
	st, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	g1, g2 := testForward(t, 9, 1), testForward(t, 9, 2)
	m1 := partitionInto(t, st, g1, storage.SchemeHash, 2)
	job1 := assignments("one", url, partition.Subtasks(m1))
	// The second job's subtasks are those of the second partitioning.
	scratch := storage.NewMemStore()
	m2 := partitionInto(t, scratch, g2, storage.SchemeHash, 3)
	job2 := assignments("two", url, partition.Subtasks(m2))
	conn := &stagedConn{fakeConn: newFakeConn(nil), stages: [][]api.Assignment{job1, job2},
		between: func() { partitionInto(t, st, g2, storage.SchemeHash, 3) }}
	cfg := testConfig(t, conn, cpuSlots(1, "merge"), nil)
	cfg.CacheBytes = 1 << 40
	runWorker(t, cfg)
	var sums [2]uint64
	for _, r := range conn.results {
		if r.Err != "" {
			t.Fatalf("%+v", r)
		}
		if r.Ref.Job == "one" {
			sums[0] += r.Triangles
		} else {
			sums[1] += r.Triangles
		}
	}
	if len(conn.results) != len(job1)+len(job2) {
		t.Fatalf("%d results for %d assignments", len(conn.results), len(job1)+len(job2))
	}
	if w1, w2 := referenceCount(t, g1), referenceCount(t, g2); sums[0] != w1 || sums[1] != w2 || w1 == w2 {
		t.Fatalf("jobs counted %d and %d, want %d and %d", sums[0], sums[1], w1, w2)
	}
}
