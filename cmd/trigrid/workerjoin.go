package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/internal/cluster"
)

// joinBackoff bounds the wait between join attempts: it doubles from the
// first value after each failure up to the second.
var joinBackoff = [2]time.Duration{100 * time.Millisecond, 5 * time.Second}

// joinWithRetry joins the cluster through addrs, retrying with backoff
// until one answers, timeout passes or ctx ends, so a worker may start
// before the coordinator. Each failure is logged. A gossip key that the
// members cannot decrypt (or that cannot decrypt theirs) fails at once:
// waiting does not cure it.
func joinWithRetry(ctx context.Context, m *cluster.Member, addrs []string, timeout time.Duration, logger *slog.Logger) error {
	deadline := time.Now().Add(timeout)
	wait := joinBackoff[0]
	for attempt := 1; ; attempt++ {
		_, err := m.Join(addrs)
		if err == nil {
			if attempt > 1 {
				logger.Info("joined the cluster", "addrs", addrs, "attempts", attempt)
			}
			return nil
		}
		if strings.Contains(err.Error(), "decrypt") {
			return fmt.Errorf("--join %s: %w (the --gossip-key differs from the cluster's)", strings.Join(addrs, ","), err)
		}
		if !time.Now().Add(wait).Before(deadline) {
			return fmt.Errorf("--join %s: no member answered in %v (%d attempts): %w (a different --gossip-key, or none, is refused this way too)",
				strings.Join(addrs, ","), timeout, attempt, err)
		}
		logger.Warn("joining the cluster failed; retrying", "addrs", addrs, "attempt", attempt, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, joinBackoff[1])
	}
}

// coordinatorAddr tracks the gRPC address the coordinator advertises
// through gossip, so a worker follows a coordinator that restarts at
// another address.
type coordinatorAddr struct {
	m      *cluster.Member
	logger *slog.Logger
	// join are the --join addresses, contacted again (at most once a
	// second) when the coordinator cannot be reached: a coordinator
	// restarted at the same gossip address knows no one, and until a
	// join syncs state with it the members keep its old metadata.
	join []string

	mu         sync.Mutex
	last       string
	lastRejoin time.Time
}

// current returns the address gossip shows now, or the last one seen
// when no coordinator is among the members.
func (c *coordinatorAddr) current() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.m.Find(cluster.RoleCoordinator); ok && n.Meta.GRPC != "" && n.Meta.GRPC != c.last {
		if c.last != "" {
			c.logger.Info("the coordinator moved", "from", c.last, "to", n.Meta.GRPC)
		}
		c.last = n.Meta.GRPC
	}
	return c.last
}

// dialOption makes every connection attempt of a gRPC client go to the
// coordinator's current address, whatever address the client was made
// with (which still names the server for TLS unless --tls-server-name).
func (c *coordinatorAddr) dialOption() grpc.DialOption {
	return grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", c.current())
		if err != nil {
			c.rejoin()
		}
		return conn, err
	})
}

// rejoin contacts the --join addresses in the background, at most once a
// second.
func (c *coordinatorAddr) rejoin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.join) == 0 || time.Since(c.lastRejoin) < time.Second {
		return
	}
	c.lastRejoin = time.Now()
	go func() {
		if _, err := c.m.Join(c.join); err != nil {
			c.logger.Debug("rejoining while the coordinator is unreachable", "err", err)
		}
	}()
}
