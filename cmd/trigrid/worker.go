package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/internal/cluster"
	"github.com/trigrid/trigrid/internal/workerclient"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/pipeline"
	"github.com/trigrid/trigrid/worker"
)

type workerFlags struct {
	sec         securityFlags
	gossip      gossipFlags
	faults      faultFlags
	join        []string
	coordinator string
	device      string
	devices     string
	kernel      string
	cudaLib     string
	memLimit    string
	pinned      string
	cores       int
	logFormat   string
	insecure    bool
	drain       time.Duration
	prefetch    string
	cacheBytes  string
	findTimeout time.Duration
	joinTimeout time.Duration
	fetchShards bool
	metrics     string
}

func newWorkerCommand() *cobra.Command {
	var f workerFlags
	d := worker.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "worker --join GOSSIP_ADDR [--coordinator ADDR] [--device auto|cpu|gpu] [--devices 0,1] [flags]",
		Short: "Run a worker: count the subtasks a coordinator hands out",
		Long: `Run a worker. It joins the cluster's gossip at --join, finds the coordinator
there (or dials --coordinator), and counts the subtasks it pulls on every
selected GPU (one slot each) or on the CPU. It reads a job's shards from the
job's store when it can reach it (a shared filesystem) and otherwise fetches
them from the coordinator, checking each against the manifest. SIGINT or
SIGTERM drains: running subtasks finish (up to --drain-timeout) or are handed
back, the worker leaves the cluster and exits 0; a second signal exits at
once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWorker(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.join, "join", nil, "gossip address(es) of cluster members to join, e.g. the coordinator's --gossip")
	fl.StringVar(&f.coordinator, "coordinator", "", "coordinator gRPC address (default: found through gossip)")
	fl.StringVar(&f.device, "device", "auto", "where to count: auto (every usable GPU, else the CPU), cpu, gpu")
	fl.StringVar(&f.devices, "devices", "", "GPU indexes to count on, e.g. 0,1 (default: every visible GPU)")
	fl.StringVar(&f.kernel, "kernel", "auto", "the kernel this worker counts with when a job names none; a CPU worker offers every CPU kernel, a GPU worker every GPU kernel, and the coordinator hands a job naming a kernel only to workers that offer it")
	fl.StringVar(&f.cudaLib, "cuda-lib", "", "path of libtrigrid_cuda.so (default: $TRIGRID_CUDA_LIB, next to the binary, system paths)")
	fl.StringVar(&f.memLimit, "device-mem-limit", "", "device memory this worker reports and uses per subtask, e.g. 40GiB (default: the GPU's)")
	fl.StringVar(&f.pinned, "pinned-host-mem", "2GiB", "host memory kept page-locked for the blocks uploaded to the GPUs (pinned in place, shared by every GPU), so that uploads run at the bus's rate beside kernels, e.g. 8GiB (0: none, blocks are copied from pageable memory)")
	fl.IntVar(&f.cores, "cores", 0, "CPU cores for counting on the CPU (0: all)")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.BoolVar(&f.insecure, "insecure", false, "allow clear-text gossip beyond loopback (trusted networks only)")
	fl.DurationVar(&f.drain, "drain-timeout", d.DrainTimeout, "on SIGINT/SIGTERM, how long running subtasks may finish before they are handed back")
	fl.StringVar(&f.prefetch, "prefetch", "auto", fmt.Sprintf("assignments per slot pulled ahead, their blocks loaded while the slot counts: auto (twice what a slot counts during one round trip to the coordinator, as measured, from %d to %d) or a fixed number", d.Prefetch, d.MaxPrefetch))
	fl.StringVar(&f.cacheBytes, "cache", strconv.FormatInt(d.CacheBytes, 10), "decoded blocks kept between subtasks, e.g. 4GiB (negative: none)")
	fl.StringVar(&f.metrics, "metrics", "", "serve /healthz (alive), /readyz (connected to a coordinator) and Prometheus /metrics on this address, plain HTTP (\"\": off; beyond loopback only with --insecure)")
	fl.BoolVar(&f.fetchShards, "fetch-shards", false, "always fetch shards from the coordinator, even when a job's store path opens here")
	fl.DurationVar(&f.findTimeout, "find-timeout", time.Minute, "how long to look for the coordinator through gossip before giving up")
	fl.DurationVar(&f.joinTimeout, "join-timeout", time.Minute, "how long to retry --join (with backoff, up to 5 s apart) before giving up, so a worker may start before the coordinator")
	f.gossip.add(cmd, "127.0.0.1:0", "")
	fl.Lookup("name").Usage = "this worker's name in the cluster, its id, unique (default: the host's name and, with --devices and no CUDA_VISIBLE_DEVICES, the GPU indexes, as HOST-gpu0; otherwise the process id, as HOST-pid4242)"
	f.sec.add(cmd)
	f.sec.addServerName(cmd)
	f.faults.add(cmd)
	return cmd
}

func parseDevices(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--devices %q: want GPU indexes like 0,1", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func runWorker(cmd *cobra.Command, f *workerFlags) error {
	if err := setupLogFormat(cmd, f.logFormat, logLevelOf(cmd)); err != nil {
		return err
	}
	logger := slog.Default()
	if faultsBuilt {
		logger.Warn("this binary was built with test-only fault injection (-tags trigrid_faults)")
	}
	if len(f.join) == 0 && f.coordinator == "" {
		return errors.New("--join: give a cluster member's gossip address (or --coordinator)")
	}
	devs, sel, slots, devices, err := f.selectSlots(logger)
	if err != nil {
		return err
	}
	cache, err := parseSignedBytes(f.cacheBytes)
	if err != nil {
		return fmt.Errorf("--cache: %w", err)
	}
	var readiness workerReadiness
	var metrics *worker.Metrics
	if f.metrics != "" {
		reg := processRegistry()
		if metrics, err = worker.NewMetrics(reg); err != nil {
			return err
		}
		hsrv, haddr, err := serveWorkerHTTP(f.metrics, f.insecure, readiness.ready, reg)
		if err != nil {
			return err
		}
		defer hsrv.Close()
		logger.Info("worker health and metrics", "addr", haddr)
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	if f.gossip.name == "" {
		host, _ := os.Hostname()
		f.gossip.name = string(worker.DefaultName(host, devs, os.Getenv("CUDA_VISIBLE_DEVICES"), os.Getpid()))
	}
	instance := worker.NewInstance()
	meta := cluster.Meta{Role: cluster.RoleWorker, Devices: cluster.MetaDevices(devices), Instance: instance}
	mcfg, err := f.gossip.config(meta, f.insecure, nil, logger)
	if err != nil {
		return err
	}
	member, err := cluster.New(mcfg)
	if err != nil {
		return err
	}
	defer member.Shutdown()
	if len(f.join) > 0 {
		if err := joinWithRetry(ctx, member, f.join, f.joinTimeout, logger); err != nil {
			return err
		}
		go rejoin(ctx, member, f.join, logger)
	}
	addr := f.coordinator
	var dialOpts []grpc.DialOption
	if addr == "" {
		if addr, err = findCoordinator(ctx, member, f.findTimeout); err != nil {
			return err
		}
		// Reconnects dial the address gossip shows then.
		follow := &coordinatorAddr{m: member, logger: logger, join: f.join, last: addr}
		dialOpts = append(dialOpts, follow.dialOption())
	}
	logger.Info("worker ready", "name", f.gossip.name, "gossip", member.Addr(), "coordinator", addr, "device", sel.Device, "slots", len(slots), "kernel", sel.Kernel)

	gconn, err := f.sec.dial(addr, dialOpts...)
	if err != nil {
		return err
	}
	defer gconn.Close()
	conn, err := workerclient.New(workerclient.Config{Client: gconn, FetchShards: f.fetchShards, Logger: logger})
	if err != nil {
		return err
	}
	defer conn.Close()
	readiness.set(conn.Connected)

	cfg := worker.DefaultConfig()
	cfg.ID = api.WorkerID(f.gossip.name)
	cfg.Instance = instance
	cfg.Conn = f.faults.wrap(conn, logger)
	cfg.Slots = slots
	cfg.OpenStore = conn.OpenStore
	cfg.CacheBytes = cache
	if cfg.Prefetch, cfg.MaxPrefetch, err = parsePrefetch(f.prefetch, cfg.Prefetch, cfg.MaxPrefetch); err != nil {
		return err
	}
	cfg.DrainTimeout = f.drain
	cfg.Version = version
	cfg.Kernels = workerKernels(sel.Kernel, devices)
	cfg.Cores = f.cores
	cfg.Logger = logger
	cfg.Metrics = metrics
	w, err := worker.New(cfg)
	if err != nil {
		return err
	}
	runErr := w.Run(ctx)
	stop()
	// A worker refused for its name leaves without a word: the others
	// would take its leaving for that of the live worker holding the name.
	if !errors.Is(runErr, workerclient.ErrNameInUse) {
		if err := member.Leave(2 * time.Second); err != nil {
			logger.Warn("leaving the cluster", "err", err)
		}
	}
	if errors.Is(runErr, context.Canceled) {
		runErr = nil
	}
	logger.Info("worker stopped")
	return runErr
}

// selectSlots opens the device --device and --devices name (or the CPU)
// and returns the GPU indexes asked for, the selection, its counting slots
// and the devices they report, each slot's memory capped at
// --device-mem-limit.
func (f *workerFlags) selectSlots(logger *slog.Logger) ([]int, *gpu.Selection, []worker.Slot, []api.Device, error) {
	devs, err := parseDevices(f.devices)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if len(devs) > 0 && f.device == "cpu" {
		return nil, nil, nil, nil, fmt.Errorf("--devices %s: --device cpu counts on no GPU", f.devices)
	}
	var memLimit int64
	if f.memLimit != "" {
		if memLimit, err = parseBytes(f.memLimit); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("--device-mem-limit: %w", err)
		}
	}
	pinned, err := pinnedHostOption(f.pinned)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	sel, err := gpu.Select(f.device, f.kernel, gpu.SelectOptions{
		Library: gpu.Options{Path: f.cudaLib, MemLimit: uint64(memLimit), PinnedHost: pinned},
		Workers: f.cores,
		Logger:  logger,
		Devices: devs,
	})
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("--device %s --kernel %s: %w", f.device, f.kernel, err)
	}
	if sel.Fallback != "" {
		logger.Warn("counting on the CPU", "reason", sel.Fallback)
	}
	slots := pipeline.SlotsOf(sel)
	host := hostMemory()
	devices := make([]api.Device, len(slots))
	for i := range slots {
		d := &slots[i].Device
		// A CPU slot's budget for --partitions 0 is the host's memory.
		if d.Kind == "cpu" && d.Memory == 0 {
			d.Memory = host
			slots[i].NewCounter = anyCPUKernel(slots[i].NewCounter, sel.Kernel, f.cores)
		}
		if memLimit > 0 && (d.Memory == 0 || d.Memory > memLimit) {
			d.Memory = memLimit
		}
		devices[i] = *d
	}

	return devs, sel, slots, devices, nil
}

// anyCPUKernel lets a CPU slot count with whichever CPU kernel a job
// names, not only the one the worker was started with.
func anyCPUKernel(next func(string) (kernels.Counter, error), own string, cores int) func(string) (kernels.Counter, error) {
	return func(kernel string) (kernels.Counter, error) {
		if kernel == "" || kernel == own {
			return next(kernel)
		}
		return kernels.NewCPU(kernel, kernels.CPUOptions{Workers: cores})
	}
}

// findCoordinator waits until gossip shows a coordinator and returns the
// gRPC address it advertises.
func findCoordinator(ctx context.Context, m *cluster.Member, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		if n, ok := m.Find(cluster.RoleCoordinator); ok && n.Meta.GRPC != "" {
			return n.Meta.GRPC, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no coordinator in the cluster after %v (give --coordinator, or --join its gossip address)", timeout)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// rejoin contacts the --join addresses again whenever no coordinator is
// among the members, so a restarted coordinator (which knows no one) is
// found again.
func rejoin(ctx context.Context, m *cluster.Member, addrs []string, logger *slog.Logger) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, ok := m.Find(cluster.RoleCoordinator); ok {
			continue
		}
		if _, err := m.Join(addrs); err == nil {
			logger.Info("rejoined the cluster", "addrs", addrs)
		}
	}
}

// parseSignedBytes is parseBytes that also takes a negative plain number.
func parseSignedBytes(s string) (int64, error) {
	if strings.HasPrefix(strings.TrimSpace(s), "-") {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q: a negative size is a plain number (e.g. -1)", s)
		}
		return n, nil
	}
	return parseBytes(s)
}

// workerKernels lists the kernels a worker tells the coordinator it runs,
// its own first, so that jobs naming another are not handed to it: every
// GPU kernel when it counts on GPUs (each slot makes any of them), every
// CPU kernel when it counts on the CPU (anyCPUKernel).
func workerKernels(own string, devices []api.Device) []string {
	all := kernels.CPUKernelNames()
	for _, d := range devices {
		if d.Kind == "gpu" {
			all = gpu.Kernels()
			break
		}
	}
	out := []string{own}
	for _, k := range all {
		if k != own {
			out = append(out, k)
		}
	}
	return out
}

// parsePrefetch reads --prefetch: "auto" keeps the adaptive range
// [lo, hi]; a number n fixes it at n.
func parsePrefetch(s string, lo, hi int) (int, int, error) {
	if s == "auto" {
		return lo, hi, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > api.MaxBatch {
		return 0, 0, fmt.Errorf("--prefetch %q: want auto or a number of assignments from 0 to %d", s, api.MaxBatch)
	}
	return n, n, nil
}
