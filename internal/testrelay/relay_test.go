package testrelay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// upstream is a loopback server that runs serve on each connection.
func upstream(t *testing.T, serve func(net.Conn)) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return l
}

func echoConn(c net.Conn) {
	defer c.Close()
	io.Copy(c, c)
}

// start starts a relay in front of up.
func start(t *testing.T, up net.Listener, imp Impairment) *Relay {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Listener = l
	cfg.Dial = func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", up.Addr().String())
	}
	cfg.Impairment = imp
	cfg.Seed = 1
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func connect(t *testing.T, r *Relay) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", r.Addr().String(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// echoTime writes msg and reads it back, returning how long it took.
func echoTime(t *testing.T, c net.Conn, msg string) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	if string(buf) != msg {
		t.Fatalf("echo %q, sent %q", buf, msg)
	}
	return time.Since(start)
}

// A megabyte each way through delay, jitter and loss arrives intact and
// in order, and is counted.
func TestForwardsIntact(t *testing.T) {
	r := start(t, upstream(t, echoConn), Impairment{Delay: time.Millisecond, Jitter: 3 * time.Millisecond,
		Loss: 0.1, RetransmitAfter: 10 * time.Millisecond})
	c := connect(t, r)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	data := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(2, 3))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	sent := make(chan error, 1)
	go func() {
		for off := 0; off < len(data); {
			n := min(len(data)-off, 1+rng.IntN(40000))
			if _, err := c.Write(data[off : off+n]); err != nil {
				sent <- err
				return
			}
			off += n
		}
		sent <- c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("got %d bytes back, not the %d sent", len(got), len(data))
	}
	st := r.Stats()
	if st.Up != int64(len(data)) || st.Down != int64(len(data)) || st.Accepted != 1 {
		t.Errorf("stats %+v, want %d bytes each way over 1 connection", st, len(data))
	}
	if st.Lost == 0 {
		t.Errorf("no chunk was lost at 10%% loss: %+v", st)
	}
}

// The delay applies each way: an echo takes at least twice it.
func TestDelay(t *testing.T) {
	const delay = 40 * time.Millisecond
	r := start(t, upstream(t, echoConn), Impairment{Delay: delay})
	c := connect(t, r)
	if d := echoTime(t, c, "ping"); d < 2*delay {
		t.Fatalf("echo in %v through %v each way", d, delay)
	}
	r.Set(Impairment{})
	echoTime(t, c, "pong") // lifted: the connection goes on
}

// A stall forwards nothing for its length; then traffic resumes.
func TestStall(t *testing.T) {
	const stall = 300 * time.Millisecond
	r := start(t, upstream(t, echoConn), Impairment{})
	c := connect(t, r)
	echoTime(t, c, "before")
	// The clock starts before the stall does, so the echo's time cannot
	// fall short of the stall however late this goroutine runs after it.
	start := time.Now()
	r.Stall(stall)
	echoTime(t, c, "during")
	if d := time.Since(start); d < stall-5*time.Millisecond {
		t.Fatalf("echo in %v during a %v stall", d, stall)
	}
	if st := r.Stats(); st.Stalls != 1 {
		t.Errorf("stats %+v, want 1 stall", st)
	}
}

// A hold keeps the bytes, silently, until it is lifted: no reset, no
// close, and then they arrive.
func TestHold(t *testing.T) {
	r := start(t, upstream(t, echoConn), Impairment{})
	c := connect(t, r)
	echoTime(t, c, "before")
	r.Set(Impairment{Hold: true})
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var buf [4]byte
	if _, err := c.Read(buf[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read during a hold: %v, want nothing", err)
	}
	r.Set(Impairment{})
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(c, buf[:]); err != nil || string(buf[:]) != "held" {
		t.Fatalf("after the hold: %q, %v", buf, err)
	}
}

// Reset gives both ends an RST; new connections still work.
func TestReset(t *testing.T) {
	upErr := make(chan error, 1)
	r := start(t, upstream(t, func(c net.Conn) {
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, c)
		upErr <- err
	}), Impairment{})
	c := connect(t, r)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	waitStat(t, r, func(s Stats) bool { return s.Up == 1 })
	if n := r.Reset(); n != 1 {
		t.Fatalf("Reset reset %d connections, want 1", n)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("client read after a reset: %v, want connection reset", err)
	}
	if err := <-upErr; !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("upstream read after a reset: %v, want connection reset", err)
	}
	if st := r.Stats(); st.Resets != 1 {
		t.Errorf("stats %+v, want 1 reset", st)
	}
	c2 := connect(t, r)
	if _, err := c2.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	waitStat(t, r, func(s Stats) bool { return s.Up == 2 && s.Accepted == 2 })
}

// A half-close passes through: the server sees the end of the request
// and its answer still comes back.
func TestHalfClose(t *testing.T) {
	r := start(t, upstream(t, func(c net.Conn) {
		defer c.Close()
		req, _ := io.ReadAll(c)
		c.Write(bytes.ToUpper(req))
	}), Impairment{Delay: 5 * time.Millisecond})
	c := connect(t, r)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	c.Write([]byte("request"))
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "REQUEST" {
		t.Fatalf("answer %q, %v", got, err)
	}
}

// When upstream cannot be reached, the accepted connection is closed.
func TestUpstreamDown(t *testing.T) {
	up := upstream(t, echoConn)
	up.Close()
	r := start(t, up, Impairment{})
	c := connect(t, r)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatalf("read %d bytes from a relay without upstream", n)
	}
}

// Close ends every connection and stops accepting.
func TestClose(t *testing.T) {
	r := start(t, upstream(t, echoConn), Impairment{Hold: true})
	c := connect(t, r)
	c.Write([]byte("held"))
	waitStat(t, r, func(s Stats) bool { return s.Accepted == 1 })
	done := make(chan error, 1)
	go func() { done <- r.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return with a connection held")
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection outlived Close")
	}
	if c2, err := net.DialTimeout("tcp", r.Addr().String(), time.Second); err == nil {
		c2.Close()
		t.Fatal("a closed relay accepted a connection")
	}
}

func waitStat(t *testing.T, r *Relay, cond func(Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond(r.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("the relay's counts %+v did not get there", r.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
