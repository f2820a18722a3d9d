package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/coordinator"
	"github.com/trigrid/trigrid/internal/cluster"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/pipeline"
)

type coordinatorFlags struct {
	sec           securityFlags
	gossipFlags   gossipFlags
	listen        string
	grpcAdvertise string
	state         string
	metrics       string
	logFormat     string
	insecure      bool
	tick          time.Duration
	heartbeat     time.Duration
	leaseTicks    int64
	maxAttempts   int
	noSpeculation bool
	verify        bool
	deviceMemory  string
	stopTimeout   time.Duration
	tuning        tuningFlags
	dataDirs      []string
	dash          dashboardFlags
}

// gossipFlags are the memberlist flags of the coordinator and workers.
type gossipFlags struct {
	bind, advertise, name, key string
	timing                     string
}

func (f *gossipFlags) add(cmd *cobra.Command, bind, name string) {
	cmd.Flags().StringVar(&f.bind, "gossip", bind, "gossip (memberlist) address to bind, TCP and UDP; port 0 picks one")
	cmd.Flags().StringVar(&f.advertise, "advertise", "", "gossip address the others reach this node at (default: --gossip)")
	cmd.Flags().StringVar(&f.name, "name", name, "this node's name in the cluster, unique (a worker's id)")
	cmd.Flags().StringVar(&f.timing, "gossip-timing", "lan", "failure detection: lan (memberlist's LAN defaults: a dead node noticed in several seconds) or local (about a second; one host or a fast, quiet network)")
	cmd.Flags().StringVar(&f.key, "gossip-key", "", "base64 of 16, 24 or 32 bytes encrypting gossip; every node needs the same (better set as TRIGRID_GOSSIP_KEY)")
}

// config returns the member configuration, refusing clear-text gossip on
// a non-loopback address unless insecure.
func (f *gossipFlags) config(meta cluster.Meta, insecure bool, events chan<- cluster.Event, logger *slog.Logger) (cluster.Config, error) {
	key, err := cluster.ParseGossipKey(f.key)
	if err != nil {
		return cluster.Config{}, fmt.Errorf("--gossip-key: %w", err)
	}
	if err := api.CheckID("--name", f.name); err != nil {
		return cluster.Config{}, err
	}
	if key == nil && !insecure {
		if err := (cluster.Security{}).CheckListen(f.bind); err != nil {
			return cluster.Config{}, fmt.Errorf("--gossip %s: clear-text gossip beyond loopback: set --gossip-key (or --insecure on a trusted network)", f.bind)
		}
	}
	if f.timing != "lan" && f.timing != "local" {
		return cluster.Config{}, fmt.Errorf("--gossip-timing %q: want lan or local", f.timing)
	}
	return cluster.Config{Name: f.name, Bind: f.bind, Advertise: f.advertise, Meta: meta, GossipKey: key,
		Local: f.timing == "local", Events: events, Logger: logger}, nil
}

