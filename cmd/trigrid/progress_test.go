package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
)

// syncBuffer is a bytes.Buffer safe for the ticker's writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProgressPhaseWithoutUpdates: a phase that reports nothing (ordering,
// splitting) still shows on stderr while it runs, and stops showing when
// it ends.
func TestProgressPhaseWithoutUpdates(t *testing.T) {
	var buf syncBuffer
	p := newProgress(&buf, progressLog)
	p.interval = 20 * time.Millisecond
	p.Start("orient", "", -1)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(buf.String(), "orient: running for"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.Done()
			t.Fatalf("no progress for a silent phase within 30 s: %q", buf.String())
		}
	}
	p.Done()
	out := buf.String()
	time.Sleep(60 * time.Millisecond)
	if buf.String() != out {
		t.Fatalf("progress went on after Done: %q", buf.String()[len(out):])
	}
}

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time       { return c.t }
func (c *fakeClock) step(d time.Duration) { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock            { return &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)} }
func secs(f float64) time.Duration        { return time.Duration(f * float64(time.Second)) }
func near(got, want float64) bool         { return got > want*0.999 && got < want*1.001 }

// The rate is the amount done over the last rateWindow, measured up to
// now: none before minRateSpan, the steady pace while it holds, the new
// pace once the window has passed a change, and a falling one while a
// phase stalls.
func TestRateMeter(t *testing.T) {
	c := newFakeClock()
	var m rateMeter
	m.reset(c.now())
	c.step(500 * time.Millisecond)
	m.add(c.now(), 50)
	if _, ok := m.rate(c.now()); ok {
		t.Fatal("a rate after half a second")
	}
	// 100 units a second for 20 s, updated every 10 ms.
	for range 2000 {
		c.step(10 * time.Millisecond)
		m.add(c.now(), m.latest.done+1)
	}
	if r, ok := m.rate(c.now()); !ok || !near(r, 100) {
		t.Fatalf("steady rate %v %v, want 100", r, ok)
	}
	if n := len(m.samples); n > int(rateWindow/rateSpacing)+2 {
		t.Fatalf("%d samples kept", n)
	}
	// Then 10 a second: after a full window the rate is the new pace.
	done := m.latest.done
	for range 120 {
		c.step(100 * time.Millisecond)
		done++
		m.add(c.now(), done)
	}
	if r, ok := m.rate(c.now()); !ok || r < 9.5 || r > 10.5 {
		t.Fatalf("rate after slowing down %v %v, want about 10", r, ok)
	}
	// A stall: nothing new for 5 s halves the rate over the window.
	r0, _ := m.rate(c.now())
	c.step(5 * time.Second)
	if r, ok := m.rate(c.now()); !ok || r >= r0*0.7 {
		t.Fatalf("rate while stalled %v %v, was %v", r, ok, r0)
	}
	// Going backwards (reopened subtasks) shows no rate rather than a
	// negative one.
	m.reset(c.now())
	c.step(2 * time.Second)
	m.add(c.now(), 10)
	c.step(11 * time.Second)
	m.add(c.now(), 5)
	c.step(11 * time.Second)
	m.add(c.now(), 5)
	if r, ok := m.rate(c.now()); ok {
		t.Fatalf("rate %v going backwards", r)
	}
}

func TestTimeLeft(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		rate        float64
		want        time.Duration
		ok          bool
	}{
		{0, 100, 10, 10 * time.Second, true},
		{50, 100, 10, 5 * time.Second, true},
		{99, 100, 3, time.Second, true}, // rounded up: never "0s" before the end
		{100, 100, 10, 0, true},
		{120, 100, 10, 0, true},
		{0, -1, 10, 0, false}, // no total
		{0, 100, 0, 0, false}, // no rate
		{0, 1 << 62, 1e-3, 0, false},
	} {
		got, ok := timeLeft(c.done, c.total, c.rate)
		if got != c.want || ok != c.ok {
			t.Errorf("timeLeft(%d, %d, %v) = %v %v, want %v %v", c.done, c.total, c.rate, got, ok, c.want, c.ok)
		}
	}
	for d, want := range map[time.Duration]string{
		0: "0s", 45 * time.Second: "45s", secs(59.6): "1m00s", 245 * time.Second: "4m05s",
		2*time.Hour + 3*time.Minute + 20*time.Second: "2h03m", 49 * time.Hour: "49h00m",
	} {
		if got := durationText(d); got != want {
			t.Errorf("durationText(%v) = %q, want %q", d, got, want)
		}
	}
}

