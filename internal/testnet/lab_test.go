package testnet

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// echo serves an echo on n at port until the test ends.
func echo(t *testing.T, n *Node, port int) {
	t.Helper()
	l, err := n.Listen("tcp", n.Addr(port))
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
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
}

// roundTrip writes msg on c and reads it back within d.
func roundTrip(c net.Conn, msg string, d time.Duration) error {
	c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != msg {
		return errors.New("echo returned " + strconv.Quote(string(buf)))
	}
	return nil
}

// timedOut says whether err is a timeout (not a refusal or an
// unreachable network).
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func dial(t *testing.T, from, to *Node, port int, d time.Duration) (net.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return from.Dial(ctx, "tcp", to.Addr(port))
}

// Nodes reach each other through the router, and a command run on a node
// sees that node's address.
func TestLabLinks(t *testing.T) {
	l := New(t)
	a, b := l.Add("a"), l.Add("b")
	echo(t, a, 9000)
	c, err := dial(t, b, a, 9000, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c, "hello", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	out, err := b.Command(context.Background(), "ip", "-4", "-o", "addr", "show", "dev", "eth0").CombinedOutput()
	if err != nil || !strings.Contains(string(out), b.IP+"/24") {
		t.Fatalf("ip addr on %s: %v: %s", b.NS, err, out)
	}
	if b.IP == a.IP || !strings.HasPrefix(l.id, Prefix+strconv.Itoa(os.Getpid())+"-") {
		t.Fatalf("addresses %s and %s, lab %s", a.IP, b.IP, l.id)
	}
}

// A blackholed node neither answers nor refuses: a dial times out, bytes
// on an open connection go unanswered, and once healed the held bytes
// arrive (TCP retransmits them) and new connections work.
func TestBlackholeIsSilent(t *testing.T) {
	l := New(t)
	a, b := l.Add("a"), l.Add("b")
	echo(t, b, 9000)
	c, err := dial(t, a, b, 9000, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	heal := l.Blackhole(b)
	if _, err := dial(t, a, b, 9000, 300*time.Millisecond); !timedOut(err) {
		t.Fatalf("dial into a blackhole: %v, want a timeout", err)
	}
	c.SetDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatalf("write into a blackhole: %v (the sender's stack should take it)", err)
	}
	var buf [4]byte
	if _, err := c.Read(buf[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read from a blackhole: %v, want a timeout", err)
	}
	heal()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, buf[:]); err != nil || string(buf[:]) != "held" {
		t.Fatalf("after healing: %q, %v; want the held bytes", buf, err)
	}
	c2, err := dial(t, a, b, 9000, 2*time.Second)
	if err != nil {
		t.Fatalf("dial after healing: %v", err)
	}
	c2.Close()
}

// A partition separates its two sides only.
func TestPartition(t *testing.T) {
	l := New(t)
	a, b, c := l.Add("a"), l.Add("b"), l.Add("c")
	for _, n := range []*Node{a, b, c} {
		echo(t, n, 9000)
	}
	heal := l.Partition([]*Node{a}, []*Node{b})
	for _, p := range [][2]*Node{{a, b}, {b, a}} {
		if _, err := dial(t, p[0], p[1], 9000, 300*time.Millisecond); !timedOut(err) {
			t.Errorf("%s -> %s across the partition: %v, want a timeout", p[0].Role, p[1].Role, err)
		}
	}
	for _, p := range [][2]*Node{{a, c}, {c, a}, {b, c}, {c, b}} {
		conn, err := dial(t, p[0], p[1], 9000, 2*time.Second)
		if err != nil {
			t.Errorf("%s -> %s beside the partition: %v", p[0].Role, p[1].Role, err)
			continue
		}
		conn.Close()
	}
	heal()
	heal() // healing twice is harmless
	conn, err := dial(t, a, b, 9000, 2*time.Second)
	if err != nil {
		t.Fatalf("a -> b after healing: %v", err)
	}
	conn.Close()
}

// A link taken down is refused at once (the router has no route), unlike
// a blackhole; brought up, it works again.
func TestLinkDown(t *testing.T) {
	l := New(t)
	a, b := l.Add("a"), l.Add("b")
	echo(t, b, 9000)
	up := l.LinkDown(b)
	start := time.Now()
	_, err := dial(t, a, b, 9000, 2*time.Second)
	if !errors.Is(err, syscall.ENETUNREACH) && !errors.Is(err, syscall.EHOSTUNREACH) {
		t.Fatalf("dial over a downed link: %v, want unreachable", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the unreachable answer took %v", d)
	}
	up()
	var conn net.Conn
	for range 20 { // the router's route comes back with the link
		if conn, err = dial(t, a, b, 9000, time.Second); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("dial after the link came up: %v", err)
	}
	conn.Close()
}

// netem delays both directions of a link where the kernel has it.
func TestNetem(t *testing.T) {
	if err := NetemAvailable(); err != nil {
		if errors.Is(err, ErrNoNetem) {
			t.Skipf("%v: Lab.Netem cannot run here", err)
		}
		New(t) // skips, or fails in CI, when namespaces are missing
		t.Fatal(err)
	}
	l := New(t)
	a, b := l.Add("a"), l.Add("b")
	echo(t, b, 9000)
	if err := l.Netem(b, "delay", "50ms"); err != nil {
		t.Fatal(err)
	}
	c, err := dial(t, a, b, 9000, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if err := roundTrip(c, "x", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// 50 ms each way on b's link.
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("round trip %v through 50 ms of netem delay each way", d)
	}
}

// waitInside waits until pid runs inside ns (ip netns exec enters it,
// then execs the command).
func waitInside(t *testing.T, ns string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		for _, f := range strings.Fields(string(out)) {
			if f == strconv.Itoa(pid) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not enter %s", pid, ns)
		}
	}
}

// Sweep removes the namespaces of test processes that are gone and kills
// what runs in them; those of live processes stay.
func TestSweep(t *testing.T) {
	New(t) // skips where namespaces cannot be made
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := Prefix + strconv.Itoa(dead.Process.Pid) + "-1-x"
	own := Prefix + strconv.Itoa(os.Getpid()) + "-sweep-x"
	for _, ns := range []string{stale, own} {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	left := exec.Command("ip", "netns", "exec", stale, "sleep", "60")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	waitInside(t, stale, left.Process.Pid)
	if err := Sweep(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(netnsDir + "/" + stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale namespace %s is still there (%v)", stale, err)
	}
	if _, err := os.Stat(netnsDir + "/" + own); err != nil {
		t.Errorf("Sweep removed the live process's namespace %s: %v", own, err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		left.Process.Kill()
		t.Errorf("the process left in %s was not killed", stale)
	}
}

// A lab's namespaces, and what runs in them, are gone when its test ends.
func TestCleanupRemoves(t *testing.T) {
	var names []string
	var sleeper *exec.Cmd
	exited := make(chan error, 1)
	t.Run("lab", func(t *testing.T) {
		l := New(t)
		n := l.Add("a")
		names = []string{l.Router().NS, n.NS}
		sleeper = n.Command(context.Background(), "sleep", "60")
		if err := sleeper.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { exited <- sleeper.Wait() }()
		waitInside(t, n.NS, sleeper.Process.Pid)
	})
	if sleeper == nil {
		t.Skip("the lab was skipped")
	}
	for _, ns := range names {
		if _, err := os.Stat(netnsDir + "/" + ns); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("namespace %s outlived its test (%v)", ns, err)
		}
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		sleeper.Process.Kill()
		t.Error("the process in the lab outlived its test")
	}
}
