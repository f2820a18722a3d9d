package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
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
	time.Sleep(150 * time.Millisecond)
	p.Done()
	out := buf.String()
	if !strings.Contains(out, "orient: running for") {
		t.Fatalf("no progress for a silent phase: %q", out)
	}
	time.Sleep(60 * time.Millisecond)
	if buf.String() != out {
		t.Fatalf("progress went on after Done: %q", buf.String()[len(out):])
	}
}
