package cluster

import (
	"log/slog"
	"net"

	"google.golang.org/grpc/credentials"
)

// loggedCreds logs every refused TLS handshake (no client certificate,
// one from another CA, no TLS at all) with the peer's address: gRPC
// itself drops them silently.
type loggedCreds struct {
	credentials.TransportCredentials
	logger *slog.Logger
}

func (c loggedCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		c.logger.Warn("refused a connection", "peer", conn.RemoteAddr().String(), "reason", "TLS handshake: "+err.Error())
	}
	return out, info, err
}

func (c loggedCreds) Clone() credentials.TransportCredentials {
	return loggedCreds{TransportCredentials: c.TransportCredentials.Clone(), logger: c.logger}
}
