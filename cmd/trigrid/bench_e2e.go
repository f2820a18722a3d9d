package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/pipeline"
)

// e2eFlags are the flags of `trigrid bench e2e`.
type e2eFlags struct {
	runs    int
	asJSON  bool
	device  string
	kernel  string
	cudaLib string
	workers int
	format  string
	// exe is the binary each run starts; empty means this process's own
	// executable. Tests point it at the test binary.
	exe string
}

// e2eRun is one fresh `trigrid count --json` process: its report and what
// the kernel measured of the process as a whole.
type e2eRun struct {
	Report *pipeline.Report
	// Wall is the child's whole life, from fork to exit: start-up, read,
	// clean, order, count and the JSON report.
	Wall time.Duration
	// CPU is the child's user plus system time.
	CPU time.Duration
	// PeakRSS is the child's maximum resident set size in bytes, from its
	// rusage.
	PeakRSS int64
}

// E2ERow is the median of N runs on one file, the row of the phase table
// and the element of `bench e2e --json`. Every field is the median of its
// own runs; Triangles is the same in every run or the bench fails.
type E2ERow struct {
	Graph     string  `json:"graph"`
	Edges     int64   `json:"edges"`
	Triangles uint64  `json:"triangles"`
	Device    string  `json:"device"`
	Kernel    string  `json:"kernel"`
	Fallback  string  `json:"fallback,omitempty"`
	Runs      int     `json:"runs"`
	Read      float64 `json:"read_s"`
	Clean     float64 `json:"clean_s"`
	Order     float64 `json:"order_s"`
	Count     float64 `json:"count_s"`
	KernelS   float64 `json:"kernel_s"`
	// DeviceWait is the count's wait for its device after the read
	// (pipeline.Phases.DeviceWait), part of Total.
	DeviceWait float64 `json:"device_wait_s"`
	// Write is the time spent checking and writing per-vertex and per-edge
	// counts (pipeline.Phases.Write), part of Total.
	Write float64 `json:"write_s,omitempty"`
	Total float64 `json:"total_s"`
	Whole float64 `json:"whole_process_s"`
	// Outside is the median over runs of the whole process less the
	// report's in-process total: start-up before the count begins (such as
	// loading and initialising a GPU library) and the exit after it.
	Outside   float64 `json:"outside_s"`
	WholeMin  float64 `json:"whole_process_min_s"`
	WholeMax  float64 `json:"whole_process_max_s"`
	CPU       float64 `json:"cpu_s"`
	PeakBytes int64   `json:"host_peak_bytes"`
	// InputBytes is the size of the file as read (compressed size for a
	// compressed file).
	InputBytes int64 `json:"input_bytes"`
}

func newBenchE2ECommand() *cobra.Command {
	var f e2eFlags
	cmd := &cobra.Command{
		Use:   "e2e [flags] FILE... [-- COUNT FLAGS]",
		Short: "Time whole `trigrid count` processes phase by phase (median of N fresh runs)",
		Long: `Count each FILE --runs times, each time in a fresh child process of this
binary ('trigrid count --json'), and print the median of every phase: read,
clean, order, count (and the kernel within it), the in-process total, the
whole process from start to exit and the part of it outside the in-process
total (start-up and exit), its CPU time (user + system) and its host peak
memory (maximum resident set size). A run that fails, or runs that
disagree on the triangle count, fail the bench. Flags after '--' go to
'trigrid count' unchanged.`,
		Example: `  trigrid bench e2e --runs 5 rmat22.bin rmat22.txt
  trigrid bench e2e --json --device gpu g.bin -- --kernel-setting wetric.block=256`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, extra := args, []string(nil)
			if d := cmd.ArgsLenAtDash(); d >= 0 {
				files, extra = args[:d], args[d:]
			}
			if len(files) == 0 {
				return errors.New("bench e2e: give at least one FILE before '--'")
			}
			return runBenchE2E(cmd, &f, files, extra)
		},
	}
	cmd.Flags().IntVar(&f.runs, "runs", 5, "fresh processes per file (the median is reported)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON rows")
	cmd.Flags().StringVar(&f.device, "device", "auto", "passed to count: auto, cpu, gpu")
	cmd.Flags().StringVar(&f.kernel, "kernel", "auto", "passed to count")
	cmd.Flags().StringVar(&f.cudaLib, "cuda-lib", "", "passed to count: path of libtrigrid_cuda.so")
	cmd.Flags().IntVar(&f.workers, "workers", 0, "passed to count: CPU workers (0 = all cores)")
	cmd.Flags().StringVar(&f.format, "format", "auto", "passed to count: input format")
	return cmd
}

