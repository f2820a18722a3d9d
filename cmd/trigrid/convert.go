package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/graph/edgeio"
)

func newConvertCommand() *cobra.Command {
	var inFormat, outFormat, compress, progressFlag string
	var skipBad, quiet bool
	var workers int
	cmd := &cobra.Command{
		Use:   "convert IN OUT",
		Short: "Convert an edge file between formats (text, Matrix Market, binary; gzip/zstd)",
		Long: `Convert an edge file between formats. The edges are copied as they are (no
cleaning); ids of Matrix Market input become 0-based. IN may be '-' for
standard input. The output format follows OUT's extension or --to.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := edgeio.ParseFormat(inFormat)
			if err != nil {
				return fmt.Errorf("--format: %w", err)
			}
			out, err := edgeio.ParseFormat(outFormat)
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			mode, err := parseProgressMode(progressFlag)
			if err != nil {
				return err
			}
			prog := newProgress(cmd.ErrOrStderr(), mode)
			start := time.Now()
			prog.Start("read", "bytes", -1)
			edges, st, err := edgeio.ReadFile(cmd.Context(), args[0], edgeio.ReadOptions{Format: in, SkipBadLines: skipBad, Workers: workers, Progress: prog.Func()})
			prog.Done()
			if err != nil {
				return err
			}
			prog.Start("write", "", -1)
			err = edgeio.WriteFileContext(cmd.Context(), args[1], edges, edgeio.WriteOptions{Format: out, Compression: compress, Workers: workers})
			prog.Done()
			if err != nil {
				return err
			}
			if !quiet {
				fmt.Fprintf(cmd.OutOrStdout(), "converted %d edges from %s (%s) to %s in %s", len(edges), args[0], st.Format, args[1], time.Since(start).Round(time.Millisecond))
				if st.HeaderLine > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "; skipped line %d as a column header: %q", st.HeaderLine, st.Header)
				}
				if st.BadLines > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "; skipped %d bad lines", st.BadLines)
				}
				fmt.Fprintln(cmd.OutOrStdout())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&inFormat, "format", "auto", "input format: auto, edgelist, tsv, mtx, bin, metis, adjlist, dimacs, sg, wsg")
	cmd.Flags().StringVar(&outFormat, "to", "auto", "output format: auto (from OUT's extension), edgelist, tsv, mtx, bin")
	cmd.Flags().StringVar(&compress, "compress", "", "output compression: gzip or zstd (default: from the extension)")
	cmd.Flags().BoolVar(&skipBad, "skip-bad-lines", false, "skip lines that are not edges (counted in the report)")
	cmd.Flags().IntVar(&workers, "workers", 0, "worker goroutines (0 = all cores)")
	cmd.Flags().StringVar(&progressFlag, "progress", "auto", "progress on stderr: auto, bar, log, none")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print nothing on success")
	return cmd
}
