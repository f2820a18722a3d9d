package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/bench/scale"
	"github.com/trigrid/trigrid/bench/simulate"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

func newBenchStatsCommand() *cobra.Command {
	var (
		out, format, progressMode string
		rmat, edgeFactor, fineP   int
		workers                   int
		seed                      uint64
	)
	cmd := &cobra.Command{
		Use:   "stats (FILE | --rmat SCALE) -o STATS.json",
		Short: "Write a graph's fine block histogram, all 'bench simulate' needs of it",
		Long: `Read, clean and orient FILE (degree order, as trigrid partition does), or
generate the R-MAT graph 'trigrid gen rmat --scale SCALE' writes (the same
edges, never built as a graph), and write the forward edge count of every
block of the hash partition at --fine-p: block (a, b) holds the edges u -> v
with u mod FINE_P = a and v mod FINE_P = b. Since (x mod FINE_P) mod P =
x mod P, the file gives the exact blocks at every P that divides --fine-p,
so 'bench simulate --stats' can choose P for a graph never partitioned.`,
		Example: `  trigrid bench stats --rmat 27 -o rmat27-stats.json
  trigrid bench stats graph.bin -o graph-stats.json --fine-p 120`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (rmat > 0) {
				return errors.New("bench stats: give a graph FILE or --rmat SCALE, one of them")
			}
			mode, err := parseProgressMode(progressMode)
			if err != nil {
				return err
			}
			prog := newProgress(cmd.ErrOrStderr(), mode)
			defer prog.Done()
			start := time.Now()
			var b *simulate.BlockStats
			if rmat > 0 {
				src, err := gen.RMATSource(rmat, edgeFactor, seed)
				if err != nil {
					return fmt.Errorf("--rmat %d --edge-factor %d: %w", rmat, edgeFactor, err)
				}
				prog.Start(fmt.Sprintf("rmat %d: generate, deduplicate, rank, count blocks", rmat), "", -1)
				name := fmt.Sprintf("rmat --scale %d --edge-factor %d --seed %d", rmat, edgeFactor, seed)
				if b, err = simulate.StatsFromChunks(cmd.Context(), src, fineP, workers, name); err != nil {
					return err
				}
			} else {
				f, err := edgeio.ParseFormat(format)
				if err != nil {
					return fmt.Errorf("--format: %w", err)
				}
				prog.Start("read, clean and orient "+filepath.Base(args[0]), "", -1)
				fwd, _, _, _, err := partition.LoadGraph(cmd.Context(), args[0], edgeio.ReadOptions{Format: f, Workers: workers}, workers)
				if err != nil {
					return err
				}
				if b, err = simulate.ComputeBlockStats(fwd, fineP, workers, args[0]); err != nil {
					return err
				}
			}
			prog.Done()
			if err := simulate.WriteBlockStats(out, b); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d vertices, %d edges, fine P = %d, in %.1f s -> %s\n",
				b.Source, b.Vertices, b.Edges, b.FineP, time.Since(start).Seconds(), out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "statistics file to write (required)")
	cmd.Flags().IntVar(&rmat, "rmat", 0, "generate the R-MAT graph of this scale instead of reading a FILE")
	cmd.Flags().IntVar(&edgeFactor, "edge-factor", 16, "with --rmat: raw edges per vertex")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "with --rmat: random seed")
	cmd.Flags().IntVar(&fineP, "fine-p", simulate.DefaultFineP, "P of the histogram; the simulator can use every P dividing it")
	cmd.Flags().IntVar(&workers, "workers", 0, "CPU worker goroutines (0 = all cores)")
	cmd.Flags().StringVar(&format, "format", "auto", "FILE's format, as trigrid count reads it")
	cmd.Flags().StringVar(&progressMode, "progress", "auto", "progress on stderr: auto (bar on a terminal, log lines otherwise), bar, log, none")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

type benchSimFlags struct {
	shards, stats, model, saveModel, validate, out, workers, fitWorkers, devMem, progress, speeds string
	p, maxSubtasks                                                                                int
	tolerance, maxIR                                                                              float64
	asJSON, fitEach                                                                               bool
}

