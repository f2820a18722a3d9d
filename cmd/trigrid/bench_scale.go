package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/bench/scale"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/storage"
)

type benchScaleFlags struct {
	graph, shards, workers, devices, scheme, kernel, out, cache string
	device, cudaLib                                             string
	format, tmpDir, progress                                    string
	p, repeat, cores, prefetch                                  int
	asJSON, skipBad                                             bool
	jobTimeout                                                  time.Duration
	// exe is the binary the clusters run; empty means this process's own
	// executable. Tests point it at the test binary.
	exe string
}

func newBenchScaleCommand() *cobra.Command {
	var f benchScaleFlags
	cmd := &cobra.Command{
		Use:   "scale (--graph FILE | --shards URL) --workers 1,2,4 [flags] [-- WORKER FLAGS]",
		Short: "Count one graph on clusters of 1, 2, 4... workers on loopback and report the scaling",
		Long: `For each worker count N (run --repeat times), start a coordinator and N
workers as separate processes of this binary on loopback, the same gRPC,
gossip and shard path as a cluster of machines, submit the shard store as a
job and wait for it. Every run is a fresh cluster, so every job is a first
job. Where there are GPUs (--device auto finds them through the CUDA
library; --devices picks some) the workers count on them, one worker per
GPU (more workers than GPUs share them); otherwise they are CPU workers of
--cores-per-worker cores each.

A graph FILE is read, cleaned, oriented and counted whole on the CPU once,
then partitioned (--partitions, --scheme) into a temporary store; a store
given with --shards is read back into the whole graph and counted the same
way. Every job's count must equal that count exactly: a mismatch fails the
bench.

Reported per N (medians over the repeats): the job time, the workers'
kernel, fetch, decode and upload time, the speedup T(1)/T(N) and parallel
efficiency speedup/N against one worker, the time imbalance ratio IR (max
over min busy time over the workers, TRUST's), and TEPS (edges per second of
job time). --out DIR receives scale.json (every run, per worker; the input
of 'bench simulate'), scale.csv and scale-runs.csv, speedup.png and
efficiency.png. Flags after '--' go to every worker. Ctrl-C stops the
clusters and removes the temporary files.`,
		Example: `  trigrid gen rmat --scale 20 -o rmat20.bin
  trigrid bench scale --graph rmat20.bin -P 8 --workers 1,2 --repeat 3 --out scale-rmat20
  trigrid bench scale --shards /data/rmat23.shards --workers 1,2,4 --devices 0 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if d := cmd.ArgsLenAtDash(); d != 0 && len(args) > 0 {
				return fmt.Errorf("bench scale: unexpected argument %q: give the graph with --graph or --shards; worker flags go after '--'", args[0])
			}
			return runBenchScale(cmd, &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.graph, "graph", "", "graph file to count (read, counted whole on the CPU, partitioned into a temporary store)")
	fl.StringVar(&f.shards, "shards", "", "shard store (URL or directory) to count as it is")
	fl.StringVar(&f.workers, "workers", "1,2", "comma-separated worker counts; 1 must be among them")
	fl.StringVar(&f.device, "device", "auto", "where the workers count: auto (every GPU the CUDA library finds, else the CPU), cpu, gpu")
	fl.StringVar(&f.devices, "devices", "", "GPU indexes the workers count on, one worker per GPU in turn (default: every GPU found)")
	fl.StringVar(&f.cudaLib, "cuda-lib", "", "path of libtrigrid_cuda.so, for finding the GPUs and for the workers (default: $TRIGRID_CUDA_LIB, next to the binary, system paths)")
	fl.IntVar(&f.cores, "cores-per-worker", 1, "cores of each CPU worker (its --cores and GOMAXPROCS)")
	fl.IntVarP(&f.p, "partitions", "P", 8, "P for --graph: P x P blocks, P^3 subtasks")
	fl.StringVar(&f.scheme, "scheme", "hash", "partition scheme for --graph: hash or range")
	fl.StringVar(&f.format, "format", "auto", "--graph's format, as trigrid count reads it")
	fl.BoolVar(&f.skipBad, "skip-bad-lines", false, "skip --graph's lines that are not edges")
	fl.IntVar(&f.repeat, "repeat", 1, "runs per worker count (medians reported)")
	fl.StringVar(&f.kernel, "kernel", "", "the jobs' kernel (default: each worker's auto)")
	fl.StringVar(&f.cache, "cache", "1GiB", "each worker's block cache (worker --cache)")
	fl.IntVar(&f.prefetch, "prefetch", 0, "assignments each worker pulls ahead per slot (0: the worker's default)")
	fl.StringVar(&f.out, "out", "", "directory for scale.json, the CSV files and the plots (default: none written)")
	fl.StringVar(&f.tmpDir, "tmp-dir", "", "directory for the clusters' state and a graph file's shards (default: the system's)")
	fl.DurationVar(&f.jobTimeout, "job-timeout", time.Hour, "longest one job may take")
	fl.BoolVar(&f.asJSON, "json", false, "print the whole report as JSON")
	fl.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto (bar on a terminal, log lines otherwise), bar, log, none")
	return cmd
}

func runBenchScale(cmd *cobra.Command, f *benchScaleFlags, workerArgs []string) error {
	cfg := scale.DefaultConfig()
	cfg.Graph, cfg.Shards, cfg.P, cfg.Repeat, cfg.CoresPerWorker = f.graph, f.shards, f.p, f.repeat, f.cores
	cfg.Kernel, cfg.Prefetch, cfg.TempDir, cfg.JobTimeout, cfg.WorkerArgs = f.kernel, f.prefetch, f.tmpDir, f.jobTimeout, workerArgs
	var err error
	if cfg.Scheme, err = storage.ParseScheme(f.scheme); err != nil {
		return fmt.Errorf("--scheme: %w", err)
	}
	if cfg.Read.Format, err = edgeio.ParseFormat(f.format); err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	cfg.Read.SkipBadLines = f.skipBad
	if cfg.Workers, err = parseCounts("--workers", f.workers); err != nil {
		return err
	}
	if cfg.Devices, err = benchScaleDevices(f); err != nil {
		return err
	}
	if f.cudaLib != "" && len(cfg.Devices) > 0 {
		cfg.WorkerArgs = append([]string{"--cuda-lib", f.cudaLib}, cfg.WorkerArgs...)
	}
	if cfg.CacheBytes, err = parseBytes(f.cache); err != nil {
		return fmt.Errorf("--cache: %w", err)
	}
	if cfg.Exe = f.exe; cfg.Exe == "" {
		if cfg.Exe, err = os.Executable(); err != nil {
			return fmt.Errorf("bench scale: finding this binary: %w", err)
		}
	}
	mode, err := parseProgressMode(f.progress)
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := checkOutDir(f.out); err != nil {
			return fmt.Errorf("bench scale: --out %s: %w", f.out, err)
		}
	}
	prog := newProgress(cmd.ErrOrStderr(), mode)
	cfg.Progress = prog
	rep, err := scale.Bench(cmd.Context(), cfg)
	prog.Done()
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := rep.WriteDir(f.out); err != nil {
			return err
		}
	}
	if f.asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteTable(cmd.OutOrStdout())
}

// benchScaleDevices are the GPUs the workers count on: --devices, or
// with --device auto or gpu every GPU the CUDA library finds; none means
// CPU workers. --device gpu without a usable GPU is an error.
func benchScaleDevices(f *benchScaleFlags) ([]int, error) {
	switch f.device {
	case "cpu":
		if f.devices != "" {
			return nil, errors.New("bench scale: --devices with --device cpu")
		}
		return nil, nil
	case "auto", "gpu":
	default:
		return nil, fmt.Errorf("--device %q: want auto, cpu or gpu", f.device)
	}
	var want []int
	if f.devices != "" {
		var err error
		if want, err = parseDevices(f.devices); err != nil {
			return nil, err
		}
	}
	lib, err := gpu.Open(gpu.Options{Path: f.cudaLib})
	var found []gpu.Device
	if err == nil {
		found, err = lib.Devices()
	}
	if err == nil && len(found) == 0 {
		err = errors.New("the CUDA library sees no GPU")
	}
	if want != nil {
		// Checked here, so that a GPU that is not there fails the bench
		// before a cluster starts rather than as a worker's exit.
		if err != nil {
			return nil, fmt.Errorf("bench scale: --devices %s: %w", f.devices, err)
		}
		for _, d := range want {
			if d < 0 || d >= len(found) {
				return nil, fmt.Errorf("bench scale: --devices %s: no GPU %d (the CUDA library sees %d)", f.devices, d, len(found))
			}
		}
		return want, nil
	}
	if err != nil {
		if f.device == "gpu" {
			return nil, fmt.Errorf("bench scale: --device gpu: %w", err)
		}
		return nil, nil
	}
	out := make([]int, len(found))
	for i := range out {
		out[i] = i
	}
	return out, nil
}

// parseCounts reads a comma-separated list of positive counts for flag.
func parseCounts(flag, s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s %q: want counts like 1,2,4", flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// checkOutDir makes dir if missing and checks that a file can be written
// in it, so that a directory the results cannot go to fails the bench
// before its runs rather than after them.
func checkOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".trigrid-write-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
