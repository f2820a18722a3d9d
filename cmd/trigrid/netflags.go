package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/internal/cluster"
)

// securityFlags are the flags every command that speaks to a coordinator
// shares: mutual TLS files and the join token.
type securityFlags struct {
	tlsCert, tlsKey, tlsCA string
	serverName             string
	token                  string
	keepalive              time.Duration
}

func (f *securityFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate this side presents (mutual TLS; with --tls-key and --tls-ca)")
	cmd.Flags().StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	cmd.Flags().StringVar(&f.tlsCA, "tls-ca", "", "PEM CA the other side's certificate must chain to")
	cmd.Flags().StringVar(&f.token, "token", "", "the cluster's join token (better set as TRIGRID_TOKEN or in the config file than on the command line)")
	cmd.Flags().DurationVar(&f.keepalive, "keepalive-timeout", cluster.DefaultKeepaliveTimeout, "drop a gRPC connection whose peer acknowledges nothing sent, or answers no keepalive ping (sent after 10 s of silence), for this long: a dead host or cut link then fails the connection instead of hanging it")
}

func (f *securityFlags) addServerName(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.serverName, "tls-server-name", "", "name the coordinator's certificate must carry (default: the host of --coordinator)")
}

func (f *securityFlags) security(logger *slog.Logger) cluster.Security {
	return cluster.Security{
		TLS:        cluster.TLSFiles{Cert: f.tlsCert, Key: f.tlsKey, CA: f.tlsCA},
		ServerName: f.serverName,
		Token:      f.token,
		Logger:     logger,
		// 0 is the default; a negative timeout is refused when options
		// are made.
		KeepaliveTimeout: f.keepalive,
	}
}

// dial opens a client connection to the coordinator at addr; the
// connection is made lazily, so errors surface on the first call.
func (f *securityFlags) dial(addr string, extra ...grpc.DialOption) (*grpc.ClientConn, error) {
	if addr == "" {
		return nil, fmt.Errorf("--coordinator: give the coordinator's gRPC address (host:port)")
	}
	opts, err := f.security(slog.Default()).DialOptions()
	if err != nil {
		return nil, err
	}
	target := addr
	if len(extra) > 0 {
		// A custom dialer gets the address itself, not a resolved one.
		target = "passthrough:///" + addr
	}
	conn, err := grpc.NewClient(target, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("--coordinator %s: %w", addr, err)
	}
	return conn, nil
}

// setupLogFormat replaces the default logger with a JSON one when format
// is "json"; "text" keeps the one the root command set up.
func setupLogFormat(cmd *cobra.Command, format string, level string) error {
	switch format {
	case "text":
		return nil
	case "json":
		var l slog.Level
		if err := l.UnmarshalText([]byte(level)); err != nil {
			return fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
		}
		slog.SetDefault(slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: l})))
		return nil
	}
	return fmt.Errorf("--log-format %q: want text or json", format)
}

// rpcTimeout bounds one unary call of the client commands.
const rpcTimeout = 30 * time.Second

func rpcContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, rpcTimeout)
}

// localPath returns path made absolute when it names a file here, so a
// coordinator on the same machine finds it whatever its working
// directory; other paths go to the coordinator as given.
func localPath(path string) string {
	if _, err := os.Stat(path); err != nil {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return abs
}
