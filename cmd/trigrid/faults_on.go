//go:build trigrid_faults

package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/worker"
)

// Fault injection for the multi-process tests. This file is compiled only
// into a binary built with -tags trigrid_faults (the tests build one);
// the binary people run has none of these flags, so a wrong count can
// never be switched on by a flag, a config file or the environment.

// faultsBuilt is printed by `trigrid version`.
const faultsBuilt = true

type faultFlags struct {
	delay      time.Duration
	wrongIndex int
}

func (f *faultFlags) add(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&f.delay, "fault-delay", 0, "TEST BUILD ONLY: wait this long before reporting each result")
	cmd.Flags().IntVar(&f.wrongIndex, "fault-wrong-count", -1, "TEST BUILD ONLY: report the count of this subtask index plus one")
	cmd.Flags().MarkHidden("fault-delay")
	cmd.Flags().MarkHidden("fault-wrong-count")
}

func (f *faultFlags) wrap(c worker.Conn, logger *slog.Logger) worker.Conn {
	if f.delay <= 0 && f.wrongIndex < 0 {
		return c
	}
	logger.Warn("FAULT INJECTION is on in this worker", "delay", f.delay, "wrong_count_subtask", f.wrongIndex)
	return &faultConn{Conn: c, f: *f, logger: logger}
}

type faultConn struct {
	worker.Conn
	f      faultFlags
	logger *slog.Logger
}

func (c *faultConn) Report(ctx context.Context, r api.Result) error {
	if c.f.delay > 0 && !r.HandedBack {
		select {
		case <-time.After(c.f.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if r.Err == "" && !r.HandedBack && r.Ref.Index == c.f.wrongIndex {
		c.logger.Warn("FAULT INJECTION: reporting a wrong count", "job", r.Ref.Job, "subtask", r.Ref.Index, "true_count", r.Triangles)
		r.Triangles++
	}
	return c.Conn.Report(ctx, r)
}

// The wrapper passes on the capabilities of the Conn it wraps, so the
// worker behaves as it would without it.

func (c *faultConn) HeartbeatInterval() time.Duration {
	if p, ok := c.Conn.(worker.HeartbeatPacer); ok {
		return p.HeartbeatInterval()
	}
	return 0
}

func (c *faultConn) Flush(ctx context.Context) error {
	if f, ok := c.Conn.(worker.Flusher); ok {
		return f.Flush(ctx)
	}
	return nil
}

func (c *faultConn) Cancels() <-chan api.Cancel {
	if cc, ok := c.Conn.(worker.Canceller); ok {
		return cc.Cancels()
	}
	return nil
}
