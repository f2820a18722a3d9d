package cluster

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// EventKind says what happened to a member.
type EventKind int

const (
	// Joined: a member appeared (including the members already there when
	// this one joined).
	Joined EventKind = iota + 1
	// Updated: a member's metadata changed.
	Updated
	// Left: a member left gracefully.
	Left
	// Dead: failure detection declared a member dead.
	Dead
)

func (k EventKind) String() string {
	switch k {
	case Joined:
		return "joined"
	case Updated:
		return "updated"
	case Left:
		return "left"
	case Dead:
		return "dead"
	}
	return "unknown"
}

// Node is a member as the cluster sees it.
type Node struct {
	Name string
	// Addr is its gossip address (host:port).
	Addr string
	Meta Meta
}

// Event is one change of membership.
type Event struct {
	Kind EventKind
	Node Node
}

// Config configures one member.
type Config struct {
	// Name is the member's unique name, which is also its worker id.
	// Required.
	Name string
	// Bind is the gossip address (host:port, TCP and UDP); port 0 picks a
	// free one (see Member.Addr). "" means 127.0.0.1:7946.
	Bind string
	// Advertise is the address the others reach this member at, when it
	// differs from Bind (NAT, 0.0.0.0). "" means Bind.
	Advertise string
	// Meta is what this member tells the others about itself.
	Meta Meta
	// GossipKey encrypts and authenticates gossip (AES-GCM, 16, 24 or 32
	// bytes; see ParseGossipKey). A member with another key, or none, can
	// neither join nor be heard. nil sends gossip in the clear.
	GossipKey []byte
	// Local tunes failure detection for one host (loopback tests): a dead
	// member is noticed in about a second instead of several. false uses
	// memberlist's LAN defaults.
	Local bool
	// Events receives membership changes in order. Delivery never blocks
	// memberlist: events queue (without bound) until the receiver takes
	// them. nil drops them.
	Events chan<- Event
	// Logger receives memberlist's messages at debug level and refusals
	// at warn; nil discards them.
	Logger *slog.Logger
}

// DefaultConfig returns a configuration for one member on the default
// gossip port of loopback; the caller sets Name and Meta.
func DefaultConfig() Config {
	return Config{Bind: "127.0.0.1:7946"}
}

// ParseGossipKey decodes a --gossip-key value: the base64 of 16, 24 or 32
// random bytes (for example from `head -c 32 /dev/urandom | base64`).
// "" means no key.
func ParseGossipKey(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("cluster: gossip key is not base64: %w", err)
	}
	switch len(k) {
	case 16, 24, 32:
		return k, nil
	}
	return nil, fmt.Errorf("cluster: gossip key is %d bytes, want 16, 24 or 32", len(k))
}

// Member is this process's membership in the cluster.
type Member struct {
	ml     *memberlist.Memberlist
	logger *slog.Logger
	events *eventQueue

	mu   sync.Mutex
	meta Meta
}

