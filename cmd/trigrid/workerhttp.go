package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trigrid/trigrid/coordinator"
	"github.com/trigrid/trigrid/internal/cluster"
)

// workerReadiness is a worker's /readyz: not ready until the worker has
// a connection to a coordinator (set), then whatever that connection
// says.
type workerReadiness struct {
	conn atomic.Pointer[func() error]
}

func (r *workerReadiness) set(connected func() error) { r.conn.Store(&connected) }

func (r *workerReadiness) ready(context.Context) error {
	f := r.conn.Load()
	if f == nil {
		return errors.New("looking for the coordinator")
	}
	return (*f)()
}

// serveWorkerHTTP serves the worker's --metrics listener: /healthz,
// /readyz and /metrics (reg: the worker's series, the Go runtime's and
// the process's collectors). Plain HTTP, so beyond loopback only with
// --insecure, like the coordinator's. It returns the server and the
// address it bound.
func serveWorkerHTTP(addr string, insecure bool, ready func(context.Context) error, reg *prometheus.Registry) (*http.Server, string, error) {
	if err := (cluster.Security{Insecure: insecure}).CheckListen(addr); err != nil {
		return nil, "", fmt.Errorf("--metrics %s: health and metrics are served over plain HTTP; use a loopback address or --insecure", addr)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--metrics: %w", err)
	}
	mux := http.NewServeMux()
	health := coordinator.HealthHandler(ready)
	mux.Handle("/healthz", health)
	mux.Handle("/readyz", health)
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(lis)
	return srv, lis.Addr().String(), nil
}
