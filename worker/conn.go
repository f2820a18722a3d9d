package worker

import (
	"context"
	"errors"
	"time"

	"github.com/trigrid/trigrid/api"
)

// ErrNoMoreWork is returned by Conn.Pull when the coordinator will hand
// this worker nothing more (the in-process job is finished, or the
// coordinator asked the worker to leave). Run then finishes what it holds
// and returns nil.
var ErrNoMoreWork = errors.New("worker: no more work")

// Conn is the worker's link to a coordinator. Run calls Pull from one
// goroutine and Report and Heartbeat from others, so implementations must
// be safe for concurrent use. Every method returns when ctx ends.
type Conn interface {
	// Hello introduces the worker; Run calls it once before anything else.
	Hello(ctx context.Context, h api.Hello) error
	// Pull blocks until the coordinator hands out between 1 and max
	// assignments, and returns them. It returns ErrNoMoreWork when there
	// will be none, and ctx's error when ctx ends first.
	Pull(ctx context.Context, max int) ([]api.Assignment, error)
	// Report sends the result of one assignment: counted, failed (Err) or
	// handed back unfinished (HandedBack). Every assignment Pull returned
	// gets exactly one Report.
	Report(ctx context.Context, r api.Result) error
	// Heartbeat says the worker is alive and which assignments it holds.
	Heartbeat(ctx context.Context, hb api.Heartbeat) error
}

// Canceller is a Conn that also carries the coordinator's cancels of
// attempts it no longer needs (settled by another worker, or of a
// cancelled job). The worker drops such an attempt: it stops its count or
// never starts it, and sends no result for it. The channel is read until
// Run returns.
type Canceller interface {
	Conn
	Cancels() <-chan api.Cancel
}

// Flusher is a Conn that may hold reports back to send several at once:
// Flush returns once every report made so far is on its way. Run
// flushes before it returns.
type Flusher interface {
	Flush(ctx context.Context) error
}

// HeartbeatPacer is a Conn that knows how often its coordinator wants
// heartbeats (the gRPC client learns it from the Welcome). The worker
// heartbeats at that interval when it is shorter than its own
// HeartbeatInterval, so a coordinator's short leases are kept.
type HeartbeatPacer interface {
	// HeartbeatInterval returns the coordinator's interval; 0 when unknown.
	HeartbeatInterval() time.Duration
}
