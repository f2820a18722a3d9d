package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
)

// DefaultKeepaliveTimeout is how long a connection may leave what it sent
// unacknowledged, or a keepalive ping unanswered, before it is dropped:
// gRPC's own default for an unanswered ping.
const DefaultKeepaliveTimeout = 20 * time.Second

// keepaliveTime is how long a client hears nothing from the server before
// it pings: gRPC's shortest for clients. keepaliveMinTime is how often
// the server lets clients ping; it must stay below keepaliveTime, since a
// server answers pings more frequent than it allows with GOAWAY, which
// ends the connection and every stream on it.
const (
	keepaliveTime    = 10 * time.Second
	keepaliveMinTime = 5 * time.Second
)

// reconnectMax bounds the wait between a client's attempts to connect;
// the worker's own reconnects back off to the same.
const reconnectMax = 5 * time.Second

// Security is how a gRPC server or client proves itself and checks the
// other side.
type Security struct {
	// TLS turns on mutual TLS when any file is set.
	TLS TLSFiles
	// ServerName is the name a client expects in the coordinator's
	// certificate; "" takes it from the dialled address.
	ServerName string
	// Token is the cluster's shared join token. A server with a token
	// refuses every call that does not carry it; a client sends it. ""
	// turns the check off.
	Token string
	// Insecure lets a server without TLS listen on an address other than
	// loopback (a trusted network only).
	Insecure bool
	// KeepaliveTimeout is how long a connection may leave what it sent
	// unacknowledged (TCP_USER_TIMEOUT), or a keepalive ping unanswered,
	// before it is dropped, on either side. A peer gone silent without
	// FIN or RST (a dead host, a blackholed link) then fails the
	// connection, and a worker reconnects (to the address gossip shows),
	// instead of waiting on it for TCP's retransmissions, many minutes.
	// It also bounds a client's attempt to connect, so an address that
	// went silent is given up as fast. 0 means DefaultKeepaliveTimeout.
	KeepaliveTimeout time.Duration
	// Logger receives refusals; nil discards them.
	Logger *slog.Logger
}

func (s Security) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return s.Logger.With("component", "security")
}

func (s Security) keepaliveTimeout() (time.Duration, error) {
	switch {
	case s.KeepaliveTimeout < 0:
		return 0, fmt.Errorf("cluster: --keepalive-timeout %v: want a positive duration", s.KeepaliveTimeout)
	case s.KeepaliveTimeout == 0:
		return DefaultKeepaliveTimeout, nil
	}
	return s.KeepaliveTimeout, nil
}

// ServerOptions returns the gRPC options of a server with these settings.
// The server lets clients ping as often as DialOptions makes them.
func (s Security) ServerOptions() ([]grpc.ServerOption, error) {
	timeout, err := s.keepaliveTimeout()
	if err != nil {
		return nil, err
	}
	opts := []grpc.ServerOption{
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveMinTime, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Timeout: timeout}),
	}
	if s.TLS.Enabled() {
		cfg, err := ServerTLS(s.TLS)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(loggedCreds{TransportCredentials: credentials.NewTLS(cfg), logger: s.logger()}))
	}
	if s.Token != "" {
		c := newTokenCheck(s.Token, s.logger())
		opts = append(opts, grpc.ChainUnaryInterceptor(c.unary), grpc.ChainStreamInterceptor(c.stream))
	}
	return opts, nil
}

// DialOptions returns the gRPC options of a client with these settings.
// A connection that fails because its TLS settings do not fit the
// server's fails with an error that says so (TLSErrorPrefix). The client
// pings a server it has not heard from for keepaliveTime and drops the
// connection after KeepaliveTimeout without an answer or an
// acknowledgement. It gives up connecting after KeepaliveTimeout too, and
// tries again at most reconnectMax later (gRPC's default waits up to two
// minutes), so a worker soon dials the address gossip shows once its
// coordinator moved.
func (s Security) DialOptions() ([]grpc.DialOption, error) {
	timeout, err := s.keepaliveTimeout()
	if err != nil {
		return nil, err
	}
	opts := []grpc.DialOption{
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: timeout, PermitWithoutStream: true}),
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: timeout, Backoff: backoff.Config{
			BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: reconnectMax}}),
	}
	if s.TLS.Enabled() {
		cfg, err := ClientTLS(s.TLS, s.ServerName)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithTransportCredentials(clientCreds{TransportCredentials: credentials.NewTLS(cfg), tls: true}))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(clientCreds{TransportCredentials: insecure.NewCredentials()}))
	}
	if s.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(tokenCreds{token: s.Token, secure: s.TLS.Enabled()}))
	}
	return opts, nil
}

// CheckListen enforces that a server without TLS listens on loopback only
// unless Insecure says otherwise. addr is host:port; an empty host or an
// unspecified address (0.0.0.0, ::) means every interface.
func (s Security) CheckListen(addr string) error {
	if s.TLS.Enabled() || s.Insecure {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("cluster: listen address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("cluster: refusing to listen on %s without TLS: set --tls-cert, --tls-key and --tls-ca, use a loopback address, or pass --insecure on a trusted network", addr)
}
