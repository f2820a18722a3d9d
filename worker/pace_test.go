package worker

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

func TestPrefetchFor(t *testing.T) {
	const ms, us = time.Millisecond, time.Microsecond
	for _, c := range []struct {
		service, rtt time.Duration
		lo, hi, want int
	}{
		{0, ms, 2, 256, 2},            // nothing measured yet
		{ms, 0, 2, 256, 2},            // no round trip measured yet
		{10 * ms, ms, 2, 256, 2},      // subtasks far longer than a round trip
		{ms, 2 * ms, 2, 256, 4},       // twice the subtasks of a round trip
		{30 * us, ms, 2, 256, 67},     // ceil(2 ms / 30 µs)
		{us, 10 * ms, 2, 256, 256},    // bounded above
		{us, 10 * ms, 3, 3, 3},        // fixed
		{300 * us, ms, 0, 0, 0},       // none ahead
		{500 * us, 100 * us, 1, 8, 1}, // bounded below
	} {
		if got := prefetchFor(c.service, c.rtt, c.lo, c.hi); got != c.want {
			t.Errorf("prefetchFor(%v, %v, %d, %d) = %d, want %d", c.service, c.rtt, c.lo, c.hi, got, c.want)
		}
	}
}

// The pacer's round trip is the median of the latest pulls, so a pull
// that waited for work to appear does not make the worker hoard.
func TestPacerIgnoresAWaitForWork(t *testing.T) {
	p := newPacer(2, 256, 2)
	if got := p.capacity(); got != 2*3 {
		t.Fatalf("capacity before any measurement %d, want %d", got, 2*3)
	}
	p.subtask(100 * time.Microsecond)
	for range 10 {
		p.roundTrip(time.Millisecond)
	}
	p.roundTrip(30 * time.Second) // a pull that waited for the next job
	if got, want := p.capacity(), 2*(1+20); got != want {
		t.Errorf("capacity %d, want %d (2 slots, 20 ahead each)", got, want)
	}
}