// Off a terminal, progress is a log line every interval with the amount,
// the share, the rate and the time left; Note writes a line of its own.
func TestProgressLogLines(t *testing.T) {
	var buf syncBuffer
	c := newFakeClock()
	p := newProgress(&buf, progressLog)
	p.clock = c.now
	p.interval = 4 * time.Second
	p.Start("count", "edges", 1000)
	for i := 1; i < 400; i++ {
		c.step(10 * time.Millisecond) // 100 edges a second
		p.Update(int64(i), 0)
	}
	if out := buf.String(); out != "" {
		t.Fatalf("a line before the interval: %q", out)
	}
	c.step(10 * time.Millisecond)
	p.Update(400, 0)
	want := "count: 400/1000 edges (40.0%) after 4s, 100/s, about 6s left\n"
	if got := buf.String(); got != want {
		t.Fatalf("log line %q, want %q", got, want)
	}
	c.step(10 * time.Millisecond)
	p.Update(401, 0)
	c.step(10 * time.Millisecond)
	p.Update(402, 0)
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Fatalf("%d lines within one interval", n)
	}
	p.SetDetail(" done, 4 running")
	p.Note("job 1: running")
	c.step(4 * time.Second)
	p.Update(403, 0)
	if got := buf.String(); !strings.HasSuffix(got, "\njob 1: running\ncount: 403/1000 edges done, 4 running (40.3%) after 8s, 50/s, about 12s left\n") {
		t.Fatalf("detail and note: %q", got)
	}
	// At the end, no time left is shown.
	buf = syncBuffer{}
	c.step(4 * time.Second)
	p.Update(1000, 0)
	if got := buf.String(); got != "count: 1000/1000 edges done, 4 running (100.0%) after 12s, 80/s\n" {
		t.Fatalf("last line %q", got)
	}
	p.Done()
	// Bytes read at a MiB a second, without a total: no share, no time left.
	buf = syncBuffer{}
	p = newProgress(&buf, progressLog)
	p.clock = c.now
	p.interval = 3 * time.Second
	p.Start("read", "bytes", -1)
	for i := 1; i <= 30; i++ {
		c.step(100 * time.Millisecond)
		p.Update(int64(i)<<20/10, -1)
	}
	p.Done()
	if got := buf.String(); got != "read: 3.0 MiB after 3s, 1.0 MiB/s\n" {
		t.Fatalf("bytes line %q", got)
	}
}

// On a terminal the bar fits the width, shows the share, amount, rate
// and time left, and shrinks its bar before dropping figures.
func TestProgressBarText(t *testing.T) {
	c := newFakeClock()
	var buf syncBuffer
	p := newProgress(&buf, progressBar)
	p.clock = c.now
	p.Start("count", "subtasks", 64)
	for i := 1; i <= 16; i++ {
		c.step(250 * time.Millisecond) // 4 a second
		p.Update(int64(i), 64)
	}
	p.mu.Lock()
	line := p.barTextLocked(c.now())
	p.width = 50
	narrow := p.barTextLocked(c.now())
	p.width = 80
	p.mu.Unlock()
	p.Note("job 1: running")
	if out := buf.String(); !strings.HasSuffix(out, "\r"+strings.Repeat(" ", 79)+"\rjob 1: running\n") {
		t.Fatalf("a note over the bar: %q", out)
	}
	c.step(250 * time.Millisecond)
	p.Update(17, 64)
	p.Done()
	if len(line) != 79 || !strings.HasPrefix(line, "count      [=======                       ]  25.0% 16/64 4.0/s 12s left") {
		t.Fatalf("bar %q (%d columns)", line, len(line))
	}
	if len(narrow) != 49 || !strings.Contains(narrow, "]  25.0% 16/64 4.0/s 12s left") {
		t.Fatalf("narrow bar %q (%d columns)", narrow, len(narrow))
	}
	if out := buf.String(); !strings.HasSuffix(out, "\r"+strings.Repeat(" ", 79)+"\r") {
		t.Fatalf("the bar was not cleared: %q", out)
	}
}

// submit --wait off a terminal: a line at each change of the job's
// state, and between them log lines of its subtasks with rate and time
// left.
func TestJobWatchLogLines(t *testing.T) {
	var buf syncBuffer
	c := newFakeClock()
	p := newProgress(&buf, progressLog)
	p.clock = c.now
	p.interval = 5 * time.Second
	w := jobWatch{job: "j1", prog: p}
	w.show(api.JobStatus{State: api.JobPreparing})
	w.show(api.JobStatus{State: api.JobQueued, Subtasks: 64, Queued: 64})
	for done := int64(0); done <= 20; done++ {
		c.step(500 * time.Millisecond) // 2 subtasks a second
		w.show(api.JobStatus{State: api.JobRunning, Subtasks: 64, Done: done, Running: 4})
	}
	p.Done()
	want := []string{
		"job j1: preparing",
		"job j1: queued, 0/64 subtasks done, 0 running",
		"job j1: running, 0/64 subtasks done, 4 running",
		"job j1: 9/64 subtasks done, 4 running (14.1%) after 5s, 1.8/s, about 31s left",
		"job j1: 19/64 subtasks done, 4 running (29.7%) after 10s, 1.9/s, about 24s left",
	}
	if got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