// New starts a member listening on cfg.Bind; it is alone until Join.
func New(cfg Config) (*Member, error) {
	if cfg.Name == "" {
		return nil, errors.New("cluster: member name is empty")
	}
	if cfg.Bind == "" {
		cfg.Bind = DefaultConfig().Bind
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	logger = logger.With("component", "cluster")
	mc := memberlist.DefaultLANConfig()
	if cfg.Local {
		mc = memberlist.DefaultLocalConfig()
		mc.ProbeInterval = 200 * time.Millisecond
		mc.ProbeTimeout = 100 * time.Millisecond
		mc.SuspicionMult = 2
		mc.GossipInterval = 50 * time.Millisecond
	}
	mc.Name = cfg.Name
	// A member that died may come back under its name at another address
	// (a coordinator restarted on another host): take the new address as
	// soon as the old one is dead. memberlist's default (0) takes it only
	// from a member that left gracefully, so the others would refuse the
	// restarted member for good. Two live members of one name still
	// conflict.
	mc.DeadNodeReclaimTime = time.Millisecond
	host, port, err := splitHostPort("gossip address", cfg.Bind)
	if err != nil {
		return nil, err
	}
	mc.BindAddr, mc.BindPort = host, port
	if cfg.Advertise != "" {
		ah, ap, err := splitHostPort("advertise address", cfg.Advertise)
		if err != nil {
			return nil, err
		}
		mc.AdvertiseAddr, mc.AdvertisePort = ah, ap
	}
	if cfg.GossipKey != nil {
		if _, err := ParseGossipKey(base64.StdEncoding.EncodeToString(cfg.GossipKey)); err != nil {
			return nil, err
		}
		mc.SecretKey = cfg.GossipKey
		mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = true, true
	}
	mc.Logger = slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
	m := &Member{logger: logger, meta: cfg.Meta, events: newEventQueue(cfg.Events)}
	if _, err := cfg.Meta.encode(memberlist.MetaMaxSize); err != nil {
		return nil, err
	}
	mc.Delegate = (*delegate)(m)
	mc.Events = (*eventDelegate)(m)
	ml, err := memberlist.Create(mc)
	if err != nil {
		m.events.close()
		return nil, fmt.Errorf("cluster: gossip on %s: %w", cfg.Bind, err)
	}
	m.ml = ml
	return m, nil
}

func splitHostPort(what, addr string) (string, int, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("cluster: %s %q: %w", what, addr, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("cluster: %s %q: bad port", what, addr)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

// Addr returns the gossip address the member listens on (with the port
// chosen when Bind asked for port 0).
func (m *Member) Addr() string {
	n := m.ml.LocalNode()
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
}

// Join contacts the members at addrs (host:port) and returns how many
// answered. It fails when none did, which includes every member refusing
// this one's gossip key.
func (m *Member) Join(addrs []string) (int, error) {
	n, err := m.ml.Join(addrs)
	if err != nil {
		return n, fmt.Errorf("cluster: join %v: %w", addrs, err)
	}
	return n, nil
}

// Members returns the live members, this one included.
func (m *Member) Members() []Node {
	var out []Node
	for _, n := range m.ml.Members() {
		node, err := toNode(n)
		if err != nil {
			continue
		}
		out = append(out, node)
	}
	return out
}

// Find returns the first live member with role r that is not leaving.
func (m *Member) Find(r Role) (Node, bool) {
	for _, n := range m.Members() {
		if n.Meta.Role == r && !n.Meta.Leaving {
			return n, true
		}
	}
	return Node{}, false
}

// SetMeta changes this member's metadata and tells the others.
func (m *Member) SetMeta(meta Meta, timeout time.Duration) error {
	if _, err := meta.encode(memberlist.MetaMaxSize); err != nil {
		return err
	}
	m.mu.Lock()
	m.meta = meta
	m.mu.Unlock()
	return m.ml.UpdateNode(timeout)
}

// Leave tells the others this member is going (they see Left, not Dead)
// and waits up to timeout for the message to spread.
func (m *Member) Leave(timeout time.Duration) error {
	m.mu.Lock()
	meta := m.meta
	m.mu.Unlock()
	meta.Leaving = true
	if err := m.SetMeta(meta, timeout/2); err != nil {
		m.logger.Warn("could not announce leaving", "err", err)
	}
	return m.ml.Leave(timeout / 2)
}

// Shutdown stops gossip without a goodbye (the others will see Dead) and
// closes the event queue. It is safe to call more than once.
func (m *Member) Shutdown() error {
	err := m.ml.Shutdown()
	m.events.close()
	return err
}

func toNode(n *memberlist.Node) (Node, error) {
	meta, err := DecodeMeta(n.Meta)
	if err != nil {
		return Node{Name: n.Name, Addr: n.Address()}, fmt.Errorf("member %s at %s: %w", n.Name, n.Address(), err)
	}
	return Node{Name: n.Name, Addr: n.Address(), Meta: meta}, nil
}

// delegate gives memberlist this member's metadata; it carries no user
// messages or state.
type delegate Member

func (d *delegate) NodeMeta(limit int) []byte {
	d.mu.Lock()
	meta := d.meta
	d.mu.Unlock()
	b, err := meta.encode(limit)
	if err != nil {
		d.logger.Error("node metadata does not fit", "err", err)
		return nil
	}
	return b
}
func (d *delegate) NotifyMsg([]byte)                {}
func (d *delegate) GetBroadcasts(int, int) [][]byte { return nil }
func (d *delegate) LocalState(bool) []byte          { return nil }
func (d *delegate) MergeRemoteState([]byte, bool)   {}

// eventDelegate turns memberlist's callbacks into Events. A member whose
// metadata does not parse is logged and not reported.
type eventDelegate Member

func (e *eventDelegate) emit(kind EventKind, n *memberlist.Node) {
	node, err := toNode(n)
	if err != nil {
		e.logger.Warn("ignoring member with bad metadata", "err", err)
		return
	}
	e.events.push(Event{Kind: kind, Node: node})
}

func (e *eventDelegate) NotifyJoin(n *memberlist.Node)   { e.emit(Joined, n) }
func (e *eventDelegate) NotifyUpdate(n *memberlist.Node) { e.emit(Updated, n) }
func (e *eventDelegate) NotifyLeave(n *memberlist.Node) {
	if meta, err := DecodeMeta(n.Meta); err == nil && meta.Leaving {
		e.emit(Left, n)
		return
	}
	e.emit(Dead, n)
}
