package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/graph/gen"
)

type genFlags struct {
	seed     uint64
	out      string
	format   string
	compress string
	workers  int
	quiet    bool
	progress string
}

// startGen checks the progress flag; -q silences progress too.
func (f *genFlags) startGen(cmd *cobra.Command) (*progress, error) {
	mode, err := parseProgressMode(f.progress)
	if err != nil {
		return nil, err
	}
	if f.quiet {
		mode = progressNone
	}
	return newProgress(cmd.ErrOrStderr(), mode), nil
}

func newGenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Generate synthetic graphs (rmat, er)",
		Long: `Generate synthetic graphs as raw edge lists (duplicates and self-loops kept,
as Graph500 does). The same seed gives the same file whatever the number of
cores. The output format follows the extension of -o (.bin binary, .mtx Matrix
Market, .tsv tab-separated, otherwise space-separated text; .gz/.zst compress)
or --format. -o - writes to standard output in the binary format unless
--format says otherwise: its header gives the edge count, so a reader of a
stream cut short (a generator that died) fails instead of counting part of it.`,
	}
	cmd.AddCommand(newGenRMATCommand(), newGenERCommand())
	return cmd
}

func addGenFlags(cmd *cobra.Command, f *genFlags) {
	cmd.Flags().Uint64Var(&f.seed, "seed", 1, "random seed")
	cmd.Flags().StringVarP(&f.out, "output", "o", "", "output file (required)")
	cmd.Flags().StringVar(&f.format, "format", "auto", "output format: auto (from the extension; bin for -o -), edgelist, tsv, mtx, bin")
	cmd.Flags().StringVar(&f.compress, "compress", "", "compression: gzip or zstd (default: from the extension)")
	cmd.Flags().IntVar(&f.workers, "workers", 0, "worker goroutines (0 = all cores)")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "print nothing on success (no progress either)")
	cmd.Flags().StringVar(&f.progress, "progress", "auto", "progress on stderr: auto (bar on a terminal, log lines otherwise), bar, log, none")
	_ = cmd.MarkFlagRequired("output")
}

func newGenRMATCommand() *cobra.Command {
	var f genFlags
	var scale, edgeFactor int
	cmd := &cobra.Command{
		Use:   "rmat --scale S --edge-factor F -o FILE",
		Short: "Graph500 Kronecker (R-MAT a=0.57 b=0.19 c=0.19 d=0.05) with permuted labels",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			src, err := gen.RMATSource(scale, edgeFactor, f.seed)
			if err != nil {
				return fmt.Errorf("--scale %d --edge-factor %d: %w", scale, edgeFactor, err)
			}
			return writeGenerated(cmd, &f, src, start)
		},
	}
	cmd.Flags().IntVar(&scale, "scale", 16, "log2 of the number of vertices")
	cmd.Flags().IntVar(&edgeFactor, "edge-factor", 16, "raw edges per vertex")
	addGenFlags(cmd, &f)
	return cmd
}

func newGenERCommand() *cobra.Command {
	var f genFlags
	var n, m uint64
	cmd := &cobra.Command{
		Use:   "er --vertices N --edges M -o FILE",
		Short: "Erdős–Rényi G(n, m): m edges drawn uniformly between n vertices",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			src, err := gen.ERSource(n, m, f.seed)
			if err != nil {
				return fmt.Errorf("--vertices %d --edges %d: %w", n, m, err)
			}
			return writeGenerated(cmd, &f, src, start)
		},
	}
	cmd.Flags().Uint64Var(&n, "vertices", 1<<16, "number of vertices")
	cmd.Flags().Uint64Var(&m, "edges", 1<<20, "number of raw edges")
	addGenFlags(cmd, &f)
	return cmd
}

// writeGenerated streams src into the output: its chunks are generated
// and encoded in parallel and written in order, so that no more than a
// few chunks a worker are ever held (a graph larger than memory streams
// through -o -).
func writeGenerated(cmd *cobra.Command, f *genFlags, src *gen.Source, start time.Time) error {
	format, err := edgeio.ParseFormat(f.format)
	if err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if f.out == "-" && format == edgeio.FormatAuto {
		// A stream has no extension; binary, so that a cut shows
		// (docs/decisions/2026-12-01-cut-text-streams.md).
		format = edgeio.FormatBin
	}
	prog, err := f.startGen(cmd)
	if err != nil {
		return err
	}
	// Progress goes to stderr: with -o - the graph itself is on stdout.
	prog.Start("generate", "edges", src.Len())
	err = edgeio.WriteChunksFileContext(cmd.Context(), f.out, src, edgeio.WriteOptions{Format: format, Compression: f.compress, Workers: f.workers,
		Progress: prog.Func()})
	prog.Done()
	if err != nil {
		return err
	}
	if !f.quiet {
		fmt.Fprintf(f.summaryTo(cmd), "wrote %d raw edges to %s in %s\n", src.Len(), f.out, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// summaryTo is where the closing summary goes: standard output, unless the
// edges themselves go there (-o -), when it goes to standard error with
// the progress so that the stream on standard output holds only edges.
func (f *genFlags) summaryTo(cmd *cobra.Command) io.Writer {
	if f.out == "-" {
		return cmd.ErrOrStderr()
	}
	return cmd.OutOrStdout()
}
