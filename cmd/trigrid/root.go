package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// envPrefix is the prefix of the environment variables that set flags:
// --skip-bad-lines is TRIGRID_SKIP_BAD_LINES.
const envPrefix = "TRIGRID"

func newRootCommand() *cobra.Command {
	var configFile, logLevel, cpuProfile string
	root := &cobra.Command{
		Use:   "trigrid",
		Short: "Count triangles exactly in huge graphs, on CPUs and GPUs",
		Long: `trigrid counts the triangles of a graph exactly. It reads edge lists (SNAP,
KONECT, GraphChallenge), Matrix Market, METIS, adjacency lists, DIMACS, GAP
serialized graphs and its own binary edge lists, plain, gzip, zstd, bzip2 or
xz compressed or in a tar archive (docs/formats.md), cleans them to a simple
undirected graph, orders and orients it, and counts on the CPU or on GPUs,
whole or split into 2D partitions stored as compressed shards.

Every flag can also be set in a YAML config file (--config, keys named like the
flags) or in the environment (TRIGRID_ and the flag name in capitals with '_'
for '-'). Precedence: flag > environment > config file > default.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			src, err := bindConfig(cmd, configFile)
			if err != nil {
				return err
			}
			// Errors about a flag's value name the environment variable
			// or config key it came from, not a flag the user never typed.
			if run := cmd.RunE; run != nil {
				cmd.RunE = func(cmd *cobra.Command, args []string) error {
					return src.attribute(run(cmd, args))
				}
			}
			if err := src.attribute(setupLogging(cmd, logLevel)); err != nil {
				return err
			}
			return profileRun(cmd, cpuProfile)
		},
	}
	root.PersistentFlags().StringVar(&configFile, "config", "", "YAML config file (keys as flag names)")
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&cpuProfile, "cpu-profile", "", "write a CPU profile of the command to this file (go tool pprof reads it)")
	root.AddCommand(
		newVersionCommand(),
		newCountCommand(),
		newGenCommand(),
		newConvertCommand(),
		newPartitionCommand(),
		newInfoCommand(),
		newBenchCommand(),
	)
	root.AddCommand(clusterCommands()...)
	requireSubcommands(root)
	return root
}

// profileRun makes cmd's run write a CPU profile to path (nothing when
// path is empty): started now, stopped and the file closed when the run
// returns, whatever it returns.
func profileRun(cmd *cobra.Command, path string) error {
	if path == "" || cmd.RunE == nil {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpu-profile %s: %w", path, err)
	}
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		err := run(cmd, args)
		pprof.StopCPUProfile()
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("--cpu-profile %s: %w", path, cerr)
		}
		return err
	}
	return nil
}

func setupLogging(cmd *cobra.Command, level string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	h := slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: l})
	slog.SetDefault(slog.New(h))
	return nil
}
