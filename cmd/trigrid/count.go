package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/pipeline"
)

// countFlags are the flags of `trigrid count`; loading flags are shared
// with the commands that read graphs.
type countFlags struct {
	load       loadFlags
	device     deviceFlags
	asJSON     bool
	explain    bool
	verify     bool
	partitions int
	scheme     string
	rowStream  string
	rowRanges  string
	shards     string
	perVertex  perVertexFlags
}

// loadFlags say how a graph file is read and prepared.
type loadFlags struct {
	format   string
	skipBad  bool
	order    string
	workers  int
	progress string
}

func (f *loadFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.format, "format", "auto", "input format: auto (content, then extension), edgelist, tsv, mtx, bin, metis, adjlist, dimacs, sg, wsg")
	cmd.Flags().BoolVar(&f.skipBad, "skip-bad-lines", false, "skip lines that are not edges (counted in the report)")
	cmd.Flags().StringVar(&f.order, "order", "degree", "vertex order for orientation: degree, degeneracy")
	cmd.Flags().IntVar(&f.workers, "workers", 0, "CPU worker goroutines (0 = all cores)")
	cmd.Flags().StringVar(&f.progress, "progress", "auto", "progress on stderr: auto (bar on a terminal, log lines otherwise), bar, log, none")
}

// config turns the flags into the library's configuration.
func (f *loadFlags) config(cmd *cobra.Command) (pipeline.Config, *progress, error) {
	cfg := pipeline.DefaultConfig()
	format, err := edgeio.ParseFormat(f.format)
	if err != nil {
		return cfg, nil, fmt.Errorf("--format: %w", err)
	}
	order, err := graph.ParseOrder(f.order)
	if err != nil {
		return cfg, nil, fmt.Errorf("--order: %w", err)
	}
	if f.workers < 0 {
		return cfg, nil, fmt.Errorf("--workers %d: must be 0 (all cores) or more", f.workers)
	}
	mode, err := parseProgressMode(f.progress)
	if err != nil {
		return cfg, nil, err
	}
	prog := newProgress(cmd.ErrOrStderr(), mode)
	cfg.Read = edgeio.ReadOptions{Format: format, SkipBadLines: f.skipBad, Workers: f.workers}
	cfg.Order = order
	cfg.Workers = f.workers
	cfg.Progress = prog
	cfg.Logger = slog.Default()
	return cfg, prog, nil
}

func newCountCommand() *cobra.Command {
	var f countFlags
	cmd := &cobra.Command{
		Use:   "count [flags] FILE...",
		Short: "Count the triangles of graph files exactly",
		Long: `Count the triangles of each FILE exactly: read it, clean it to the simple
undirected graph (symmetrize, drop self-loops and duplicates, compact ids),
order and orient it, and count on a GPU or on the CPU. FILE may be '-' for
standard input. With --partitions the graph is split into P x P blocks and
counted as P^3 subtasks; with --shards the blocks come from a directory made by
'trigrid partition'. The report (and --json's "plan" object) says how the count
ran and why; --explain prints that plan without counting, chosen from the
file's size (an estimate: a count chooses again from the graph it read).`,
		Example: `  trigrid count testdata/ca-GrQc.txt.gz
  trigrid count --json --kernel merge graph.mtx.gz
  trigrid count --explain --device-mem-limit 8GiB graph.bin
  trigrid count --partitions 4 --scheme range graph.bin
  trigrid count --shards /data/graph.shards`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCount(cmd, &f, args)
		},
	}
	f.load.add(cmd)
	f.device.add(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print one JSON object per graph instead of the report")
	cmd.Flags().BoolVar(&f.explain, "explain", false, "print how each FILE would be counted and why (from the file's size), without counting")
	cmd.Flags().BoolVar(&f.verify, "verify", false, "recount with the slow reference kernel and fail on a mismatch")
	cmd.Flags().IntVarP(&f.partitions, "partitions", "P", 1, "split into P x P blocks (1 = whole graph, 0 = smallest P that fits --device-mem-limit)")
	cmd.Flags().StringVar(&f.rowRanges, "row-ranges", "auto", "one GPU, whole graph larger than its memory: count it in row ranges with its columns in host memory (on, and auto), or in blocks as --partitions 0 does (off)")
	cmd.Flags().StringVar(&f.rowStream, "row-stream", "auto", "one GPU, partitioned: keep each subtask's JK block resident and stream IJ and IK through it in row ranges beside the kernel: auto (when --device-mem-limit leaves no room for three blocks and an index), on, off")
	cmd.Flags().StringVar(&f.scheme, "scheme", "hash", "2D partitioning scheme: hash (TRUST) or range (TriX)")
	cmd.Flags().StringVar(&f.shards, "shards", "", "count a partitioned graph from this shard directory (or store URL)")
	f.perVertex.add(cmd)
	return cmd
}