func runBenchE2E(cmd *cobra.Command, f *e2eFlags, files, extra []string) error {
	if f.runs < 1 {
		return fmt.Errorf("--runs %d: must be 1 or more", f.runs)
	}
	if f.workers < 0 {
		return fmt.Errorf("--workers %d: must be 0 (all cores) or more", f.workers)
	}
	exe := f.exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("bench e2e: finding this binary: %w", err)
		}
	}
	base := []string{"count", "--json", "--progress", "none", "--device", f.device, "--kernel", f.kernel,
		"--workers", fmt.Sprint(f.workers), "--format", f.format}
	if f.cudaLib != "" {
		base = append(base, "--cuda-lib", f.cudaLib)
	}
	base = append(base, extra...)
	var rows []E2ERow
	for _, path := range files {
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("bench e2e: %w", err)
		}
		runs := make([]e2eRun, 0, f.runs)
		for i := 0; i < f.runs; i++ {
			r, err := runCountChild(cmd.Context(), exe, append(append([]string(nil), base...), path))
			if err != nil {
				return fmt.Errorf("bench e2e: %s: run %d: %w", path, i+1, err)
			}
			runs = append(runs, r)
		}
		row, err := e2eMedian(filepath.Base(path), runs)
		if err != nil {
			return fmt.Errorf("bench e2e: %s: %w", path, err)
		}
		rows = append(rows, row)
	}
	return printE2E(cmd, rows, f.asJSON)
}

// runCountChild runs one `trigrid count --json` process to its end and
// reads its report and rusage.
func runCountChild(ctx context.Context, exe string, args []string) (e2eRun, error) {
	c := exec.CommandContext(ctx, exe, args...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	wall := time.Since(start)
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "no message on stderr"
		}
		return e2eRun{}, fmt.Errorf("trigrid %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	var rep pipeline.Report
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&rep); err != nil {
		return e2eRun{}, fmt.Errorf("reading the report of trigrid %s: %w", strings.Join(args, " "), err)
	}
	run := e2eRun{Report: &rep, Wall: wall}
	if ps := c.ProcessState; ps != nil {
		run.CPU = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			run.PeakRSS = maxRSSBytes(ru)
		}
	}
	return run, nil
}

// maxRSSBytes converts ru_maxrss to bytes: kilobytes on Linux, bytes on
// macOS.
func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}

// e2eMedian folds the runs of one file into a row of medians. Runs that
// disagree on the graph or its count are an error, not a median.
func e2eMedian(graph string, runs []e2eRun) (E2ERow, error) {
	if len(runs) == 0 {
		return E2ERow{}, errors.New("no runs")
	}
	first := runs[0].Report
	row := E2ERow{Graph: graph, Edges: first.Edges, Triangles: first.Triangles, Device: first.Device,
		Kernel: first.Kernel, Fallback: first.Fallback, Runs: len(runs)}
	if first.Input != nil {
		row.InputBytes = first.Input.Bytes
	}
	for i, r := range runs[1:] {
		if r.Report.Triangles != first.Triangles || r.Report.Edges != first.Edges {
			return E2ERow{}, fmt.Errorf("run %d counted %d triangles in %d edges, run 1 %d in %d",
				i+2, r.Report.Triangles, r.Report.Edges, first.Triangles, first.Edges)
		}
	}
	pick := func(get func(e2eRun) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = get(r)
		}
		return median(v)
	}
	row.Read = pick(func(r e2eRun) float64 { return r.Report.Seconds.Read })
	row.Clean = pick(func(r e2eRun) float64 { return r.Report.Seconds.Clean })
	row.Order = pick(func(r e2eRun) float64 { return r.Report.Seconds.Order })
	row.Count = pick(func(r e2eRun) float64 { return r.Report.Seconds.Count })
	row.KernelS = pick(func(r e2eRun) float64 { return r.Report.Seconds.Kernel })
	row.DeviceWait = pick(func(r e2eRun) float64 { return r.Report.Seconds.DeviceWait })
	row.Write = pick(func(r e2eRun) float64 { return r.Report.Seconds.Write })
	row.Total = pick(func(r e2eRun) float64 { return r.Report.Seconds.Total })
	row.Whole = pick(func(r e2eRun) float64 { return r.Wall.Seconds() })
	row.Outside = pick(func(r e2eRun) float64 { return r.Wall.Seconds() - r.Report.Seconds.Total })
	row.CPU = pick(func(r e2eRun) float64 { return r.CPU.Seconds() })
	row.PeakBytes = int64(pick(func(r e2eRun) float64 { return float64(r.PeakRSS) }))
	row.WholeMin, row.WholeMax = runs[0].Wall.Seconds(), runs[0].Wall.Seconds()
	for _, r := range runs {
		row.WholeMin = min(row.WholeMin, r.Wall.Seconds())
		row.WholeMax = max(row.WholeMax, r.Wall.Seconds())
	}
	return row, nil
}

// median returns the middle value of v (the mean of the two middle values
// for an even count); v is sorted in place.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func printE2E(cmd *cobra.Command, rows []E2ERow, asJSON bool) error {
	out := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "graph\tedges\ttriangles\tran on\tread s\t(device wait s)\tclean s\torder s\tcount s\t(kernel s)\twhole process s\t(outside s)\tcpu s\thost peak\truns\t")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%d\t%d\t%s %s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%d\t\n", r.Graph, r.Edges, r.Triangles,
			r.Kernel, r.Device, r.Read, r.DeviceWait, r.Clean, r.Order, r.Count, r.KernelS, r.Whole, r.Outside, r.CPU, humanBytes(r.PeakBytes), r.Runs)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Fallback != "" {
			fmt.Fprintf(out, "%s: counted on the CPU: %s\n", r.Graph, r.Fallback)
		}
	}
	return nil
}
