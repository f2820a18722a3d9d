package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/credentials"
)

// TLSErrorPrefix begins the errors of a client whose TLS settings do not
// fit the coordinator's: no TLS against TLS, TLS against none, no client
// certificate, or one the coordinator refuses. Each names the cause and
// the flags that fix it; retrying does not cure them.
const TLSErrorPrefix = "cluster: TLS: "

// IsTLSMismatch says whether an error text (a gRPC status message, say)
// carries one of those errors.
func IsTLSMismatch(msg string) bool { return strings.Contains(msg, TLSErrorPrefix) }

// verdictWait bounds how long a TLS client waits after its handshake for
// the coordinator's first bytes: its refusal of the client's certificate
// (TLS 1.3 sends it only after the client's handshake is done) or the
// start of gRPC, which a coordinator sends at once.
const verdictWait = 5 * time.Second

// probeTimeout bounds the TLS handshake that tells whether a coordinator
// that closed a plain connection speaks TLS.
const probeTimeout = 2 * time.Second

// clientCreds are a client's transport credentials, TLS or none, whose
// failures from settings that do not fit the coordinator's become errors
// that say so (TLSErrorPrefix) instead of a broken pipe or an EOF.
type clientCreds struct {
	credentials.TransportCredentials
	tls bool
}

func (c clientCreds) Clone() credentials.TransportCredentials {
	return clientCreds{TransportCredentials: c.TransportCredentials.Clone(), tls: c.tls}
}

func (c clientCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	addr := raw.RemoteAddr().String()
	conn, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if !c.tls {
		if err != nil {
			return nil, nil, err
		}
		return &plainConn{Conn: conn, addr: addr}, info, nil
	}
	if err != nil {
		var rh tls.RecordHeaderError
		if errors.As(err, &rh) {
			return nil, nil, fmt.Errorf("%sthe coordinator does not speak TLS (%s answered the TLS handshake in the clear): leave out --tls-ca, --tls-cert and --tls-key, or start the coordinator with them", TLSErrorPrefix, addr)
		}
		return nil, nil, explainAlert(err)
	}
	conn, err = awaitVerdict(ctx, conn)
	if err != nil {
		return nil, nil, err
	}
	return conn, info, nil
}

// awaitVerdict reads the coordinator's first bytes after a TLS handshake,
// which are its refusal of this client's certificate or the start of
// gRPC, and returns the refusal as an error naming its cause, or the
// connection with the bytes read put back. Without it the refusal races
// the client's first write, which may fail with a broken pipe first.
func awaitVerdict(ctx context.Context, conn net.Conn) (net.Conn, error) {
	deadline := time.Now().Add(verdictWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetReadDeadline(deadline); err != nil {
		return conn, nil
	}
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	conn.SetReadDeadline(time.Time{})
	if n > 0 {
		return &replayConn{Conn: conn, buf: buf[:n]}, nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return conn, nil // nothing yet: gRPC reads on as usual
	}
	conn.Close()
	return nil, explainAlert(err)
}

// explainAlert returns a TLS alert from the coordinator as an error
// naming its cause, and any other error as it is.
func explainAlert(err error) error {
	if !remoteAlert(err) {
		return err
	}
	switch msg := err.Error(); {
	case strings.Contains(msg, "certificate required"):
		return fmt.Errorf("%sthe coordinator requires a client certificate: give --tls-cert and --tls-key", TLSErrorPrefix)
	case strings.Contains(msg, "certificate") || strings.Contains(msg, "unknown certificate authority"):
		return fmt.Errorf("%sthe coordinator refused this client's certificate: %v", TLSErrorPrefix, err)
	default:
		return fmt.Errorf("%sthe coordinator refused the TLS handshake: %v", TLSErrorPrefix, err)
	}
}

// replayConn gives back the bytes awaitVerdict read before the rest.
type replayConn struct {
	net.Conn
	buf []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// plainConn is a connection without TLS. When it fails before the
// coordinator has sent a byte, it asks the coordinator for a TLS
// handshake: a coordinator that answers one requires TLS, and the
// failure says so.
type plainConn struct {
	net.Conn
	addr string
	got  atomic.Bool

	once     sync.Once
	mismatch error
}

func (c *plainConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.got.Store(true)
	}
	return n, c.explain(err)
}

func (c *plainConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	return n, c.explain(err)
}

// explain returns err, or the TLS mismatch behind it.
func (c *plainConn) explain(err error) error {
	if err == nil || c.got.Load() || errors.Is(err, net.ErrClosed) {
		return err
	}
	c.once.Do(func() {
		if speaksTLS(c.addr) {
			c.mismatch = fmt.Errorf("%sthe coordinator requires TLS: give --tls-ca, --tls-cert and --tls-key (%s speaks TLS, and closed this plain connection)", TLSErrorPrefix, c.addr)
		}
	})
	if c.mismatch != nil {
		return c.mismatch
	}
	return err
}

// speaksTLS says whether a TLS handshake with addr gets a TLS answer: a
// completed handshake, or a TLS alert. It checks no certificate: it sends
// nothing over the connection and only learns whether TLS is spoken.
func speaksTLS(addr string) bool {
	d := &net.Dialer{Timeout: probeTimeout}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
	if err == nil {
		conn.Close()
		return true
	}
	return remoteAlert(err)
}

// remoteAlert says whether err is a TLS alert the other side sent, which
// crypto/tls reports as a net.OpError of Op "remote error".
func remoteAlert(err error) bool {
	var oe *net.OpError
	var alert tls.AlertError
	return errors.As(err, &oe) && oe.Op == "remote error" || errors.As(err, &alert)
}