func runCount(cmd *cobra.Command, f *countFlags, args []string) error {
	if f.shards == "" && len(args) == 0 {
		return fmt.Errorf("count: give at least one FILE, or --shards DIR")
	}
	if f.shards != "" && len(args) > 0 {
		return fmt.Errorf("count: give either FILEs or --shards, not both")
	}
	if f.partitions < 0 {
		return fmt.Errorf("--partitions %d: must be 0 (auto) or more", f.partitions)
	}
	if err := f.checkMode(cmd); err != nil {
		return err
	}
	cfg, prog, err := f.load.config(cmd)
	if err != nil {
		return err
	}
	cfg.Verify = f.verify
	if cfg.RowRanges, err = pipeline.ParseStreamMode(f.rowRanges); err != nil {
		return fmt.Errorf("--row-ranges: %w", err)
	}
	if cfg.PerVertex, err = f.perVertex.options(len(args)); err != nil {
		return err
	}
	if err := f.perVertex.checkPaths(append([]string{f.shards}, args...)...); err != nil {
		return err
	}
	if err := checkLocalKernel(cfg.PerVertex.Wanted(), f.device.kernel); err != nil {
		return err
	}
	// A partitioned count shows progress in subtasks; the kernels' own
	// progress within each subtask would fight over the same bar.
	kernelProg := prog
	if f.partitions != 1 || f.shards != "" {
		kernelProg = nil
	}
	if cfg.DeviceLimit, err = f.device.deviceLimit(); err != nil {
		return err
	}
	// A device that may be a GPU is chosen by the count itself, while it
	// reads the file or decodes a store's first blocks. P = 0 sizes its
	// blocks by the selected device, so it selects first unless
	// --device-mem-limit gives the budget (the memory model then follows
	// the device the count starts while the file is read).
	if (f.shards != "" || f.partitions != 0 || f.device.memLim != "") && f.device.mayUseGPU() {
		f.device.deferApply(&cfg, kernelProg)
	} else if err := f.device.apply(&cfg, kernelProg); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.explain {
		return explainCount(cmd, f, cfg, args)
	}
	if f.shards != "" {
		rep, err := countShards(cmd, f, cfg)
		if err != nil {
			return err
		}
		f.device.annotate(rep)
		return printReport(out, rep, f.asJSON, f.device.settings)
	}
	for _, path := range args {
		rep, err := countOne(cmd, f, cfg, path)
		if err != nil {
			return err
		}
		noteNoEdges(cmd.ErrOrStderr(), path, rep)
		f.device.annotate(rep)
		if err := printReport(out, rep, f.asJSON, f.device.settings); err != nil {
			return err
		}
		cfg.Logger.Debug("report written", "file", path)
	}
	return nil
}

// explainCount prints the plan of a count of each path, counting none.
func explainCount(cmd *cobra.Command, f *countFlags, cfg pipeline.Config, paths []string) error {
	if f.shards != "" {
		return fmt.Errorf("count --explain: give FILEs; a count of --shards has no plan to choose")
	}
	if f.partitions != 1 {
		if err := f.partitionConfig(&cfg); err != nil {
			return err
		}
	}
	for _, path := range paths {
		e, err := pipeline.Explain(cmd.Context(), path, cfg)
		if err != nil {
			return err
		}
		if f.asJSON {
			if err := json.NewEncoder(cmd.OutOrStdout()).Encode(e); err != nil {
				return err
			}
			continue
		}
		if _, err := io.WriteString(cmd.OutOrStdout(), e.String()); err != nil {
			return err
		}
	}
	return nil
}

func countOne(cmd *cobra.Command, f *countFlags, cfg pipeline.Config, path string) (*pipeline.Report, error) {
	if f.partitions == 1 {
		return pipeline.CountFile(cmd.Context(), path, cfg)
	}
	if err := f.partitionConfig(&cfg); err != nil {
		return nil, err
	}
	return pipeline.CountFilePartitioned(cmd.Context(), path, cfg)
}

