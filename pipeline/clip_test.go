package pipeline

import (
	"context"
	"fmt"
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

// TestRunLocalClipEveryKernel runs the clipped subtasks of both schemes
// through every CPU kernel, from memory and through shards, and checks
// each sum against the whole graph; offsets one too high must lose
// triangles, so the check can fail.
func TestRunLocalClipEveryKernel(t *testing.T) {
	ctx := context.Background()
	fwd := testForward(t, 10, 9)
	want := wholeCount(t, fwd)
	for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
		ps := []int{2, 3}
		if testlong.Enabled() {
			// P = 8 has 512 subtasks per run: minutes under the race
			// detector.
			ps = []int{1, 2, 3, 4, 5, 8}
		}
		for _, p := range ps {
			part, err := partition.Split(fwd, sc, p, 2)
			if err != nil {
				t.Fatal(err)
			}
			st := storage.NewMemStore()
			if _, err := partition.PartitionGraph(ctx, fwd, storage.GraphStats{Vertices: fwd.NumRows(), Edges: fwd.NumEdges()}, st,
				partition.Config{Scheme: sc, P: p}); err != nil {
				t.Fatal(err)
			}
			m, err := storage.ReadManifest(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			sources := []struct {
				name  string
				src   worker.Source
				tasks []partition.Subtask
			}{{"mem", worker.PartitionSource{Part: part}, part.Subtasks()}, {"shards", worker.StoreSource{Store: st, Manifest: m}, partition.Subtasks(m)}}
			for _, s := range sources {
				for _, name := range kernels.CPUKernelNames() {
					t.Run(fmt.Sprintf("%v/P%d/%s/%s", sc, p, s.name, name), func(t *testing.T) {
						run := func(tasks []partition.Subtask) uint64 {
							res, err := RunLocal(ctx, s.src, "", tasks, testConfig([]worker.Slot{{NewCounter: func(string) (kernels.Counter, error) {
								return kernels.NewCPU(name, kernels.CPUOptions{Workers: 2})
							}}}))
							if err != nil {
								t.Fatal(err)
							}
							return res.Triangles
						}
						for _, task := range s.tasks {
							if !task.Clip {
								t.Fatalf("subtask %+v has no clip", task)
							}
						}
						if got := run(s.tasks); got != want {
							t.Fatalf("clipped subtasks counted %d, whole graph %d", got, want)
						}
						high := make([]partition.Subtask, len(s.tasks))
						for x, task := range s.tasks {
							task.TailOffset++
							high[x] = task
						}
						if got := run(high); got >= want {
							t.Fatalf("offsets plus one counted %d, whole graph %d: the clip is not applied", got, want)
						}
					})
				}
			}
		}
	}
}
