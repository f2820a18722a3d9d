package coordinator

import (
	"testing"
	"time"
)

// News that a worker is gone does not end a session whose worker is
// still heard from (stale news from a healed partition), however long it
// stays so.
func TestServerMemberGoneSparesLiveStream(t *testing.T) {
	ts := startServer(t)
	s, err := openSession(t, ts.addr, "w", "i1")
	if err != nil {
		t.Fatal(err)
	}
	heartbeat(t, s, "w")
	ts.s.MemberGone("w", "i1", "membership: dead")
	time.Sleep(2*silentAfter(ts.s.cfg.HeartbeatInterval) + 200*time.Millisecond)
	if got := sessionInstance(t, ts, "w"); got != "i1" {
		t.Fatalf("stale news ended a live session (holding %q)", got)
	}
}

// News that a worker is gone while it was heard from moments ago ends its
// session once the worker has stayed silent for silentAfter, without
// further news.
func TestServerMemberGoneEndsSessionThatFallsSilent(t *testing.T) {
	ts := startServer(t)
	silent := silentAfter(ts.s.cfg.HeartbeatInterval)
	// The worker is heard at its Hello, after start: it stays live at
	// least until start + silent, however slowly this test runs.
	start := time.Now()
	if _, err := openSession(t, ts.addr, "w", "i1"); err != nil {
		t.Fatal(err)
	}
	ts.s.MemberGone("w", "i1", "membership: dead")
	time.Sleep(100 * time.Millisecond)
	if got := sessionInstance(t, ts, "w"); got != "i1" && time.Since(start) < silent {
		t.Fatalf("the session ended (holding %q) %v after its worker was last heard, before it was silent for %v", got, time.Since(start), silent)
	}
	deadline := time.Now().Add(silent + 30*time.Second)
	for sessionInstance(t, ts, "w") != "-" {
		if time.Now().After(deadline) {
			t.Fatal("the silent session outlived the news of its worker's death")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := time.Since(start); d < silent {
		t.Errorf("ended after %v, before the worker was silent for %v", d, silent)
	}
}
