package scheduler

import (
	"fmt"
	"testing"

	"github.com/trigrid/trigrid/api"
)

// BenchmarkSchedulerCore measures the pure scheduler: 64 workers pulling
// one subtask at a time and answering at once.
func BenchmarkSchedulerCore(b *testing.B) {
	for _, p := range []int{16, 32} {
		b.Run(fmt.Sprintf("P=%d", p), func(b *testing.B) {
			tasks := testTasks(p)
			for b.Loop() {
				s, _ := New(DefaultConfig())
				s.AddJob(JobSpec{ID: "j", Subtasks: tasks})
				var queue []Decision
				for w := range 64 {
					id := api.WorkerID(fmt.Sprintf("w%d", w))
					s.WorkerJoined(api.Hello{Worker: id})
					queue = append(queue, s.Pull(id, 1)...)
				}
				done := false
				for len(queue) > 0 && !done {
					d := queue[0]
					queue = queue[1:]
					switch d.Kind {
					case DecideAssign:
						queue = append(queue, s.Result(api.Result{Ref: d.Ref, Attempt: d.Attempt, Worker: d.Worker, Triangles: 1})...)
						queue = append(queue, s.Pull(d.Worker, 1)...)
					case DecideJobDone:
						done = true
					}
				}
				if !done {
					b.Fatal("job not done")
				}
			}
			b.ReportMetric(float64(len(tasks)*b.N)/b.Elapsed().Seconds(), "subtasks/s")
		})
	}
}

// BenchmarkViews measures the read-only views the coordinator's pages and
// RPCs take on its one goroutine, on a job of P = 32 (32,768 subtasks)
// half settled: Job (a status, what the dashboard's overview reads) and
// Subtasks (every subtask, what a job's detail reads).
func BenchmarkViews(b *testing.B) {
	s, _ := New(DefaultConfig())
	tasks := testTasks(32)
	settled := map[int]uint64{}
	for i := 0; i < len(tasks); i += 2 {
		settled[i] = 1
	}
	if _, err := s.AddJob(JobSpec{ID: "j", Subtasks: tasks, Settled: settled}); err != nil {
		b.Fatal(err)
	}
	b.Run("Job", func(b *testing.B) {
		for b.Loop() {
			if js, ok := s.Job("j"); !ok || js.Done != len(settled) {
				b.Fatal(js)
			}
		}
	})
	b.Run("Subtasks", func(b *testing.B) {
		for b.Loop() {
			if sts, ok := s.Subtasks("j"); !ok || len(sts) != len(tasks) {
				b.Fatal(len(sts))
			}
		}
	})
}