func newBenchSimulateCommand() *cobra.Command {
	var f benchSimFlags
	cmd := &cobra.Command{
		Use:   "simulate (--shards URL | --stats FILE) --workers 64,256,1024 --cost-model FILE",
		Short: "Predict a job on many workers: the real scheduler on a simulated clock",
		Long: `Run the coordinator's scheduler core on a simulated clock with simulated
workers (one slot, a block cache, prefetch) whose subtasks cost what a cost
model says: a model file (--save-model writes one) or a 'bench scale'
report (scale.json), which is fitted on the spot. The partition comes from a
store's manifest (--shards; its own P) or from block statistics ('trigrid
bench stats'; --stats), from which P is chosen: every P dividing the
statistics' fine P with at least one subtask per worker is simulated at the
largest worker count, and the smallest makespan among those whose time
imbalance ratio is at most --max-ir wins (--partitions fixes P). Reported per worker count: the makespan, the parallel efficiency
T(1)/(N T(N)) against one simulated worker, the workers' busy share, and the
time imbalance ratio IR (max over min busy time). --speeds mixes workers of
different speeds, taken in turn (1,0.1,0.1,0.1: for each worker of the
model's speed, three whose loads, uploads and kernels take ten times as
long); N in the efficiency is then the workers' speeds summed over the
first's. --out DIR receives
simulate.json, simulate.csv, makespan.png and efficiency-ir.png.

--validate scale.json checks the simulator against measurements instead:
it fits the model to the report's runs with --fit-workers workers (unless
--cost-model is given), simulates every worker count the report measured
on the report's partition, and fails when a prediction is off the measured
median job time by more than --tolerance.`,
		Example: `  trigrid bench simulate --validate scale-rmat20/scale.json
  trigrid bench simulate --stats rmat27-stats.json --workers 64,256,1024 --cost-model scale-rmat20/scale.json --out sim-rmat27`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchSimulate(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.shards, "shards", "", "shard store (URL or directory) whose manifest gives the partition")
	fl.StringVar(&f.stats, "stats", "", "block statistics file (trigrid bench stats) to choose P from")
	fl.StringVar(&f.workers, "workers", "64,256,1024", "comma-separated worker counts")
	fl.StringVar(&f.model, "cost-model", "", "cost model file, or a bench scale report (scale.json) to fit one to")
	fl.StringVar(&f.fitWorkers, "fit-workers", "", "fit to the report's runs with these worker counts only (default: all; with --validate: 1)")
	fl.StringVar(&f.saveModel, "save-model", "", "write the cost model used to this file")
	fl.StringVar(&f.validate, "validate", "", "bench scale report to check the simulator's predictions against")
	fl.Float64Var(&f.tolerance, "tolerance", simulate.DefaultTolerance, "with --validate: the largest relative error accepted")
	fl.BoolVar(&f.fitEach, "fit-each", false, "with --validate: fit each worker count's own runs (checks how the simulator composes measured costs, not how they carry over)")
	fl.IntVarP(&f.p, "partitions", "P", 0, "simulate this P (a divisor of the statistics' fine P; default: chosen)")
	fl.IntVar(&f.maxSubtasks, "max-subtasks", 1<<20, "largest number of subtasks a candidate P may have")
	fl.Float64Var(&f.maxIR, "max-ir", simulate.DefaultMaxIR, "choosing P: the largest time imbalance ratio a chosen P may have")
	fl.StringVar(&f.devMem, "device-memory", "0", "memory per subtask a candidate P must fit, e.g. 80GiB (0: not checked)")
	fl.StringVar(&f.speeds, "speeds", "", "the workers' speeds relative to the cost model, taken in turn, e.g. 1,0.1,0.1,0.1 (default: all 1)")
	fl.StringVar(&f.out, "out", "", "directory for simulate.json, simulate.csv and the plots (default: none written)")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fl.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto (bar on a terminal, log lines otherwise), bar, log, none")
	return cmd
}

func runBenchSimulate(cmd *cobra.Command, f *benchSimFlags) error {
	var fitWorkers []int
	if f.fitWorkers != "" {
		var err error
		if fitWorkers, err = parseCounts("--fit-workers", f.fitWorkers); err != nil {
			return err
		}
	}
	if f.validate != "" {
		if f.speeds != "" {
			return errors.New("bench simulate: --speeds does not go with --validate: a bench scale report measures workers of one kind")
		}
		return runSimValidate(cmd, f, fitWorkers)
	}
	if f.model == "" {
		return errors.New("bench simulate: --cost-model FILE (a model or a bench scale report) is required")
	}
	model, err := loadCostModel(f.model, fitWorkers)
	if err != nil {
		return err
	}
	opts := simulate.Options{Model: *model, P: f.p, MaxSubtasks: f.maxSubtasks, MaxIR: f.maxIR}
	if opts.Speeds, err = parseSpeeds(f.speeds); err != nil {
		return err
	}
	if opts.Workers, err = parseCounts("--workers", f.workers); err != nil {
		return err
	}
	if opts.MemBudget, err = parseBytes(f.devMem); err != nil {
		return fmt.Errorf("--device-memory: %w", err)
	}
	opts.MemModel = partition.HostModel()
	stats, err := simStats(cmd, f)
	if err != nil {
		return err
	}
	mode, err := parseProgressMode(f.progress)
	if err != nil {
		return err
	}
	prog := newProgress(cmd.ErrOrStderr(), mode)
	opts.Progress = func(msg string) { prog.Start(msg, "", -1) }
	rep, err := simulate.Run(stats, opts)
	prog.Done()
	if err != nil {
		return err
	}
	if f.saveModel != "" {
		if err := simulate.WriteModel(f.saveModel, model); err != nil {
			return err
		}
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

// parseSpeeds reads --speeds: positive numbers, comma-separated ("": none).
func parseSpeeds(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--speeds %q: %q is not a positive number; want speeds like 1,0.1,0.1", s, part)
		}
		out = append(out, v)
	}
	return out, nil
}

// simStats is the partition --shards or --stats names.
func simStats(cmd *cobra.Command, f *benchSimFlags) (simulate.Stats, error) {
	switch {
	case (f.shards == "") == (f.stats == ""):
		return simulate.Stats{}, errors.New("bench simulate: give --shards URL or --stats FILE, one of them")
	case f.stats != "":
		b, err := simulate.ReadBlockStats(f.stats)
		if err != nil {
			return simulate.Stats{}, fmt.Errorf("bench simulate: --stats: %w", err)
		}
		return simulate.Stats{Source: b.Source, Blocks: b}, nil
	}
	st, err := storage.Open(f.shards)
	if err != nil {
		return simulate.Stats{}, fmt.Errorf("bench simulate: --shards: %w", err)
	}
	m, err := storage.ReadManifest(cmd.Context(), st)
	if err != nil {
		return simulate.Stats{}, fmt.Errorf("bench simulate: --shards: %w", err)
	}
	return simulate.Stats{Source: f.shards, Grid: simulate.GridFromManifest(m)}, nil
}

// loadCostModel reads a model file, or fits one to a bench scale report.
func loadCostModel(path string, fitWorkers []int) (*simulate.Model, error) {
	rep, err := readScaleReport("--cost-model", path)
	if err == nil {
		return simulate.Fit(rep, fitWorkers)
	}
	if !errors.Is(err, errNotScaleReport) {
		return nil, err
	}
	m, err := simulate.ReadModel(path)
	if err != nil {
		return nil, fmt.Errorf("bench simulate: --cost-model: %w", err)
	}
	return m, nil
}

var errNotScaleReport = errors.New("not a bench scale report")

// readScaleReport reads a bench scale report (scale.json) given with
// flag, or errNotScaleReport for JSON of another kind; errors name flag.
func readScaleReport(flag, path string) (*scale.Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench simulate: %s: %w", flag, err)
	}
	var probe struct {
		Kind string            `json:"kind"`
		Runs []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("bench simulate: %s %s: %w", flag, path, err)
	}
	if probe.Kind != "" || probe.Runs == nil {
		return nil, errNotScaleReport
	}
	var rep scale.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("bench simulate: %s %s: %w", flag, path, err)
	}
	return &rep, nil
}

