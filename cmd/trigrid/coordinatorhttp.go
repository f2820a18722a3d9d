package main

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/coordinator"
	"github.com/trigrid/trigrid/coordinator/dashboard"
	"github.com/trigrid/trigrid/internal/cluster"
	"github.com/trigrid/trigrid/internal/tlssniff"
)

// dashboardFlags configure the dashboard on the coordinator's --metrics
// listener.
type dashboardFlags struct {
	token string
}

func (f *dashboardFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.token, "http-token", "", "token the dashboard and its /api/ on --metrics ask for (default: the join token --token; better set as TRIGRID_HTTP_TOKEN)")
}

// sniffTimeout bounds how long a connection to the HTTP listener may
// wait before its first byte, which tells TLS from plain HTTP.
const sniffTimeout = 10 * time.Second

// mountDashboard adds the dashboard at / to mux and returns the listener
// to serve mux on. With TLS configured the listener speaks TLS to
// clients that open with a handshake (the coordinator's certificate; a
// client certificate of the cluster's CA is checked when given) and plain
// HTTP to the others, and the dashboard answers over TLS only: /metrics
// and the probes stay reachable over plain HTTP. The dashboard asks for
// --http-token, else the join token; with TLS and neither, for a client
// certificate.
func mountDashboard(mux *http.ServeMux, srv *coordinator.Server, lis net.Listener, f dashboardFlags, sec cluster.Security) (net.Listener, error) {
	cfg := dashboard.DefaultConfig()
	cfg.Source = srv.DashboardInput
	cfg.Token = f.token
	if cfg.Token == "" {
		cfg.Token = sec.Token
	}
	var tcfg *tls.Config
	if sec.TLS.Enabled() {
		var err error
		if tcfg, err = cluster.ServerTLS(sec.TLS); err != nil {
			return nil, err
		}
		tcfg.ClientAuth = tls.VerifyClientCertIfGiven
		cfg.TLS, cfg.ClientCert = true, true
	}
	h, err := dashboard.Handler(cfg)
	if err != nil {
		return nil, err
	}
	mux.Handle("/", h)
	if tcfg == nil {
		return lis, nil
	}
	return tlssniff.Listener(lis, tcfg, sniffTimeout), nil
}
