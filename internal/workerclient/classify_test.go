package workerclient

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/internal/cluster"
)

// A worker gives up on what retrying cannot cure: its name in use by a
// live worker, TLS settings that do not fit the coordinator's; a
// coordinator that is merely unreachable is retried.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err            error
		refused, inUse bool
	}{
		{status.Error(codes.AlreadyExists, "coordinator: worker name w is already in use by a live worker at 127.0.0.1:1"), true, true},
		{status.Error(codes.Unavailable, "connection error: "+cluster.TLSErrorPrefix+"the coordinator requires TLS"), true, false},
		{status.Error(codes.Unauthenticated, "no join token"), true, false},
		{status.Error(codes.Unavailable, "connection error: connection refused"), false, false},
	} {
		err := classify(c.err)
		if errors.Is(err, ErrRefused) != c.refused || errors.Is(err, ErrNameInUse) != c.inUse {
			t.Errorf("classify(%v) = %v: refused %v, name in use %v; want %v, %v", c.err, err,
				errors.Is(err, ErrRefused), errors.Is(err, ErrNameInUse), c.refused, c.inUse)
		}
	}
}
