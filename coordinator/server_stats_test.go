package coordinator

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// statsWorker counts like fakeWorker and reports times that name the
// subtask (kernel time index+1 µs, on device index%2), sends its results
// in batches of up to batch with the next pull, and sends every result
// twice: the coordinator must count each subtask's times once.
type statsWorker struct {
	fakeWorker
	batch int
	// stopAfter ends the stream once this many results are sent (0:
	// never).
	stopAfter int
}

func attemptTimes(idx int) api.AttemptTimes {
	k := time.Duration(idx+1) * time.Microsecond
	return api.AttemptTimes{Fetch: 3 * time.Microsecond, Decode: 5 * time.Microsecond, Upload: time.Microsecond,
		KernelTime: k, Busy: k + time.Microsecond, Device: idx % 2}
}

func (w *statsWorker) run(ctx context.Context, conn *grpc.ClientConn) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cl := pb.NewClusterClient(conn)
	stream, err := cl.Work(ctx)
	if err != nil {
		return err
	}
	h := api.Hello{Worker: api.WorkerID(w.id), Version: "test", Slots: 1, Cores: 1}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Hello{Hello: pb.EncodeHello(h)}}); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != nil {
		return err
	}
	if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Pull{Pull: &pb.Pull{Max: int32(w.batch)}}}); err != nil {
		return err
	}
	sent := 0
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		as, err := pb.DecodeAssignments(m.GetAssignments())
		if err != nil {
			continue // a cancel
		}
		var rs []api.Result
		for _, a := range as {
			n, err := w.count(ctx, cl, a)
			if err != nil {
				return err
			}
			t := attemptTimes(a.Ref.Index)
			r := api.Result{Ref: a.Ref, Attempt: a.Attempt, Worker: api.WorkerID(w.id), Kernel: "reference", Triangles: n,
				Fetch: t.Fetch, Decode: t.Decode, KernelTime: t.KernelTime, Upload: t.Upload, Busy: t.Busy, Device: t.Device}
			rs = append(rs, r, r)
		}
		if err := stream.Send(&pb.WorkerMessage{Msg: &pb.WorkerMessage_Results{Results: pb.EncodeResults(rs, len(as))}}); err != nil {
			return err
		}
		sent += len(as)
		if w.stopAfter > 0 && sent >= w.stopAfter {
			return nil
		}
	}
}

// checkStats checks a done job's per-worker sums against the times the
// statsWorkers report: every subtask's once, whichever worker's attempt
// was accepted.
func checkStats(t *testing.T, st api.JobStatus, n int) {
	t.Helper()
	var subtasks int64
	var kernel, busy, upload time.Duration
	for _, w := range st.PerWorker {
		subtasks += w.Subtasks
		kernel += w.KernelTime
		busy += w.Busy
		upload += w.Upload
		if w.Fetch != time.Duration(w.Subtasks)*3*time.Microsecond || w.Decode != time.Duration(w.Subtasks)*5*time.Microsecond {
			t.Errorf("%s: fetch %v, decode %v for %d subtasks", w.Worker, w.Fetch, w.Decode, w.Subtasks)
		}
		if w.Edges != 10*w.Subtasks && w.Edges <= 0 {
			t.Errorf("%s: %d edges", w.Worker, w.Edges)
		}
		var ds int64
		for _, d := range w.Devices {
			ds += d.Subtasks
		}
		if ds != w.Subtasks {
			t.Errorf("%s: devices hold %d subtasks of %d: %+v", w.Worker, ds, w.Subtasks, w.Devices)
		}
		if w.Wall < 0 || w.LastEnd.Before(w.FirstStart) {
			t.Errorf("%s: span %v .. %v, wall %v", w.Worker, w.FirstStart, w.LastEnd, w.Wall)
		}
	}
	var want time.Duration
	for i := range n {
		want += attemptTimes(i).KernelTime
	}
	if subtasks != int64(n) || kernel != want || busy != want+time.Duration(n)*time.Microsecond || upload != time.Duration(n)*time.Microsecond {
		t.Errorf("per worker: %d subtasks, kernel %v, busy %v, upload %v; want %d, %v, %v, %v\n%+v",
			subtasks, kernel, busy, upload, n, want, want+time.Duration(n)*time.Microsecond, time.Duration(n)*time.Microsecond, st.PerWorker)
	}
}

// A job's status sums each worker's accepted attempts, each subtask once
// though every result comes twice in batches; the sums and the
// coordinator's CPU time survive a restart, both for a job that ended
// before it and for one resumed across it (from the settled entries).
func TestServerPerWorkerStats(t *testing.T) {
	want, err := wholeTriangles()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ts := startServer(t, func(c *Config) { c.StateDir = dir })
	done := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 3})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, w := range []*statsWorker{{fakeWorker: fakeWorker{id: "s1"}, batch: 4}, {fakeWorker: fakeWorker{id: "s2"}, batch: 3}} {
		conn := dial(t, ts.addr)
		wg.Go(func() { w.run(ctx, conn) })
	}
	st := waitJob(t, ts.addr, done)
	cancel()
	wg.Wait()
	if st.State != api.JobDone || st.Triangles != want {
		t.Fatalf("status %+v, want done with %d", st, want)
	}
	checkStats(t, st, 27)
	if st.CoordinatorCPU <= 0 {
		t.Errorf("coordinator CPU %v", st.CoordinatorCPU)
	}

	// A second job: one worker answers 8 subtasks and leaves, then the
	// coordinator stops.
	resumed := submit(t, ts.addr, &pb.SubmitRequest{Graph: testGraph, Partitions: 3})
	w := &statsWorker{fakeWorker: fakeWorker{id: "s3"}, batch: 2, stopAfter: 8}
	w.run(context.Background(), dial(t, ts.addr))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if s, err := ts.s.Status(context.Background(), api.JobID(resumed)); err != nil || s.Done >= 4 { // the last batch may be lost with its stream
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no progress: %+v", s)
		}
	}
	ts.stop()

	ts2 := startServer(t, func(c *Config) { c.StateDir = dir })
	again, err := ts2.s.Status(context.Background(), api.JobID(done))
	if err != nil {
		t.Fatal(err)
	}
	if len(again.PerWorker) != len(st.PerWorker) || again.CoordinatorCPU != st.CoordinatorCPU {
		t.Fatalf("after a restart: %+v, cpu %v; before %+v, cpu %v", again.PerWorker, again.CoordinatorCPU, st.PerWorker, st.CoordinatorCPU)
	}
	for i, w := range again.PerWorker {
		b := st.PerWorker[i]
		if w.Worker != b.Worker || w.Subtasks != b.Subtasks || w.Busy != b.Busy || w.Edges != b.Edges || w.FirstStart.UnixMilli() != b.FirstStart.UnixMilli() {
			t.Errorf("after a restart %+v, before %+v", w, b)
		}
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	w4 := &statsWorker{fakeWorker: fakeWorker{id: "s4"}, batch: 5}
	conn := dial(t, ts2.addr)
	go w4.run(ctx, conn)
	st2 := waitJob(t, ts2.addr, resumed)
	if st2.State != api.JobDone || st2.Triangles != want {
		t.Fatalf("resumed job %+v, want done with %d", st2, want)
	}
	checkStats(t, st2, 27)
	var s3 int64
	for _, w := range st2.PerWorker {
		if w.Worker == "s3" {
			s3 = w.Subtasks
		}
	}
	if s3 < 1 {
		t.Errorf("the settled subtasks of s3 from before the restart are missing: %+v", st2.PerWorker)
	}
}
