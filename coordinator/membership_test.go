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
	if _, err := openSession(t, ts.addr, "w", "i1"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ts.s.MemberGone("w", "i1", "membership: dead") // heard at its Hello, just now
	time.Sleep(100 * time.Millisecond)
	if got := sessionInstance(t, ts, "w"); got != "i1" {
		t.Fatalf("the session ended at once (holding %q), though its worker was heard just now", got)
	}
	deadline := start.Add(silentAfter(ts.s.cfg.HeartbeatInterval) + 5*time.Second)
	for sessionInstance(t, ts, "w") != "-" {
		if time.Now().After(deadline) {
			t.Fatal("the silent session outlived the news of its worker's death")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := time.Since(start); d < silentAfter(ts.s.cfg.HeartbeatInterval)-50*time.Millisecond {
		t.Errorf("ended after %v, before the worker was silent for %v", d, silentAfter(ts.s.cfg.HeartbeatInterval))
	}
}