func newCoordinatorCommand() *cobra.Command {
	var f coordinatorFlags
	d := coordinator.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "coordinator --listen ADDR --gossip ADDR --state DIR [flags]",
		Short: "Run a coordinator: accept jobs and hand their subtasks to workers",
		Long: `Run a coordinator. It serves gRPC on --listen (workers' Work streams and shard
fetches; clients' submit, status, cancel), gossips on --gossip so workers find
it and failure detection tells it when one dies, and keeps job progress under
--state so a restarted coordinator resumes without recounting finished
subtasks. Without TLS (--tls-cert, --tls-key, --tls-ca) it listens on
loopback only unless --insecure. SIGINT or SIGTERM stops it; a second signal
stops it at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCoordinator(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7000", "gRPC address to listen on; port 0 picks one")
	fl.StringVar(&f.grpcAdvertise, "grpc-advertise", "", "gRPC address workers are told to dial (default: the address --listen bound)")
	fl.StringVar(&f.state, "state", "", "directory for job progress and the shards of submitted graph files (\"\": memory only, lost on exit)")
	fl.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics at /metrics, the probes, and the dashboard at / with its JSON at /api/ on this address (\"\": off)")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.BoolVar(&f.insecure, "insecure", false, "allow listening beyond loopback without TLS, and clear-text gossip (trusted networks only)")
	fl.DurationVar(&f.tick, "tick", d.TickInterval, "scheduler tick: the unit of leases")
	fl.DurationVar(&f.heartbeat, "heartbeat", d.HeartbeatInterval, "how often workers send heartbeats; at most half the lease")
	fl.Int64Var(&f.leaseTicks, "lease-ticks", d.Scheduler.LeaseTicks, "ticks an attempt lives without a heartbeat before it is requeued")
	fl.IntVar(&f.maxAttempts, "max-attempts", d.Scheduler.MaxAttempts, "failed attempts of one subtask before its job fails")
	fl.BoolVar(&f.noSpeculation, "no-speculation", false, "do not re-offer stragglers to idle workers")
	fl.BoolVar(&f.verify, "verify", false, "count every subtask on two workers and settle disagreements with a third")
	fl.StringVar(&f.deviceMemory, "device-memory", "0", "memory per subtask for choosing P when no worker reports its device memory (e.g. 8GiB; 0: such jobs fail)")
	fl.DurationVar(&f.stopTimeout, "stop-timeout", 10*time.Second, "how long a stop waits for streams to end before closing them")
	fl.StringSliceVar(&f.dataDirs, "data-dir", nil, "directory whose graph files may be submitted by path (repeat or comma-separate for several; links are resolved first); default: none, only shard stores")
	f.tuning.add(cmd)
	f.dash.add(cmd)
	f.gossipFlags.add(cmd, "127.0.0.1:7946", "coordinator")
	f.sec.add(cmd)
	return cmd
}

func runCoordinator(cmd *cobra.Command, f *coordinatorFlags) error {
	if err := setupLogFormat(cmd, f.logFormat, logLevelOf(cmd)); err != nil {
		return err
	}
	if err := f.checkScheduling(); err != nil {
		return err
	}
	logger := slog.Default()
	sec, err := f.security(logger)
	if err != nil {
		return err
	}
	opts, err := sec.ServerOptions()
	if err != nil {
		return err
	}

	cfg, err := f.config(logger)
	if err != nil {
		return err
	}
	if f.state == "" {
		logger.Warn("no --state: jobs live in memory and are lost when the coordinator stops")
	}
	// The listeners come first: a taken port fails the start before
	// --state is touched.
	lis, mlis, err := f.listeners()
	if err != nil {
		return err
	}
	claim, err := claimState(f.state)
	if err != nil {
		closeAll(lis, mlis)
		return err
	}
	started := false
	defer func() {
		if !started {
			claim.undo(logger)
		}
	}()
	srv, err := coordinator.NewServer(cfg)
	if err != nil {
		closeAll(lis, mlis)
		return err
	}
	defer srv.Close()

	g, hs := newCoordinatorGRPC(srv, opts)
	grpcAddr := f.grpcAdvertise
	if grpcAddr == "" {
		grpcAddr = lis.Addr().String()
	}

	events := make(chan cluster.Event, 64)
	mcfg, err := f.gossipFlags.config(cluster.Meta{Role: cluster.RoleCoordinator, GRPC: grpcAddr}, f.insecure, events, logger)
	if err != nil {
		closeAll(lis, mlis)
		return err
	}
	member, err := cluster.New(mcfg)
	if err != nil {
		closeAll(lis, mlis)
		return err
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	runDone := make(chan error, 1)
	go func() { runDone <- srv.Run(ctx) }()
	serveDone := make(chan error, 1)
	var serving atomic.Bool
	serving.Store(true)
	go func() { serveDone <- g.Serve(lis); serving.Store(false) }()
	go forwardMembership(ctx, events, srv, logger)

	metricsSrv, metricsAddr, err := serveHTTP(mlis, srv, f.dash, sec, &serving)
	if err != nil {
		stop()
		g.Stop()
		member.Shutdown()
		<-runDone
		return err
	}
	// A start that a signal interrupted cleans up like a failed one.
	if started = ctx.Err() == nil; started {
		logger.Info("coordinator ready", "grpc", lis.Addr().String(), "gossip", member.Addr(), "metrics", metricsAddr,
			"state", f.state, "tls", sec.TLS.Enabled(), "token", sec.Token != "")
	}

	var runErr error
	ran := false // runDone received: it is sent once
	select {
	case <-ctx.Done():
	case runErr = <-runDone:
		ran = true
	case err := <-serveDone:
		runErr = fmt.Errorf("gRPC server: %w", err)
	}
	stop()
	serving.Store(false)
	hs.Shutdown()
	logger.Info("coordinator stopping")
	stopServing(member, g, metricsSrv, f.stopTimeout, logger)
	if !ran {
		if err := <-runDone; runErr == nil {
			runErr = err
		}
	}
	if errors.Is(runErr, context.Canceled) {
		runErr = nil
	}
	return runErr
}

// stopServing leaves the cluster and stops the gRPC server gracefully (for
// up to timeout; a second signal stops it at once), then the HTTP server
// (nil without --metrics).
func stopServing(member *cluster.Member, g *grpc.Server, metricsSrv *http.Server, timeout time.Duration, logger *slog.Logger) {
	hard := make(chan os.Signal, 1)
	signal.Notify(hard, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(hard)
	if err := member.Leave(time.Second); err != nil {
		logger.Warn("leaving the cluster", "err", err)
	}
	member.Shutdown()
	graceful := make(chan struct{})
	go func() { g.GracefulStop(); close(graceful) }()
	select {
	case <-graceful:
	case <-time.After(timeout):
		g.Stop()
	case <-hard:
		g.Stop()
	}
	if metricsSrv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		metricsSrv.Shutdown(sctx)
		cancel()
	}
}

// security is the coordinator's TLS and token setup, once --listen and
// --metrics are checked against it.
func (f *coordinatorFlags) security(logger *slog.Logger) (cluster.Security, error) {
	sec := f.sec.security(logger)
	sec.Insecure = f.insecure
	if err := sec.CheckListen(f.listen); err != nil {
		return sec, fmt.Errorf("--listen: %w", err)
	}
	// Metrics and the probes are served over plain HTTP whatever gRPC
	// uses (the dashboard over TLS only when TLS is on), so the listener
	// stays on loopback unless --insecure, with TLS on or off.
	if f.metrics != "" {
		if err := (cluster.Security{Insecure: f.insecure}).CheckListen(f.metrics); err != nil {
			return sec, fmt.Errorf("--metrics %s: metrics and the probes are served over plain HTTP, without TLS or the join token; use a loopback address or --insecure", f.metrics)
		}
	}
	return sec, nil
}

// newCoordinatorGRPC is the gRPC server of srv with the standard health
// service (Kubernetes' grpc probe, grpc health checkers): SERVING for ""
// and the cluster and jobs services while the coordinator runs,
// NOT_SERVING once the health server shuts down.
func newCoordinatorGRPC(srv *coordinator.Server, opts []grpc.ServerOption) (*grpc.Server, *health.Server) {
	g := grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(api.MaxMessage))...)
	srv.Register(g)
	hs := health.NewServer()
	for _, name := range []string{pb.Cluster_ServiceDesc.ServiceName, pb.Jobs_ServiceDesc.ServiceName} {
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	healthpb.RegisterHealthServer(g, hs)
	return g, hs
}

// config is the coordinator's configuration from the flags.
func (f *coordinatorFlags) config(logger *slog.Logger) (coordinator.Config, error) {
	cfg := coordinator.DefaultConfig()
	cfg.Registry = processRegistry()
	cfg.StateDir = f.state
	cfg.TickInterval = f.tick
	cfg.HeartbeatInterval = f.heartbeat
	cfg.Scheduler.LeaseTicks = f.leaseTicks
	cfg.Scheduler.MaxAttempts = f.maxAttempts
	cfg.Scheduler.NoSpeculation = f.noSpeculation
	cfg.Scheduler.Verify = f.verify
	if err := f.tuning.apply(&cfg); err != nil {
		return cfg, err
	}
	cfg.DataDirs = f.dataDirs
	var err error
	if cfg.DeviceMemory, err = parseBytes(f.deviceMemory); err != nil {
		return cfg, fmt.Errorf("--device-memory: %w", err)
	}
	cfg.Version = version
	cfg.Logger = logger
	cfg.Partitioner = pipeline.Partitioner{Logger: logger}
	cfg.CountsReader = pipeline.ShardCounts{}
	cfg.Kernels = coordinator.KernelNames{CPU: kernels.CPUKernelNames(), GPU: gpu.Kernels()}
	return cfg, nil
}

// listeners binds --listen and --metrics (nil without it).
func (f *coordinatorFlags) listeners() (lis, mlis net.Listener, err error) {
	if lis, err = net.Listen("tcp", f.listen); err != nil {
		return nil, nil, fmt.Errorf("--listen: %w", err)
	}
	if f.metrics != "" {
		if mlis, err = net.Listen("tcp", f.metrics); err != nil {
			lis.Close()
			return nil, nil, fmt.Errorf("--metrics: %w", err)
		}
	}
	return lis, mlis, nil
}

// closeAll closes the listeners that are not nil.
func closeAll(ls ...net.Listener) {
	for _, l := range ls {
		if l != nil {
			l.Close()
		}
	}
}

// serveHTTP serves --metrics on mlis: the metrics, the probes (ready while
// serving holds and srv is ready) and the dashboard. It returns the server
// and the address it listens on (nil and "" when mlis is nil).
func serveHTTP(mlis net.Listener, srv *coordinator.Server, dash dashboardFlags, sec cluster.Security, serving *atomic.Bool) (*http.Server, string, error) {
	if mlis == nil {
		return nil, "", nil
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(srv.Registry(), promhttp.HandlerOpts{}))
	health := coordinator.HealthHandler(func(ctx context.Context) error {
		if !serving.Load() {
			return errors.New("gRPC not serving")
		}
		return srv.Ready(ctx)
	})
	mux.Handle("/healthz", health)
	mux.Handle("/readyz", health)
	hlis, err := mountDashboard(mux, srv, mlis, dash, sec)
	if err != nil {
		mlis.Close()
		return nil, "", fmt.Errorf("--metrics: %w", err)
	}
	msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go msrv.Serve(hlis)
	return msrv, mlis.Addr().String(), nil
}

// forwardMembership tells the coordinator about workers that left or that
// failure detection declared dead, so their attempts are requeued without
// waiting for their leases.
func forwardMembership(ctx context.Context, events <-chan cluster.Event, srv *coordinator.Server, logger *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-events:
			if e.Node.Meta.Role != cluster.RoleWorker {
				continue
			}
			logger.Info("member "+e.Kind.String(), "worker", e.Node.Name, "addr", e.Node.Addr)
			if e.Kind == cluster.Left || e.Kind == cluster.Dead {
				srv.MemberGone(api.WorkerID(e.Node.Name), e.Node.Meta.Instance, "membership: "+e.Kind.String())
			}
		}
	}
}

// logLevelOf returns the --log-level the root command parsed.
func logLevelOf(cmd *cobra.Command) string {
	if fl := cmd.Flag("log-level"); fl != nil {
		return fl.Value.String()
	}
	return "info"
}