func runSimValidate(cmd *cobra.Command, f *benchSimFlags, fitWorkers []int) error {
	rep, err := readScaleReport("--validate", f.validate)
	if err != nil {
		if errors.Is(err, errNotScaleReport) {
			return fmt.Errorf("--validate %s: %w", f.validate, err)
		}
		return err
	}
	var model *simulate.Model
	switch {
	case f.fitEach && (f.model != "" || fitWorkers != nil):
		return errors.New("bench simulate: --fit-each fits every worker count itself: no --cost-model or --fit-workers")
	case f.fitEach:
	case f.model != "":
		model, err = loadCostModel(f.model, fitWorkers)
	default:
		if fitWorkers == nil {
			fitWorkers = []int{1}
		}
		model, err = simulate.Fit(rep, fitWorkers)
	}
	if err != nil {
		return err
	}
	v, err := simulate.Validate(rep, model, f.tolerance)
	if err != nil {
		return err
	}
	if f.saveModel != "" && model != nil {
		if err := simulate.WriteModel(f.saveModel, model); err != nil {
			return err
		}
	}
	if f.asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
	} else if err := v.WriteTable(cmd.OutOrStdout()); err != nil {
		return err
	}
	if !v.OK {
		return fmt.Errorf("bench simulate: a prediction is %.1f%% off the measured job time, beyond the %.0f%% tolerance",
			100*v.WorstError, 100*v.Tolerance)
	}
	return nil
}
