package cluster

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// TokenHeader is the gRPC metadata key that carries the join token.
const TokenHeader = "trigrid-token"

// tokenCheck compares presented tokens with the configured one in
// constant time: both are hashed first, so neither the content nor the
// length of the real token leaks through timing.
type tokenCheck struct {
	want   [sha256.Size]byte
	logger *slog.Logger
}

func newTokenCheck(token string, logger *slog.Logger) *tokenCheck {
	return &tokenCheck{want: sha256.Sum256([]byte(token)), logger: logger}
}

func (c *tokenCheck) check(ctx context.Context, method string) error {
	var got []string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		got = md.Get(TokenHeader)
	}
	ok := len(got) == 1
	var sum [sha256.Size]byte
	if ok {
		sum = sha256.Sum256([]byte(got[0]))
	}
	if subtle.ConstantTimeCompare(sum[:], c.want[:]) == 1 && ok {
		return nil
	}
	why := "wrong join token"
	if len(got) == 0 {
		why = "no join token"
	}
	from := "unknown"
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		from = p.Addr.String()
	}
	c.logger.Warn("refused a call", "peer", from, "method", method, "reason", why)
	return status.Errorf(codes.Unauthenticated, "trigrid: %s (set --token to the cluster's join token)", why)
}

func (c *tokenCheck) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := c.check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (c *tokenCheck) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := c.check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}

// tokenCreds attaches the join token to every call.
type tokenCreds struct {
	token  string
	secure bool
}

func (t tokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{TokenHeader: t.token}, nil
}

// RequireTransportSecurity is true with TLS, so the token is never sent in
// the clear to a server that was meant to be reached over TLS.
func (t tokenCreds) RequireTransportSecurity() bool { return t.secure }
