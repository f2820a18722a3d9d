package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// envPrefix is the prefix of the environment variables that set flags:
// --skip-bad-lines is TRIGRID_SKIP_BAD_LINES.
const envPrefix = "TRIGRID"

func newRootCommand() *cobra.Command {
	var configFile string
	var logLevel string
	root := &cobra.Command{
		Use:   "trigrid",
		Short: "Count triangles exactly in huge graphs, on CPUs and GPUs",
		Long: `trigrid counts the triangles of a graph exactly. It reads edge lists (SNAP,
KONECT, GraphChallenge, Matrix Market, binary; gzip or zstd), cleans them to a
simple undirected graph, orders and orients it, and counts on the CPU or on
GPUs, whole or split into 2D partitions stored as compressed shards.

Every flag can also be set in a YAML config file (--config, keys named like the
flags) or in the environment (TRIGRID_ and the flag name in capitals with '_'
for '-'). Precedence: flag > environment > config file > default.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := bindConfig(cmd, configFile); err != nil {
				return err
			}
			return setupLogging(cmd, logLevel)
		},
	}
	root.PersistentFlags().StringVar(&configFile, "config", "", "YAML config file (keys as flag names)")
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.AddCommand(
		newVersionCommand(),
		newCountCommand(),
		newGenCommand(),
		newConvertCommand(),
		newPartitionCommand(),
		newInfoCommand(),
		newBenchCommand(),
	)
	return root
}

// bindConfig gives every flag the user did not set on the command line the
// value from the environment or the config file, in that order, so a command
// reads only its flags. A missing --config file is an error; no --config
// means no file.
func bindConfig(cmd *cobra.Command, configFile string) error {
	v := viper.New()
	v.SetEnvPrefix(envPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if configFile == "" {
		configFile = os.Getenv(envPrefix + "_CONFIG")
	}
	if configFile != "" {
		v.SetConfigFile(configFile)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return fmt.Errorf("--config %s: %w", configFile, pe.Err)
			}
			return fmt.Errorf("--config %s: %w", configFile, err)
		}
	}
	var firstErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if firstErr != nil || f.Changed || f.Name == "config" || f.Name == "help" {
			return
		}
		if !v.IsSet(f.Name) {
			return
		}
		val := v.Get(f.Name)
		s := configValueString(val)
		if err := cmd.Flags().Set(f.Name, s); err != nil {
			src := "config file " + configFile
			if _, ok := os.LookupEnv(envName(f.Name)); ok {
				src = "environment " + envName(f.Name)
			}
			firstErr = fmt.Errorf("%s: %s=%q: %w", src, f.Name, s, err)
		}
	})
	return firstErr
}

func envName(flag string) string {
	return envPrefix + "_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// configValueString renders a YAML or environment value the way the flag
// parser expects it; lists become comma-separated.
func configValueString(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	default:
		return fmt.Sprint(x)
	}
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
