package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
)

// newBenchCommand is `trigrid bench`, with `bench kernels FILE...`: each
// GPU kernel on each graph, CUDA-event kernel time (median after a
// warm-up), every count checked against the CPU count.
func newBenchCommand() *cobra.Command {
	bench := &cobra.Command{Use: "bench", Short: "Benchmarks"}
	var (
		runs    int
		names   string
		cudaLib string
		asJSON  bool
		workers int
		setList []string
		modes   string
		format  string
		skipBad bool
	)
	k := &cobra.Command{
		Use:   "kernels FILE...",
		Short: "Time every GPU kernel on each graph and verify the counts",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			inFormat, err := edgeio.ParseFormat(format)
			if err != nil {
				return fmt.Errorf("--format: %w", err)
			}
			set, err := kernelSettings(setList)
			if err != nil {
				return err
			}
			lib, err := gpu.Open(gpu.Options{Path: cudaLib, Settings: set})
			if err != nil {
				return fmt.Errorf("bench kernels: %w", err)
			}
			opts := gpu.BenchOptions{Runs: runs}
			if names != "" {
				opts.Kernels = strings.Split(names, ",")
			}
			ms, err := benchModes(modes)
			if err != nil {
				return err
			}
			var rows []gpu.BenchRow
			for _, path := range args {
				edges, _, err := edgeio.ReadFile(cmd.Context(), path, edgeio.ReadOptions{Format: inFormat, SkipBadLines: skipBad, Workers: workers})
				if err != nil {
					return fmt.Errorf("bench kernels: %w", err)
				}
				g, _, _, err := graph.ForwardFromEdges(edges, graph.OrderDegree, workers)
				edges = nil
				if err != nil {
					return fmt.Errorf("bench kernels: %s: %w", path, err)
				}
				cpu, err := kernels.NewCPU("auto", kernels.CPUOptions{Workers: workers})
				if err != nil {
					return err
				}
				want, err := cpu.Count(cmd.Context(), kernels.Whole(g))
				if err != nil {
					return fmt.Errorf("bench kernels: %s: cpu count: %w", path, err)
				}
				for _, m := range ms {
					opts.Mode = m
					r, err := lib.Bench(cmd.Context(), filepath.Base(path), g, want.Triangles, opts)
					rows = append(rows, r...)
					if err != nil {
						return err
					}
				}
			}
			return printBench(cmd, rows, asJSON)
		},
	}
	k.Flags().IntVar(&runs, "runs", 5, "timed runs per kernel (median reported)")
	k.Flags().StringVar(&names, "kernels", "", "comma-separated kernels (default: "+strings.Join(gpu.Kernels(), ",")+")")
	k.Flags().StringVar(&cudaLib, "cuda-lib", "", "path of libtrigrid_cuda.so")
	k.Flags().BoolVar(&asJSON, "json", false, "print JSON rows")
	k.Flags().StringVar(&modes, "modes", "total", "comma-separated: total (triangles only), vertex (per-vertex counts), edge (per-vertex and per-edge counts); vertex and edge run the kernels with a per-vertex mode ("+strings.Join(gpu.LocalKernels(), ", ")+") unless --kernels names others")
	k.Flags().IntVar(&workers, "workers", 0, "CPU workers for loading and the reference count (0 = all cores)")
	k.Flags().StringVar(&format, "format", "auto", "input format, as trigrid count reads it (auto: from extension and content)")
	k.Flags().BoolVar(&skipBad, "skip-bad-lines", false, "skip lines that are not edges")
	addKernelSettingFlag(k, &setList)
	bench.AddCommand(k)
	bench.AddCommand(newBenchE2ECommand())
	bench.AddCommand(newBenchScaleCommand())
	bench.AddCommand(newBenchSimulateCommand())
	bench.AddCommand(newBenchStatsCommand())
	return bench
}

func printBench(cmd *cobra.Command, rows []gpu.BenchRow, asJSON bool) error {
	out := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "graph\tedges\tkernel\tmode\tran\tmedian ms\tmin ms\tmax ms\twall ms\truns\ttriangles\tok\t")
	bad := 0
	for _, r := range rows {
		ok := "ok"
		if !r.OK {
			ok = "FAIL " + r.Err
			bad++
		}
		mode := r.Mode
		if mode == "" {
			mode = "total"
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t\n", r.Graph, r.Edges, r.Kernel, mode, r.Ran,
			benchMS(r.MedianMS), benchMS(r.MinMS), benchMS(r.MaxMS), benchMS(r.WallMS), r.Runs, r.Triangles, ok)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("bench kernels: %d kernel runs failed or miscounted", bad)
	}
	return nil
}

// benchMS writes a time in milliseconds for bench kernels' table: three
// decimals, four below 1 ms, where a small graph's kernel takes a few
// hundredths and a third decimal is a tenth of the figure.
func benchMS(ms float64) string {
	if ms < 1 {
		return strconv.FormatFloat(ms, 'f', 4, 64)
	}
	return strconv.FormatFloat(ms, 'f', 3, 64)
}

// benchModes parses --modes into gpu.BenchOptions modes ("" is total).
func benchModes(list string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(list, ",") {
		switch m = strings.TrimSpace(m); m {
		case "total":
			out = append(out, "")
		case "vertex", "edge":
			out = append(out, m)
		default:
			return nil, fmt.Errorf("--modes: %q is not total, vertex or edge", m)
		}
	}
	return out, nil
}
