// Package testnet builds small networks of Linux network namespaces for
// multi-process network-fault tests. A Lab is a router namespace and
// nodes, each node in a namespace of its own joined to the router by a
// veth pair; processes started on a node (Node.Command) see only that
// node's link, so a test can blackhole, partition, take down or impair
// (tc netem) links while the processes keep running untouched.
//
// Node i's link is 10.99.i.0/24: the node is 10.99.i.2, the router
// 10.99.i.1 and the node's default route. The addresses exist only inside
// the lab's namespaces, so labs never collide with each other or with the
// host's networks; only the namespace names are global, and they are
// tgnet-PID-N-ROLE (the test process's pid, a counter, the node's role).
// Namespaces are removed when the test ends (t.Cleanup, killing what
// still runs in them), when the test process gets SIGINT or SIGTERM, and
// otherwise by the next New, which first removes the namespaces of test
// processes that no longer run.
//
// New needs root and iproute2's ip. Where they are missing the test is
// skipped saying so, except in CI as root (CI=true or 1, uid 0), where it
// fails: there the network tests must run.
package testnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Prefix starts the name of every namespace this package makes.
const Prefix = "tgnet-"

// maxNodes bounds a lab's nodes: node i's addresses are 10.99.i.x.
const maxNodes = 250

var labSeq atomic.Int64

// Lab is a router namespace and the nodes linked to it.
type Lab struct {
	t      testing.TB
	id     string // Prefix + pid + "-" + seq
	router *Node

	mu    sync.Mutex
	nodes []*Node
	pref  int // the next ip rule priority
}

// Node is one namespace of a lab, linked to the router.
type Node struct {
	lab *Lab
	// Role is the name the test gave the node ("c", "w1"; "r" is the
	// router).
	Role string
	// NS is the namespace's name (ip netns).
	NS string
	// IP is the node's address on its link; the router's has none.
	IP string
	// Gateway is the router's address on the node's link.
	Gateway string
	link    string // the router's end of the node's veth pair
	index   int
}

// New makes a lab with its router, removed when the test ends. It skips
// t (or fails it in CI as root) when namespaces cannot be made here.
func New(t testing.TB) *Lab {
	t.Helper()
	if err := Available(); err != nil {
		if inCI() && os.Geteuid() == 0 {
			t.Fatalf("network namespaces: %v (CI runs as root, so the network-fault tests must run; install iproute2)", err)
		}
		t.Skipf("network namespaces unavailable: %v (these tests need root and iproute2's ip)", err)
	}
	watchSignals()
	l := &Lab{t: t, id: fmt.Sprintf("%s%d-%d", Prefix, os.Getpid(), labSeq.Add(1)), pref: 100}
	l.router = &Node{lab: l, Role: "r", NS: l.id + "-r"}
	t.Cleanup(l.remove)
	l.must("netns", "add", l.router.NS)
	l.must("-n", l.router.NS, "link", "set", "lo", "up")
	if err := l.router.enterAndDo(func() error {
		return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1\n"), 0o644)
	}); err != nil {
		t.Fatalf("testnet: enable forwarding in %s: %v", l.router.NS, err)
	}
	return l
}

// Add makes a node called role, linked to the router and reachable from
// every other node of the lab.
func (l *Lab) Add(role string) *Node {
	l.t.Helper()
	l.mu.Lock()
	i := len(l.nodes) + 1
	if i > maxNodes {
		l.mu.Unlock()
		l.t.Fatalf("testnet: more than %d nodes", maxNodes)
	}
	n := &Node{lab: l, Role: role, NS: l.id + "-" + role, index: i, link: "l" + strconv.Itoa(i),
		IP: fmt.Sprintf("10.99.%d.2", i), Gateway: fmt.Sprintf("10.99.%d.1", i)}
	l.nodes = append(l.nodes, n)
	l.mu.Unlock()
	r := l.router.NS
	l.must("netns", "add", n.NS)
	l.must("-n", n.NS, "link", "set", "lo", "up")
	// Both ends are made inside their namespaces: no interface ever
	// exists in the host's namespace, so names cannot collide.
	l.must("-n", r, "link", "add", n.link, "type", "veth", "peer", "name", "eth0", "netns", n.NS)
	l.must("-n", r, "addr", "add", n.Gateway+"/24", "dev", n.link)
	l.must("-n", n.NS, "addr", "add", n.IP+"/24", "dev", "eth0")
	l.must("-n", r, "link", "set", n.link, "up")
	l.must("-n", n.NS, "link", "set", "eth0", "up")
	l.must("-n", n.NS, "route", "add", "default", "via", n.Gateway)
	return n
}

// Router is the router namespace, for processes or sockets that sit
// between the nodes (a relay).
func (l *Lab) Router() *Node { return l.router }

// Blackhole makes the router drop, silently, every packet from or to n
// (no RST, no ICMP: what a dead host or a cut cable far away looks like)
// until heal is called. Processes on n see their own link up.
func (l *Lab) Blackhole(n *Node) (heal func()) {
	l.t.Helper()
	return l.rules([][]string{{"iif", n.link}, {"to", n.IP}})
}

// Partition drops, silently, every packet between a node of a and a node
// of b until heal is called; the nodes of each side still reach each
// other and any node in neither.
func (l *Lab) Partition(a, b []*Node) (heal func()) {
	l.t.Helper()
	var sel [][]string
	for _, x := range a {
		for _, y := range b {
			sel = append(sel, []string{"iif", x.link, "to", y.IP}, []string{"iif", y.link, "to", x.IP})
		}
	}
	return l.rules(sel)
}

