package worker

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

func streamTask(job string, i, j, k int) *task {
	return &task{a: api.Assignment{Ref: api.SubtaskRef{Job: api.JobID(job), Index: i*100 + j*10 + k}, I: i, J: j, K: k}}
}

// Subtasks of one (I, J) group go to one slot while the streams stay
// within one of each other; a slot takes its own stream in order.
func TestStreamsKeepGroupsTogether(t *testing.T) {
	s := newStreams(2)
	var got [2][]*task
	for _, ij := range [][2]int{{0, 0}, {0, 1}} {
		for k := range 4 {
			tk := streamTask("j", ij[0], ij[1], k)
			x := s.push(tk)
			got[x] = append(got[x], tk)
		}
	}
	for x := range got {
		if n := len(got[x]); n != 4 {
			t.Fatalf("slot %d got %d of 8 subtasks, want 4", x, n)
		}
	}
	// Groups split between slots only as balance asks: each slot's
	// subtasks share at least IJ with the one before in most places.
	for x, ts := range got {
		same := 0
		for n := 1; n < len(ts); n++ {
			if ts[n].a.I == ts[n-1].a.I && ts[n].a.J == ts[n-1].a.J {
				same++
			}
		}
		if same < 2 {
			t.Errorf("slot %d: only %d of 3 neighbours share their (I, J)", x, same)
		}
	}
	for x := range got {
		for n, want := range got[x] {
			tk, ok := s.take(x)
			if !ok || tk != want {
				t.Fatalf("slot %d, take %d: got %v, want its stream in order", x, n, tk)
			}
		}
	}
}

// A slot whose stream is empty takes the last of the longest other
// stream; once the streams are closed and empty, take says so, and a
// waiting take wakes.
func TestStreamsStealAndClose(t *testing.T) {
	s := newStreams(3)
	for k := range 5 {
		s.queues[0] = append(s.queues[0], streamTask("j", 0, 0, k))
	}
	s.queues[1] = append(s.queues[1], streamTask("j", 1, 1, 0))
	tk, ok := s.take(2)
	if !ok || tk.a.K != 4 || tk.a.I != 0 {
		t.Fatalf("an idle slot took %+v, want the longest stream's last", tk)
	}
	if p := s.pending(0, 10); len(p) != 4 {
		t.Fatalf("the stream stolen from holds %d, want 4", len(p))
	}
	if p := s.pending(0, 3); len(p) != 3 || p[0].a.K != 0 || p[2].a.K != 2 {
		t.Fatalf("the first 3 pending: %d of them, want 3 from the stream's head", len(p))
	}
	for range 4 {
		if _, ok := s.take(0); !ok {
			t.Fatal("slot 0 lost its own stream")
		}
	}
	if tk, ok := s.take(0); !ok || tk.a.I != 1 {
		t.Fatalf("slot 0 took %+v, want slot 1's last", tk)
	}
	done := make(chan bool)
	go func() {
		_, ok := s.take(1)
		done <- ok
	}()
	select {
	case <-done:
		t.Fatal("take returned with every stream empty and open")
	case <-time.After(20 * time.Millisecond):
	}
	s.close()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("take returned a subtask after close with every stream empty")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("close did not wake a waiting take")
	}
}

// seqCounter is aheadCounter with a clock shared between counters: the
// order in which every subtask was counted, whichever counter counted it.
type seqCounter struct {
	clock *atomic.Int64
	delay time.Duration
	// The counter's first count waits until every counter has begun one
	// (a slot whose stream runs dry takes another's work, so a slot whose
	// goroutine starts late might otherwise count nothing).
	first sync.Once
	start *firstCountBarrier

	mu    sync.Mutex
	seen  []stamped
	ahead [][][3]*graph.CSR
}

// stamped is one count: its blocks and when it began and ended on the
// shared clock.
type stamped struct {
	blocks     [3]*graph.CSR
	began, end int64
}

func (c *seqCounter) Name() string { return "seq" }
func (c *seqCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	if c.start != nil {
		c.first.Do(c.start.arrive)
	}
	began := c.clock.Add(1)
	time.Sleep(c.delay)
	var next [][3]*graph.CSR
	for _, a := range t.Ahead {
		next = append(next, [3]*graph.CSR{a.IJ, a.IK, a.JK})
	}
	c.mu.Lock()
	c.seen = append(c.seen, stamped{[3]*graph.CSR{t.IJ, t.IK, t.JK}, began, c.clock.Add(1)})
	c.ahead = append(c.ahead, next)
	c.mu.Unlock()
	n, err := kernels.Reference(kernels.Subtask{IJ: t.IJ, IK: t.IK, JK: t.JK, Clip: t.Clip, TailOffset: t.TailOffset})
	return kernels.Result{Triangles: n}, err
}

// A worker with several slots gives each a stream of its own: a counter is
// told ahead only subtasks no slot had begun when its slot was last free
// (the list is made then), in the order it then counts those it keeps
// (another slot may take some when its own stream runs dry), every device
// counts, and the total is exact.
func TestRunSeveralSlotsHandTheirOwnStreamAhead(t *testing.T) {
	fwd := testForward(t, 9, 4)
	part, err := partition.Split(fwd, storage.SchemeHash, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := referenceCount(t, fwd)
	for try := 0; ; try++ {
		as := assignments("j", "", part.Subtasks())
		conn := newFakeConn(as)
		var clock atomic.Int64
		start := newFirstCountBarrier(3)
		cs := []*seqCounter{{clock: &clock, delay: time.Millisecond, start: start}, {clock: &clock, delay: time.Millisecond, start: start},
			{clock: &clock, delay: time.Millisecond, start: start}}
		slots := cpuSlots(len(cs), "merge")
		for i := range slots {
			slots[i].Device.Kind = "gpu" // only a device's counter is told what comes next
			slots[i].NewCounter = func(string) (kernels.Counter, error) { return cs[i], nil }
		}
		cfg := testConfig(t, conn, slots, PartitionSource{Part: part})
		cfg.Prefetch = 4
		runWorker(t, cfg)
		if got := sumResults(t, conn.check(t, as)); got != want {
			t.Fatalf("worker counted %d, whole graph %d", got, want)
		}
		began := map[[3]*graph.CSR]int64{}
		for _, c := range cs {
			for _, s := range c.seen {
				began[s.blocks] = s.began
			}
		}
		told := 0
		for i, c := range cs {
			if len(c.seen) == 0 {
				t.Fatalf("slot %d counted nothing", i)
			}
			for x, next := range c.ahead {
				free := int64(0) // when the slot was last free, at the latest
				if x > 0 {
					free = c.seen[x-1].end
				}
				last := c.seen[x].began
				for _, b := range next {
					at, ok := began[b]
					if !ok || at <= free {
						t.Fatalf("slot %d, subtask %d: told ahead of a subtask begun before (or never counted)", i, x)
					}
					if own := ownAt(c, b); own > 0 {
						if own < last {
							t.Fatalf("slot %d, subtask %d: its own subtasks ahead out of the order it counts them", i, x)
						}
						last = own
					}
					told++
				}
			}
		}
		if told > 0 {
			return
		}
		if try == 4 {
			t.Fatal("in five runs no counter was told what comes next")
		}
	}
}

// ownAt is when c began the subtask of blocks b, 0 if it did not count it.
func ownAt(c *seqCounter, b [3]*graph.CSR) int64 {
	for _, s := range c.seen {
		if s.blocks == b {
			return s.began
		}
	}
	return 0
}
