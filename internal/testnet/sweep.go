package testnet

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// netnsDir is where ip netns keeps the namespaces it names.
const netnsDir = "/run/netns"

// Sweep removes the namespaces named by this package for test processes
// that no longer run (a run killed before its cleanup could run), killing
// what still runs inside them. Those of live processes, this one
// included, are left alone.
func Sweep() error {
	return removeWhere(func(pid int) bool { return pid != os.Getpid() && !alive(pid) })
}

// removeOwn removes this process's namespaces.
func removeOwn() error {
	return removeWhere(func(pid int) bool { return pid == os.Getpid() })
}

func removeWhere(match func(pid int) bool) error {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		pid, ok := ownerPid(e.Name())
		if ok && match(pid) {
			errs = append(errs, removeNamespace(e.Name()))
		}
	}
	return errors.Join(errs...)
}

// ownerPid parses the test process's pid out of a namespace name this
// package made (Prefix + pid + "-" ...).
func ownerPid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// removeNamespace kills the processes inside ns (the test's processes,
// started there through Node.Command) and deletes it.
func removeNamespace(ns string) error {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err == nil {
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
		if _, serr := os.Stat(netnsDir + "/" + ns); errors.Is(serr, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("ip netns del %s: %v: %s", ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

var signalOnce sync.Once

// watchSignals removes this process's namespaces when it gets SIGINT or
// SIGTERM (an interrupted go test skips t.Cleanup), then dies of the
// signal as it would have.
func watchSignals() {
	signalOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		go func() {
			sig := <-ch
			if err := removeOwn(); err != nil {
				fmt.Fprintln(os.Stderr, "testnet:", err)
			}
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}()
	})
}
