package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/pipeline"
	"github.com/trigrid/trigrid/storage"
)

// checkMode refuses flags that do not apply to the count asked for, so
// that a flag is never silently ignored: reading flags with --shards (the
// graph was read when it was partitioned), --scheme without partitions,
// GPU flags with --device cpu.
func (f *countFlags) checkMode(cmd *cobra.Command) error {
	changed := func(names ...string) []string {
		var set []string
		for _, n := range names {
			if onCommandLine(cmd, n) {
				set = append(set, "--"+n)
			}
		}
		return set
	}
	if f.device.device == "cpu" {
		if set := changed("devices", "cuda-lib"); len(set) > 0 {
			return fmt.Errorf("count --device cpu: %s apply to GPUs only", strings.Join(set, ", "))
		}
	}
	if f.shards != "" {
		if set := changed("format", "skip-bad-lines", "order", "partitions", "scheme"); len(set) > 0 {
			return fmt.Errorf("count --shards: %s do not apply: the shards were read, ordered and partitioned by 'trigrid partition'", strings.Join(set, ", "))
		}
		return nil
	}
	if f.partitions == 1 {
		if set := changed("scheme"); len(set) > 0 {
			return fmt.Errorf("count: --scheme applies to a partitioned count; add --partitions N (N = 0 or more than 1)")
		}
	}
	return nil
}

// partitionConfig sets the partitioning of a `trigrid count --partitions`.
func (f *countFlags) partitionConfig(cfg *pipeline.Config) error {
	sch, err := storage.ParseScheme(f.scheme)
	if err != nil {
		return fmt.Errorf("--scheme: %w", err)
	}
	cfg.Scheme, cfg.P = sch, f.partitions
	if cfg.RowStream, err = pipeline.ParseStreamMode(f.rowStream); err != nil {
		return fmt.Errorf("--row-stream: %w", err)
	}
	if f.partitions == 0 {
		if cfg.Budget, err = f.device.budget(); err != nil {
			return err
		}
		cfg.Model = f.device.memModel()
		cfg.ModelFromDevice = cfg.Devices != nil // not selected yet
	} else if lim, err := f.device.deviceLimit(); err == nil && lim > 0 {
		cfg.Budget = int64(lim) // for the choice of --row-stream auto
	}
	return nil
}

func countShards(cmd *cobra.Command, f *countFlags, cfg pipeline.Config) (*pipeline.Report, error) {
	store, err := storage.Open(f.shards)
	if err != nil {
		return nil, fmt.Errorf("--shards %s: %w", f.shards, err)
	}
	return pipeline.CountShards(cmd.Context(), store, cfg)
}

// engineText says where a partitioned count's phase went: the loads on
// the host's cores, then the devices' waits, uploads and kernels and
// their busy share (each device's when there are several).
func engineText(e *pipeline.EngineReport) string {
	s := e.Seconds
	t := fmt.Sprintf("%s on %d loaders: fetch %.3fs, decode %.3fs, stage %.3fs; waited %.3fs, upload %.3fs, kernel %.3fs: busy %.0f%% of the count",
		nouns(uint64(e.Loads), "block load"), e.Loaders, s.Fetch, s.Decode, s.Stage, s.Wait, s.Upload, s.Kernel, 100*e.BusyShare)
	if len(e.Devices) > 1 {
		parts := make([]string, len(e.Devices))
		for i, d := range e.Devices {
			parts[i] = fmt.Sprintf("%s %.0f%%", d.Device, 100*d.BusyShare)
		}
		t += " (" + strings.Join(parts, ", ") + ")"
	}
	return t
}
