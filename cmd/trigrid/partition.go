package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/pipeline"
	"github.com/trigrid/trigrid/storage"
)

func newPartitionCommand() *cobra.Command {
	var load loadFlags
	var out, scheme, memLimit, tmpDir string
	var p int
	var asJSON, force bool
	cmd := &cobra.Command{
		Use:   "partition FILE -o DIR",
		Short: "Split a graph into P x P compressed shards for distributed or out-of-core counting",
		Long: `Read, clean and orient FILE (degree order), split it into P x P blocks with the
hash (TRUST) or range (TriX) scheme, and store each non-empty block as a
compressed, checksummed shard plus a manifest in DIR (a path or file:// URL).
The partitioner streams the input and spills compressed runs to --tmp-dir,
its process's resident memory never above --mem-limit, so graphs larger than
the machine's memory can be partitioned; its shards are byte-identical to those
of an in-memory split. Its buffers take at most 256 MiB (the fastest size
measured); the rest of the limit holds the per-vertex arrays, the blocks being
written and the shard encoders (one per core). A limit below the least the
partitioner works in is refused, naming that least. Without
--mem-limit, an uncompressed input small enough to need under 1 GiB (at most
an eighth of the machine) is split in memory, which is faster for it; any
other streams with half of the machine's memory as its limit.

DIR must be empty or hold an earlier partitioning, which --force replaces: the
new one is written beside it (.DIR.trigrid-new-*) and swapped in only once
complete, so a run that fails leaves the old one as it was. A run locks DIR
(.DIR.trigrid-lock beside it) for its whole length: a second run into it fails
at once, naming the first. The manifest is written last, atomically; an
interrupted or failed run (Ctrl-C, SIGTERM) removes what it wrote and its spill
files, and the next run removes the spill directories and unfinished
partitionings of runs that were killed outright.`,
		Example: `  trigrid partition graph.bin -o graph.shards -P 4
  trigrid partition huge.txt.zst -o /scratch/huge -P 16 --scheme range --mem-limit 8GiB`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sch, err := storage.ParseScheme(scheme)
			if err != nil {
				return fmt.Errorf("--scheme: %w", err)
			}
			if p < 1 {
				return fmt.Errorf("-P %d: must be at least 1", p)
			}
			// Without --mem-limit: in memory for inputs surely small, else
			// streaming (the same bytes in a fraction of the memory) with
			// half of this machine's memory as the ceiling; see
			// partition.DefaultMemLimit.
			lim := partition.DefaultMemLimit(args[0], hostMemory())
			if memLimit != "" {
				if lim, err = parseBytes(memLimit); err != nil {
					return fmt.Errorf("--mem-limit: %w", err)
				}
			}
			if load.order != "degree" {
				return fmt.Errorf("--order %s: partitioning uses degree order", load.order)
			}
			cfg, prog, err := load.config(cmd)
			if err != nil {
				return err
			}
			output, err := openPartitionOutput(cmd.Context(), out, force, "trigrid partition "+args[0]+" -o "+out, slog.Default())
			if err != nil {
				return err
			}
			defer output.Abort() // nothing once committed
			var stage string
			pc := partition.Config{
				Scheme: sch, P: p, Workers: load.workers, MemLimit: lim, TempDir: tmpDir, Logger: slog.Default(),
				Progress: func(s string, done, total int64) {
					if s != stage {
						stage = s
						prog.Start(s, partitionStageUnit(s), total)
					}
					prog.Update(done, total)
				},
			}
			if lim > 0 {
				// The collector keeps the heap within the partitioner's
				// limit only if the runtime knows it.
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(lim))
			}
			sum, err := pipeline.PartitionFile(cmd.Context(), args[0], output.Store, cfg, pc)
			prog.Done()
			if err != nil {
				return err
			}
			if err := output.Commit(cmd.Context()); err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(sum)
			}
			printSummary(cmd.OutOrStdout(), args[0], output.URL(), sum)
			return nil
		},
	}
	load.add(cmd)
	cmd.Flags().Lookup("order").Usage = "vertex order for orientation: degree (the only order partitions support)"
	cmd.Flags().StringVarP(&out, "output", "o", "", "shard directory or store URL (required)")
	cmd.Flags().StringVar(&scheme, "scheme", "hash", "2D partitioning scheme: hash (TRUST) or range (TriX)")
	cmd.Flags().IntVarP(&p, "partitions", "P", 4, "number of vertex groups: P x P blocks, P^3 subtasks")
	cmd.Flags().StringVar(&memLimit, "mem-limit", "", "the partitioning process's peak resident memory, e.g. 1GiB (default: in memory for small uncompressed inputs, else half of this machine's memory, of which buffers use at most 256 MiB; 0 = read the whole graph into memory)")
	cmd.Flags().StringVar(&tmpDir, "tmp-dir", "", "directory for the partitioner's run files (default: the system's)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	cmd.Flags().BoolVar(&force, "force", false, "replace the partitioning already in the output directory once the new one is complete (a directory holding other files is still refused)")
	return cmd
}

