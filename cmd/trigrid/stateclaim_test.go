package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A coordinator whose start fails (its --metrics port is taken) removes the
// --state directory it created, parents included, and leaves one that
// existed before, with what it held.
func TestCoordinatorFailedStartCleansState(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	base := []string{"coordinator", "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0", "--metrics", taken.Addr().String()}

	root := t.TempDir()
	fresh := filepath.Join(root, "new", "state")
	err = runFor(t, 30*time.Second, append(base, "--state", fresh)...)
	if err == nil || !strings.Contains(err.Error(), "--metrics") {
		t.Fatalf("start with a taken --metrics port: %v, want an error naming --metrics", err)
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("the failed start left %s behind (%v)", filepath.Join(root, "new"), err)
	}

	old := filepath.Join(root, "old")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(old, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runFor(t, 30*time.Second, append(base, "--state", old)...); err == nil {
		t.Fatal("start with a taken --metrics port succeeded")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the failed start touched the state directory that existed: %v", err)
	}
}

// A start that fails after the state database is opened (gossip cannot
// bind) removes the state directory it created too.
func TestCoordinatorFailedGossipCleansState(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	fresh := filepath.Join(t.TempDir(), "state")
	err = runFor(t, 30*time.Second, "coordinator", "--listen", "127.0.0.1:0", "--gossip", taken.Addr().String(), "--state", fresh)
	if err == nil {
		t.Fatal("start with a taken --gossip port succeeded")
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("the failed start left %s behind (%v)", fresh, err)
	}
}

// A start that a signal interrupts (its context ends before it is ready)
// cleans up as a failed one does; a coordinator that started keeps its
// --state when it stops.
func TestCoordinatorStateAfterInterruptedAndOrderlyStop(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "state")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := newRootCommand()
	root.SetOut(&strings.Builder{})
	root.SetErr(&strings.Builder{})
	root.SetArgs([]string{"coordinator", "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0", "--state", fresh})
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("interrupted start: %v", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("the interrupted start left %s behind (%v)", fresh, err)
	}

	if err := runFor(t, 2*time.Second, "coordinator", "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0", "--state", fresh); err != nil {
		t.Fatalf("coordinator stopped by its context: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fresh, "coordinator.db")); err != nil {
		t.Errorf("a coordinator that started lost its state: %v", err)
	}
}

func TestClaimStateRefusesAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := claimState(filepath.Join(f, "state")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("claimState under a file: %v, want 'not a directory'", err)
	}
}
