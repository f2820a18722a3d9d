package cluster

import (
	"encoding/base64"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
)

type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func newTestMember(t *testing.T, name string, key []byte, events chan Event, role Role) *Member {
	t.Helper()
	m, err := New(Config{
		Name: name, Bind: "127.0.0.1:0", Local: true, GossipKey: key, Events: events, Logger: testLogger(t),
		Meta: Meta{Role: role, GRPC: "127.0.0.1:9", Devices: MetaDevices([]api.Device{{Kind: "gpu", Memory: 80 << 30}})},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return m
}

// eventLog keeps every event seen, in whatever order they came.
type eventLog struct {
	ch   <-chan Event
	seen []Event
}

// wait returns the first event of kind for node name, failing after a
// bounded wait.
func (l *eventLog) wait(t *testing.T, kind EventKind, name string) Event {
	t.Helper()
	return l.waitAny(t, []EventKind{kind}, name)
}

// waitAny returns the first event of any of kinds for node name.
func (l *eventLog) waitAny(t *testing.T, kinds []EventKind, name string) Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		for _, e := range l.seen {
			if slices.Contains(kinds, e.Kind) && e.Node.Name == name {
				return e
			}
		}
		select {
		case e := <-l.ch:
			l.seen = append(l.seen, e)
		case <-deadline:
			t.Fatalf("no %v event for %s within 30 s; saw %+v", kinds, name, l.seen)
		}
	}
}

func TestMembershipEvents(t *testing.T) {
	events := make(chan Event, 64)
	key := make([]byte, 32)
	coord := newTestMember(t, "coord", key, events, RoleCoordinator)
	w1 := newTestMember(t, "w1", key, nil, RoleWorker)
	w2 := newTestMember(t, "w2", key, nil, RoleWorker)
	for _, w := range []*Member{w1, w2} {
		if n, err := w.Join([]string{coord.Addr()}); err != nil || n != 1 {
			t.Fatalf("join: %d, %v", n, err)
		}
	}
	log := &eventLog{ch: events}
	e := log.wait(t, Joined, "w1")
	if e.Node.Meta.Role != RoleWorker || e.Node.Meta.GRPC != "127.0.0.1:9" || len(e.Node.Meta.Devices) != 1 || e.Node.Meta.Devices[0].Memory != 80<<30 {
		t.Errorf("w1 joined with meta %+v", e.Node.Meta)
	}
	log.wait(t, Joined, "w2")
	if c, ok := w1.Find(RoleCoordinator); !ok || c.Name != "coord" {
		t.Errorf("w1 finds coordinator %+v, %v", c, ok)
	}
	if err := w1.Leave(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	// A node that leaves is reported as left; on a loaded machine the
	// failure detector may have declared it dead first. Either removes it,
	// and the coordinator treats both alike.
	log.waitAny(t, []EventKind{Left, Dead}, "w1")
	w2.Shutdown() // no goodbye: failure detection must notice
	log.wait(t, Dead, "w2")
	// Shutdown is idempotent.
	for range 3 {
		w2.Shutdown()
	}
}

func TestGossipKeyMismatch(t *testing.T) {
	k1, k2 := make([]byte, 32), make([]byte, 32)
	k2[0] = 1
	coord := newTestMember(t, "coord", k1, nil, RoleCoordinator)
	wrong := newTestMember(t, "wrong", k2, nil, RoleWorker)
	if _, err := wrong.Join([]string{coord.Addr()}); err == nil {
		t.Error("a member with another gossip key joined")
	}
	plain := newTestMember(t, "plain", nil, nil, RoleWorker)
	if _, err := plain.Join([]string{coord.Addr()}); err == nil {
		t.Error("a member without a gossip key joined an encrypted cluster")
	}
	if n := len(coord.Members()); n != 1 {
		t.Errorf("coordinator sees %d members, want itself only", n)
	}
}

func TestParseGossipKey(t *testing.T) {
	if k, err := ParseGossipKey(""); k != nil || err != nil {
		t.Errorf("empty key: %v, %v", k, err)
	}
	good := base64.StdEncoding.EncodeToString(make([]byte, 16))
	if k, err := ParseGossipKey(good); err != nil || len(k) != 16 {
		t.Errorf("16-byte key: %v, %v", k, err)
	}
	for _, bad := range []string{"not base64!", base64.StdEncoding.EncodeToString(make([]byte, 20))} {
		if _, err := ParseGossipKey(bad); err == nil {
			t.Errorf("ParseGossipKey(%q) accepted", bad)
		}
	}
}

func TestMeta(t *testing.T) {
	m := Meta{Role: RoleWorker, GRPC: "10.0.0.1:7000"}
	for range 100 {
		m.Devices = append(m.Devices, MetaDevice{Kind: "gpu", Memory: 1 << 40})
	}
	b, err := m.encode(512)
	if err != nil || len(b) > 512 {
		t.Fatalf("encode: %d bytes, %v", len(b), err)
	}
	got, err := DecodeMeta(b)
	if err != nil || got.Role != RoleWorker || len(got.Devices) == 0 {
		t.Fatalf("decode: %+v, %v", got, err)
	}
	for _, bad := range []string{`{"r":"king"}`, `{"r":"worker","g":"nohostport"}`, `{"r":"worker","d":[{"k":"tpu"}]}`, `{"r":"worker","d":[{"k":"gpu","m":-1}]}`, `not json`} {
		if _, err := DecodeMeta([]byte(bad)); err == nil {
			t.Errorf("DecodeMeta(%s) accepted", bad)
		}
	}
}

// A member that died comes back under its name at another address (a
// coordinator restarted on another host): the others take the new
// address, not only a member that left gracefully.
func TestDeadMemberBackAtAnotherAddress(t *testing.T) {
	events := make(chan Event, 64)
	w := newTestMember(t, "w", nil, events, RoleWorker)
	old := newTestMember(t, "coord", nil, nil, RoleCoordinator)
	if _, err := old.Join([]string{w.Addr()}); err != nil {
		t.Fatal(err)
	}
	log := &eventLog{ch: events}
	log.wait(t, Joined, "coord")
	old.Shutdown() // no goodbye: it dies
	log.wait(t, Dead, "coord")
	moved, err := New(Config{Name: "coord", Bind: "127.0.0.1:0", Local: true, Logger: testLogger(t),
		Meta: Meta{Role: RoleCoordinator, GRPC: "127.0.0.1:10"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { moved.Shutdown() })
	if moved.Addr() == old.Addr() {
		t.Fatalf("the restarted member got the old address %s", old.Addr())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		moved.Join([]string{w.Addr()})
		if c, ok := w.Find(RoleCoordinator); ok && c.Addr == moved.Addr() && c.Meta.GRPC == "127.0.0.1:10" {
			return
		}
		if time.Now().After(deadline) {
			c, ok := w.Find(RoleCoordinator)
			t.Fatalf("w still sees coordinator %+v (%v), want it at %s", c, ok, moved.Addr())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
