// Package tlssniff serves TLS and plain TCP on one listener: a
// connection whose first byte opens a TLS handshake is served as TLS, any
// other as it is. The coordinator's HTTP listener uses it so that, with
// TLS configured, the dashboard is reached over https while the probes
// and Prometheus scrapes of the same port keep working over plain HTTP
// (net/http sees a *tls.Conn and sets Request.TLS).
package tlssniff

import (
	"bufio"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// handshake is the first byte of a TLS record that opens a handshake.
const handshake = 0x16

// Listener accepts on l and hands out each connection once its first
// byte has arrived: wrapped by tls.Server(cfg) when it starts a TLS
// handshake, as it is otherwise. A connection that sends nothing within
// timeout is closed; it holds up no other. Close closes l.
func Listener(l net.Listener, cfg *tls.Config, timeout time.Duration) net.Listener {
	s := &listener{Listener: l, cfg: cfg, timeout: timeout, conns: make(chan net.Conn), done: make(chan struct{})}
	go s.accept()
	return s
}

type listener struct {
	net.Listener
	cfg     *tls.Config
	timeout time.Duration
	conns   chan net.Conn
	done    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	err     error // why the accept loop stopped
}

func (s *listener) accept() {
	delay := 5 * time.Millisecond
	for {
		c, err := s.Listener.Accept()
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			// Out of file descriptors: wait for some to close, as
			// net/http does.
			time.Sleep(delay)
			delay = min(2*delay, time.Second)
			continue
		}
		delay = 5 * time.Millisecond
		if err != nil {
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
			s.Close()
			return
		}
		go s.sniff(c)
	}
}

func (s *listener) sniff(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(s.timeout))
	r := bufio.NewReader(c)
	first, err := r.Peek(1)
	c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	var out net.Conn = &peeked{Conn: c, r: r}
	if first[0] == handshake {
		out = tls.Server(out, s.cfg)
	}
	select {
	case s.conns <- out:
	case <-s.done:
		c.Close()
	}
}

// Accept returns the next sniffed connection.
func (s *listener) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.err != nil {
			return nil, s.err
		}
		return nil, net.ErrClosed
	}
}

// Close stops accepting and closes the underlying listener.
func (s *listener) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		err = s.Listener.Close()
	})
	return err
}

// peeked is a connection whose first bytes were read into r.
type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (p *peeked) Read(b []byte) (int, error) { return p.r.Read(b) }