// printReport writes rep for people or as JSON; settings are the
// --kernel-setting pairs the count ran with (shown when given).
func printReport(w io.Writer, rep *pipeline.Report, asJSON bool, settings []string) error {
	set, _ := gpu.ParseSettings(settings) // parsed without error before the count
	if rep.Device == "cpu" {
		set = nil // a CPU fallback ran no GPU kernel
	}
	if asJSON {
		enc := json.NewEncoder(w)
		return enc.Encode(reportJSON{Report: rep, KernelSettings: set})
	}
	name := rep.File
	if name == "" {
		name = rep.Shards
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", name)
	row := func(k, v string) { fmt.Fprintf(&b, "  %-12s %s\n", k, v) }
	row("triangles", commas(rep.Triangles))
	row("vertices", commas(uint64(rep.Vertices)))
	row("edges", commas(uint64(rep.Edges)))
	row("wedges", commas(rep.Wedges))
	fwd := notRecorded
	if rep.MaxOutDegree != nil {
		fwd = commas(uint64(*rep.MaxOutDegree))
	}
	deg := fmt.Sprintf("%s (forward %s)", commas(uint64(rep.MaxDegree)), fwd)
	if rep.Degeneracy > 0 {
		deg += fmt.Sprintf(", degeneracy %s", commas(uint64(rep.Degeneracy)))
	}
	row("max degree", deg)
	if r := rep.Removed; r != nil {
		removed := removedText(r.SelfLoops, r.Duplicates, r.IsolatedIDs, r.BadLines)
		if r.UnusedDeclaredIDs > 0 && rep.Input != nil {
			removed += fmt.Sprintf("; %s unused (the file declares %s)", nouns(r.UnusedDeclaredIDs, "declared id"), commas(rep.Input.DeclaredVertices))
		}
		row("removed", removed)
	} else {
		row("removed", notRecorded)
	}
	if rep.Input == nil {
		row("input", notRecorded)
	} else {
		in := fmt.Sprintf("%s, %s, %s", rep.Input.Format, humanBytes(rep.Input.Bytes), nouns(uint64(rep.Input.RawEdges), "raw edge"))
		if rep.Input.Compression != "" {
			in = rep.Input.Compression + " " + in
		}
		if rep.Input.Member != "" {
			in += fmt.Sprintf(", %s member %s", rep.Input.Archive, rep.Input.Member)
		}
		row("input", in)
	}
	if rep.Input != nil && rep.Input.HeaderLine > 0 {
		row("header", fmt.Sprintf("line %d skipped as a column header: %q", rep.Input.HeaderLine, rep.Input.Header))
	}
	kern := fmt.Sprintf("%s on %s, %s order", rep.Kernel, rep.Device, rep.Order)
	if p := rep.Partition; p != nil {
		kern += fmt.Sprintf("; %s scheme, P=%d, %d blocks, %d subtasks", p.Scheme, p.P, p.Blocks, len(p.Subtasks))
	}
	row("kernel", kern)
	if rep.Fallback != "" {
		if k := rep.KernelRequested; k != "" && k != "auto" {
			row("fallback", fmt.Sprintf("asked for %s, counted on the CPU: %s", k, rep.Fallback))
		} else {
			row("fallback", "counted on the CPU: "+rep.Fallback)
		}
	}
	if len(set) > 0 {
		row("settings", set.String())
	}
	if d := rep.DeviceMemory; d != nil {
		row("device", fmt.Sprintf("peak %s, %s copied in %d uploads (%d ahead of their subtask), %d split, idle %.0f%%",
			humanBytes(int64(d.PeakBytes)), humanBytes(int64(d.CopiedBytes)), d.Uploads, d.UploadsAhead, d.Splits, 100*d.IdleShare))
	}
	if e := rep.Engine; e != nil {
		row("engine", engineText(e))
	}
	s := rep.Seconds
	times := fmt.Sprintf("read %.3fs  clean %.3fs  order %.3fs", s.Read, s.Clean, s.Order)
	if s.DeviceWait >= 0.0005 {
		times = fmt.Sprintf("read %.3fs  device wait %.3fs  clean %.3fs  order %.3fs", s.Read, s.DeviceWait, s.Clean, s.Order)
	}
	if s.Partition > 0 {
		times += fmt.Sprintf("  partition %.3fs", s.Partition)
	}
	times += fmt.Sprintf("  count %.3fs (kernel %.3fs)", s.Count, s.Kernel)
	if s.Write > 0 {
		times += fmt.Sprintf("  write %.3fs", s.Write)
	}
	times += fmt.Sprintf("  total %.3fs", s.Total)
	row("time", times)
	row("rate", humanCount(rep.EdgesPerSecond)+" edges/s")
	printPerVertex(row, rep)
	if rep.Verified {
		row("verified", "the reference kernel agrees")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// notRecorded stands for a figure the source (an older or in-memory
// shard manifest) does not carry: unknown is never printed as 0.
const notRecorded = "not recorded"

// commas formats n with thousands separators: counts are read by people.
func commas(n uint64) string {
	s := fmt.Sprint(n)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
