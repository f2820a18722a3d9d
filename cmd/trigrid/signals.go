package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// interrupts turns SIGINT and SIGTERM into cancellation of the command's
// context: the first signal cancels, so the running command stops, removes
// its temporary files and half-written output, and returns; a second
// signal exits within hardExitDelay, for a user who will not wait for the
// cleanup. The delay lets commands that handle a second signal themselves
// (the coordinator stops its server hard) do so first.
type interrupts struct {
	mu     sync.Mutex
	sig    os.Signal
	ch     chan os.Signal
	cancel context.CancelFunc
	stderr io.Writer
	exit   func(code int)
}

// hardExitDelay is how long a second signal waits before the process
// exits regardless.
const hardExitDelay = time.Second

// watchInterrupts starts watching; stop ends it and restores the default
// handling.
func watchInterrupts(parent context.Context, stderr io.Writer) (context.Context, *interrupts) {
	ctx, cancel := context.WithCancel(parent)
	in := &interrupts{ch: make(chan os.Signal, 2), cancel: cancel, stderr: stderr, exit: os.Exit}
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM)
	go in.loop()
	return ctx, in
}

func (in *interrupts) loop() {
	for s := range in.ch {
		in.mu.Lock()
		first := in.sig == nil
		if first {
			in.sig = s
		}
		in.mu.Unlock()
		if first {
			fmt.Fprintf(in.stderr, "trigrid: %s: stopping and cleaning up (again to exit at once)\n", signalName(s))
			in.cancel()
			continue
		}
		fmt.Fprintf(in.stderr, "trigrid: %s again: exiting without cleaning up\n", signalName(s))
		code := exitStatus(s)
		time.AfterFunc(hardExitDelay, func() { in.exit(code) })
	}
}

// stop stops the watching; signals from now on have their default effect.
func (in *interrupts) stop() {
	signal.Stop(in.ch)
	in.cancel()
}

// caught returns the first signal received, or nil.
func (in *interrupts) caught() os.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.sig
}

// exitStatus is the shell's convention for a process ended by signal s:
// 128 + the signal number (130 for SIGINT, 143 for SIGTERM).
func exitStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// afterInterrupt marks an error whose message the user needs even when a
// signal stopped the command (a job that goes on after its submit was
// interrupted, say); runMain prints other errors of an interrupted command
// only as "stopped by SIGNAL".
type afterInterrupt struct{ err error }

func (e afterInterrupt) Error() string { return e.err.Error() }
func (e afterInterrupt) Unwrap() error { return e.err }

// interruptedReport writes what runMain says of a command that signal s
// stopped with err: err's message when it is marked afterInterrupt, then
// that the signal stopped it.
func interruptedReport(w io.Writer, s os.Signal, err error) {
	var note afterInterrupt
	if errors.As(err, &note) {
		fmt.Fprintln(w, "trigrid:", note.err)
	}
	fmt.Fprintf(w, "trigrid: stopped by %s\n", signalName(s))
}
