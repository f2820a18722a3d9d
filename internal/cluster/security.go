package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

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
	// Logger receives refusals; nil discards them.
	Logger *slog.Logger
}

func (s Security) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return s.Logger.With("component", "security")
}

// ServerOptions returns the gRPC options of a server with these settings.
func (s Security) ServerOptions() ([]grpc.ServerOption, error) {
	var opts []grpc.ServerOption
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
// server's fails with an error that says so (TLSErrorPrefix).
func (s Security) DialOptions() ([]grpc.DialOption, error) {
	var opts []grpc.DialOption
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