func TestWindowRoom(t *testing.T) {
	w := newWindow(3)
	ctx := context.Background()
	if n := w.room(ctx, 0); n != 3 {
		t.Fatalf("room %d, want 3", n)
	}
	w.hold(3)
	w.setLimit(2) // shrunk below what is held
	if n := w.room(ctx, 2); n != 2 {
		t.Errorf("room with 2 asked for %d, want those 2", n)
	}
	got := make(chan int)
	go func() { got <- w.room(ctx, 0) }()
	select {
	case n := <-got:
		t.Fatalf("room %d with the window full", n)
	case <-time.After(20 * time.Millisecond):
	}
	w.release(2)
	if n := <-got; n != 1 {
		t.Errorf("room after releases %d, want 1", n)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	w.hold(1)
	if n := w.room(cctx, 0); n != 0 {
		t.Errorf("room after ctx ended %d", n)
	}
}

// roundTripConn answers each Pull after a round trip, with at most a few
// assignments per answer, and keeps what was asked for and not yet
// delivered as the gRPC client does: a Pull must never ask for fewer than
// that (the rest would arrive unheld, and lapse), nor get more than it
// asked for.
type roundTripConn struct {
	*fakeConn
	rtt     time.Duration
	perPull int
	mu      sync.Mutex
	pending int
	most    int // the largest Pull
	err     string
}

func (c *roundTripConn) Pull(ctx context.Context, n int) ([]api.Assignment, error) {
	c.mu.Lock()
	if n < c.pending && c.err == "" {
		c.err = "a pull asked for fewer than the assignments already asked for"
	}
	c.pending = max(c.pending, n)
	c.most = max(c.most, n)
	give := min(c.pending, c.perPull)
	c.mu.Unlock()
	time.Sleep(c.rtt)
	as, err := c.fakeConn.Pull(ctx, give)
	c.mu.Lock()
	c.pending -= len(as)
	c.mu.Unlock()
	return as, err
}

// Behind a round trip far longer than a subtask, a worker keeps more
// assignments ahead than its least prefetch, within its bound, and the
// count stays exact; with the prefetch fixed it keeps no more. Subtasks
// take 1 ms at least, so that the worker pulls again while it still holds
// some (a pull made holding nothing is not a round trip the pacer may
// measure) and a round trip of 10 ms asks for about 20 ahead.
func TestRunPrefetchFollowsRoundTrip(t *testing.T) {
	fwd := testForward(t, 9, 5)
	want := referenceCount(t, fwd)
	part, err := partition.Split(fwd, storage.SchemeHash, 6, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, fixed := range []bool{false, true} {
		as := assignments("j", "", part.Subtasks())
		conn := &roundTripConn{fakeConn: newFakeConn(as), rtt: 10 * time.Millisecond, perPull: 5}
		slots := cpuSlots(1, "merge")
		merge, err := slots[0].NewCounter("")
		if err != nil {
			t.Fatal(err)
		}
		slots[0].NewCounter = func(string) (kernels.Counter, error) { return slowCounter{merge, time.Millisecond}, nil }
		cfg := testConfig(t, conn, slots, PartitionSource{Part: part})
		cfg.Prefetch, cfg.MaxPrefetch = 2, 64
		if fixed {
			cfg.MaxPrefetch = 2
		}
		runWorker(t, cfg)
		if got := sumResults(t, conn.check(t, as)); got != want {
			t.Fatalf("fixed %v: worker counted %d, whole graph %d", fixed, got, want)
		}
		switch {
		case conn.err != "":
			t.Errorf("fixed %v: %s", fixed, conn.err)
		case fixed && conn.most > 3:
			t.Errorf("fixed prefetch 2: a pull asked for %d, more than 1 + 2", conn.most)
		case !fixed && (conn.most <= 3 || conn.most > 1+64):
			t.Errorf("adaptive prefetch: the largest pull asked for %d, want more than 3 and at most 65", conn.most)
		}
	}
}

// waitFirstConn answers its first Pull only after wait, as a coordinator
// with no job yet answers a fresh worker, and every later one at once;
// it records what each Pull asked for.
type waitFirstConn struct {
	*fakeConn
	wait  time.Duration
	mu    sync.Mutex
	asked []int
}

func (c *waitFirstConn) Pull(ctx context.Context, n int) ([]api.Assignment, error) {
	c.mu.Lock()
	c.asked = append(c.asked, n)
	first := len(c.asked) == 1
	c.mu.Unlock()
	if first {
		time.Sleep(c.wait)
	}
	return c.fakeConn.Pull(ctx, n)
}

// A fresh worker's first pull, which waits for the first job, is not a
// round trip: the worker's later pulls follow the pulls answered at once,
// and never ask for the most it may hold (which took nearly all of a
// small first job from the other workers).
func TestRunFirstPullWaitIsNoRoundTrip(t *testing.T) {
	fwd := testForward(t, 9, 5)
	want := referenceCount(t, fwd)
	part, err := partition.Split(fwd, storage.SchemeHash, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	as := assignments("j", "", part.Subtasks())
	conn := &waitFirstConn{fakeConn: newFakeConn(as), wait: 200 * time.Millisecond}
	slots := cpuSlots(1, "merge")
	merge, err := slots[0].NewCounter("")
	if err != nil {
		t.Fatal(err)
	}
	// Subtasks of 2 ms at least: a pull answered at once would have to
	// take 16 ms for the worker to want 16 ahead.
	slots[0].NewCounter = func(string) (kernels.Counter, error) { return slowCounter{merge, 2 * time.Millisecond}, nil }
	cfg := testConfig(t, conn, slots, PartitionSource{Part: part})
	cfg.Prefetch, cfg.MaxPrefetch = 2, 64
	runWorker(t, cfg)
	if got := sumResults(t, conn.check(t, as)); got != want {
		t.Fatalf("worker counted %d, whole graph %d", got, want)
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	// Taken as a round trip, the wait made the third pull ask for the
	// window's most (1 + 64) less what was held.
	if len(conn.asked) < 3 || conn.asked[0] != 3 || slices.Max(conn.asked[1:]) > 16 {
		t.Fatalf("pulls asked for %v; want 3 (one and two ahead), then never more than 16 of the most 65", conn.asked)
	}
}

// slowCounter counts with its Counter and then waits d.
type slowCounter struct {
	kernels.Counter
	d time.Duration
}

func (c slowCounter) Count(ctx context.Context, t kernels.Subtask) (kernels.Result, error) {
	r, err := c.Counter.Count(ctx, t)
	time.Sleep(c.d)
	return r, err
}
