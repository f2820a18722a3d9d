package clustertest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/internal/workerclient"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/pipeline"
	"github.com/trigrid/trigrid/worker"
)

// startRealWorkers runs n workers of package worker in this process, each
// with its own gRPC Work stream (workerclient) to c and one CPU slot of
// the kernel the CPU's auto picks.
func startRealWorkers(tb testing.TB, c *inProcessCoordinator, n int) {
	tb.Helper()
	sel, err := gpu.Select("cpu", "auto", gpu.SelectOptions{Workers: 1})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		conn, err := workerclient.New(workerclient.Config{Client: c.conn})
		if err != nil {
			tb.Fatal(err)
		}
		cfg := worker.DefaultConfig()
		cfg.ID = api.WorkerID(fmt.Sprintf("load-%d", i))
		cfg.Conn = conn
		cfg.Slots = pipeline.SlotsOf(sel)
		cfg.OpenStore = conn.OpenStore
		cfg.DrainTimeout = 0
		cfg.Logger = slog.New(slog.DiscardHandler)
		w, err := worker.New(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			if err := w.Run(ctx); err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
	}
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			tb.Errorf("worker: %v", err)
		}
	})
}

// referenceCount counts ca-GrQc whole with the reference kernel.
func referenceCount(tb testing.TB) uint64 {
	tb.Helper()
	fwd, _, _, _, err := partition.LoadGraph(context.Background(), repoFile("testdata", "ca-GrQc.txt.gz"), edgeio.ReadOptions{}, 1)
	if err != nil {
		tb.Fatal(err)
	}
	n, err := kernels.Reference(kernels.Whole(fwd))
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// Load: 64 workers of package worker, each on its own gRPC stream, count
// the 512 subtasks of ca-GrQc at P = 8 exactly.
func TestSixtyFourWorkers(t *testing.T) {
	want := referenceCount(t)
	store := shardStore(t, 8)
	c := startInProcess(t, t.TempDir())
	startRealWorkers(t, c, 64)
	start := time.Now()
	st := runJob(t, c, store)
	if st.State != api.JobDone || st.Triangles != want {
		t.Fatalf("job %v: %d triangles (%s), want %d", st.State, st.Triangles, st.Err, want)
	}
	if st.Subtasks != 512 || st.Done != 512 {
		t.Errorf("%d/%d subtasks done, want 512", st.Done, st.Subtasks)
	}
	t.Logf("64 workers, 512 subtasks: %v, %d workers returned results", time.Since(start), st.Workers)
}
