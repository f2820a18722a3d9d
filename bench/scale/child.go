package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxLog bounds the output kept of one child; older output is dropped.
const maxLog = 4 << 20

// lineLog keeps a child's combined output for finding its JSON log lines
// and quoting its last lines in errors.
type lineLog struct {
	mu  sync.Mutex
	buf []byte
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if len(l.buf) > maxLog {
		cut := len(l.buf) - maxLog/2
		if nl := bytes.IndexByte(l.buf[cut:], '\n'); nl >= 0 {
			cut += nl + 1
		}
		l.buf = append(l.buf[:0], l.buf[cut:]...)
	}
	return len(p), nil
}

// find returns the fields of the first JSON log line whose msg is msg.
func (l *lineLog) find(msg string) (map[string]any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for line := range bytes.Lines(l.buf) {
		if !bytes.Contains(line, []byte(msg)) {
			continue
		}
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && m["msg"] == msg {
			return m, true
		}
	}
	return nil, false
}

// tail is the last n lines.
func (l *lineLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(l.buf), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// child is one process of a bench cluster: this binary run as a
// coordinator or a worker, in its own process group (a Ctrl-C at the
// terminal reaches the bench, which stops it) and, on Linux, killed when
// the bench dies.
type child struct {
	name string
	cmd  *exec.Cmd
	out  *lineLog
	done chan struct{}
	err  error
}

func startChild(name, exe string, args, env []string) (*child, error) {
	c := &child{name: name, out: &lineLog{}, done: make(chan struct{})}
	c.cmd = exec.Command(exe, args...)
	c.cmd.Env = env
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.SysProcAttr = childAttr()
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench scale: starting %s (%s): %w", name, exe, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// failure describes a child that exited or misbehaved, with its last
// output lines.
func (c *child) failure(what string) error {
	state := "still running"
	if c.exited() {
		state = fmt.Sprintf("exited: %v", c.err)
		if c.err == nil {
			state = "exited with status 0"
		}
	}
	return fmt.Errorf("bench scale: %s %s (%s); its last output:\n%s", c.name, what, state, c.out.tail(15))
}

// waitLine waits for the JSON log line msg and returns its fields; the
// child exiting first, ctx ending or timeout passing is an error.
func (c *child) waitLine(ctx context.Context, msg string, timeout time.Duration) (map[string]any, error) {
	deadline := time.Now().Add(timeout)
	for {
		if m, ok := c.out.find(msg); ok {
			return m, nil
		}
		if c.exited() {
			return nil, c.failure(fmt.Sprintf("ended before logging %q", msg))
		}
		if time.Now().After(deadline) {
			return nil, c.failure(fmt.Sprintf("did not log %q within %v", msg, timeout))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// signal sends sig unless the child has exited.
func (c *child) signal(sig syscall.Signal) {
	if !c.exited() {
		_ = c.cmd.Process.Signal(sig)
	}
}

// stop asks the child to end (SIGTERM) and kills it after grace; it
// returns once the process is gone. A child that had to be killed, or
// that exited with an error, is reported.
func (c *child) stop(grace time.Duration) error {
	if c.exited() {
		return c.exitErr()
	}
	c.signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return c.exitErr()
	case <-time.After(grace):
	}
	c.signal(syscall.SIGKILL)
	<-c.done
	return c.failure(fmt.Sprintf("did not stop within %v of SIGTERM and was killed", grace))
}

// kill ends the child at once and waits for it.
func (c *child) kill() {
	c.signal(syscall.SIGKILL)
	<-c.done
}

func (c *child) exitErr() error {
	var ee *exec.ExitError
	if c.err == nil || (errors.As(c.err, &ee) && !ee.Exited()) {
		return nil // ended by a signal the bench sent
	}
	return c.failure("stopped badly")
}

// childEnv is the bench's environment with GOMAXPROCS set when cores > 0
// (a CPU worker confined to its share of the host).
func childEnv(cores int) []string {
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if cores > 0 && strings.HasPrefix(kv, "GOMAXPROCS=") {
			continue
		}
		env = append(env, kv)
	}
	if cores > 0 {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", cores))
	}
	return env
}