func printSummary(w io.Writer, in, out string, s *partition.Summary) {
	mode := "in memory"
	if s.External {
		mode = "external memory"
	}
	fmt.Fprintf(w, "%s -> %s\n", in, out)
	row := func(k, v string) { fmt.Fprintf(w, "  %-12s %s\n", k, v) }
	row("graph", fmt.Sprintf("%s vertices, %s edges", commas(uint64(s.Graph.Vertices)), commas(uint64(s.Graph.Edges))))
	if c := s.Clean; c != nil {
		row("removed", removedText(c.SelfLoops, c.Duplicates, c.IsolatedIDs, -1))
	}
	row("scheme", fmt.Sprintf("%s, P=%d%s, partition id %016x (%s)", s.Scheme, s.P, foldNote(s.Fold), s.PartitionID, mode))
	row("shards", fmt.Sprintf("%d, %s (raw CSR %s, ratio %.3f)", s.Blocks, humanBytes(s.Bytes), humanBytes(s.RawBytes), s.Ratio))
	printBalance(w, s.Balance)
	var st []string
	for _, x := range s.Stages {
		st = append(st, fmt.Sprintf("%s %.3fs", x.Name, x.Seconds))
	}
	row("time", fmt.Sprintf("%.3fs (%s)", s.Seconds, strings.Join(st, ", ")))
	row("rate", humanCount(s.EdgesPerSec)+" edges/s")
}

// foldNote names a range layout's ranges per group: folded groups hold
// several rank ranges, which a reader of the bounds needs to know.
func foldNote(fold int) string {
	if fold <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%d ranges per group)", fold)
}

func printBalance(w io.Writer, b partition.Balance) {
	fmt.Fprintf(w, "  %-12s largest block %s edges, %.3f x the mean of %d blocks (%d non-empty)\n",
		"balance", commas(uint64(b.MaxBlock)), b.BlockRatio, b.Blocks, b.NonEmpty)
	fmt.Fprintf(w, "  %-12s %d non-empty, largest work %.3f x the mean\n", "subtasks", b.Subtasks, b.WorkRatio)
}

func newInfoCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info DIR",
		Short: "Print the manifest and balance of a partitioned graph",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := storage.Open(args[0])
			if err != nil {
				return err
			}
			m, err := storage.ReadManifest(cmd.Context(), store)
			if err != nil {
				return err
			}
			bal := partition.ManifestBalance(m)
			w := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(w).Encode(struct {
					Manifest *storage.Manifest `json:"manifest"`
					Balance  partition.Balance `json:"balance"`
				}{m, bal})
			}
			var bytes, raw int64
			for _, s := range m.Shards {
				bytes += s.Bytes
				raw += 8*int64(s.Rows+1) + 4*int64(s.Edges)
			}
			fmt.Fprintf(w, "%s\n", store.URL())
			row := func(k, v string) { fmt.Fprintf(w, "  %-12s %s\n", k, v) }
			row("source", m.Graph.Source)
			row("graph", fmt.Sprintf("%s vertices, %s edges, %s wedges, max degree %s, %s order",
				commas(uint64(m.Graph.Vertices)), commas(uint64(m.Graph.Edges)), commas(m.Graph.Wedges), commas(uint64(m.Graph.MaxDegree)), m.Graph.Order))
			printRecorded(row, m.Graph)
			fold := 0
			if m.Scheme == storage.SchemeRange {
				fold = m.RangeFold()
			}
			row("scheme", fmt.Sprintf("%s, P=%d%s, partition id %016x, format %d", m.Scheme, m.P, foldNote(fold), m.PartitionID, m.Format))
			if m.Created != "" {
				row("created", m.Created)
			}
			ratio := 0.0
			if raw > 0 {
				ratio = float64(bytes) / float64(raw)
			}
			row("shards", fmt.Sprintf("%d, %s (raw CSR %s, ratio %.3f)", len(m.Shards), humanBytes(bytes), humanBytes(raw), ratio))
			printBalance(w, bal)
			fmt.Fprintf(w, "  %-12s\n", "blocks")
			for _, s := range m.Shards {
				fmt.Fprintf(w, "    (%d,%d) %-24s %12s edges %10s rows %10s\n", s.I, s.J, s.File, commas(s.Edges), commas(s.Rows), humanBytes(s.Bytes))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the manifest and balance as JSON")
	return cmd
}

// partitionStageUnit is the unit of a partitioner stage's progress.
func partitionStageUnit(stage string) string {
	switch stage {
	case "read":
		return "bytes"
	case "dedupe", "route":
		return "buckets"
	case "write":
		return "blocks"
	}
	return ""
}

// printRecorded shows the figures a manifest may or may not carry, saying
// "not recorded" for those it lacks.
func printRecorded(row func(k, v string), g storage.GraphStats) {
	fwd := notRecorded
	if g.MaxOutDegree != nil {
		fwd = commas(uint64(*g.MaxOutDegree))
	}
	row("forward", "max out-degree "+fwd)
	if r := g.Removed; r != nil {
		row("removed", removedText(r.SelfLoops, r.Duplicates, r.IsolatedIDs, r.BadLines))
	} else {
		row("removed", notRecorded)
	}
	if in := g.Input; in != nil {
		s := fmt.Sprintf("%s, %s, %s", in.Format, humanBytes(in.Bytes), nouns(uint64(in.RawEdges), "raw edge"))
		if in.Compression != "" {
			s = in.Compression + " " + s
		}
		row("input", s)
	} else {
		row("input", notRecorded)
	}
}