// rules adds one blackhole routing rule in the router per selector and
// returns the function that deletes them (once).
func (l *Lab) rules(sels [][]string) func() {
	l.t.Helper()
	l.mu.Lock()
	prefs := make([]string, len(sels))
	for i := range sels {
		prefs[i] = strconv.Itoa(l.pref)
		l.pref++
	}
	l.mu.Unlock()
	for i, sel := range sels {
		args := append([]string{"-n", l.router.NS, "rule", "add", "pref", prefs[i]}, sel...)
		l.must(append(args, "blackhole")...)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			for _, p := range prefs {
				l.must("-n", l.router.NS, "rule", "del", "pref", p)
			}
		})
	}
}

// LinkDown takes the router's end of n's link down, as a pulled cable
// does: n loses carrier, and the router answers packets for n with "network
// unreachable". up brings the link back.
func (l *Lab) LinkDown(n *Node) (up func()) {
	l.t.Helper()
	l.must("-n", l.router.NS, "link", "set", n.link, "down")
	var once sync.Once
	return func() {
		once.Do(func() { l.must("-n", l.router.NS, "link", "set", n.link, "up") })
	}
}

// ErrNoNetem is returned by Netem where the kernel has no netem qdisc.
var ErrNoNetem = errors.New("the kernel has no tc netem qdisc")

// Netem impairs both directions of n's link with tc netem, spec being
// netem's arguments ("delay", "20ms", "5ms", "loss", "5%"). It returns
// ErrNoNetem (wrapped, with tc's words) where the kernel lacks netem.
func (l *Lab) Netem(n *Node, spec ...string) error {
	for _, end := range [][2]string{{l.router.NS, n.link}, {n.NS, "eth0"}} {
		args := append([]string{"-n", end[0], "qdisc", "replace", "dev", end[1], "root", "netem"}, spec...)
		out, err := exec.Command("tc", args...).CombinedOutput()
		if err != nil {
			msg := strings.TrimSpace(string(out))
			if strings.Contains(msg, "qdisc kind is unknown") {
				return fmt.Errorf("%w (tc: %s)", ErrNoNetem, msg)
			}
			return fmt.Errorf("tc %s: %v: %s", strings.Join(args, " "), err, msg)
		}
	}
	return nil
}

// NetemAvailable reports whether tc netem works here: nil, ErrNoNetem
// (wrapped, with tc's words) or why tc could not be asked.
func NetemAvailable() error {
	netemOnce.Do(func() { netemErr = probeNetem() })
	return netemErr
}

var (
	netemOnce sync.Once
	netemErr  error
)

func probeNetem() error {
	if err := Available(); err != nil {
		return err
	}
	if _, err := exec.LookPath("tc"); err != nil {
		return fmt.Errorf("no tc (iproute2): %w", err)
	}
	ns := fmt.Sprintf("%s%d-netem", Prefix, os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns add %s: %v: %s", ns, err, out)
	}
	defer exec.Command("ip", "netns", "del", ns).Run()
	out, err := exec.Command("tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if strings.Contains(msg, "qdisc kind is unknown") {
			return fmt.Errorf("%w (tc: %s)", ErrNoNetem, msg)
		}
		return fmt.Errorf("tc qdisc add netem: %v: %s", err, msg)
	}
	return nil
}

// Command returns a command that runs name inside n's namespace (through
// ip netns exec, which execs it: the process's pid is the command's).
func (n *Node) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.NS, name}, args...)...)
}

// Addr is the node's IP with port.
func (n *Node) Addr(port int) string { return net.JoinHostPort(n.IP, strconv.Itoa(port)) }

// Listen listens inside n's namespace.
func (n *Node) Listen(network, addr string) (net.Listener, error) {
	var l net.Listener
	err := n.enterAndDo(func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// Dial connects from inside n's namespace.
func (n *Node) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.enterAndDo(func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// HTTPClient is an HTTP client whose connections start in n's namespace.
func (n *Node) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: n.Dial, DisableKeepAlives: true}}
}

// must runs ip with args and fails the test when it fails.
func (l *Lab) must(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("testnet: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
}

// remove kills what still runs in the lab's namespaces and deletes them.
func (l *Lab) remove() {
	l.mu.Lock()
	nodes := append([]*Node{l.router}, l.nodes...)
	l.mu.Unlock()
	for _, n := range nodes {
		if err := removeNamespace(n.NS); err != nil {
			l.t.Errorf("testnet: %v", err)
		}
	}
}

// Available reports whether network namespaces can be made here.
func Available() error {
	availOnce.Do(func() { availErr = probe() })
	return availErr
}

var (
	availOnce sync.Once
	availErr  error
)

func probe() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("not root (uid %d)", os.Geteuid())
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("no ip (iproute2): %w", err)
	}
	if err := enterSupported(); err != nil {
		return err
	}
	// The first lab of this process sweeps what dead runs left behind.
	if err := Sweep(); err != nil {
		return err
	}
	ns := fmt.Sprintf("%s%d-probe", Prefix, os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns add %s: %v: %s", ns, err, strings.TrimSpace(string(out)))
	}
	if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns del %s: %v: %s", ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// inCI is testgraphs.InCI: CI is true or 1.
func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1"
}
