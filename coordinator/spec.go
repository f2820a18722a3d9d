package coordinator

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/storage"
)

// KernelNames are the kernels a job may name, by the device they run on
// (Config.Kernels).
type KernelNames struct {
	CPU, GPU []string
}

// check refuses a kernel name that is neither "" (each worker's own) nor
// one of k, naming those; with k empty it refuses none.
func (k KernelNames) check(name string) error {
	if name == "" || len(k.CPU)+len(k.GPU) == 0 || slices.Contains(k.CPU, name) || slices.Contains(k.GPU, name) {
		return nil
	}
	return fmt.Errorf("coordinator: unknown kernel %q (CPU kernels: %s; GPU kernels: %s)",
		api.TruncateText(name, 64), strings.Join(k.CPU, ", "), strings.Join(k.GPU, ", "))
}

var (
	errNoPartitioner  = errors.New("coordinator: a graph file needs a partitioner, and this coordinator has none: submit a shard store")
	errNoCountsReader = errors.New("coordinator: per-vertex and per-edge counts need a counts reader, and this coordinator has none")
)

// checkSpec refuses, when it is submitted, a job that could not run:
// not exactly one of a graph file and a shard store, P out of range, an
// unknown scheme, kernel or format, reading options with a shard store,
// a graph file or per-vertex counts the coordinator was handed nothing
// for (Config.Partitioner, Config.CountsReader), and a graph file or
// shard directory that is not within the data directories. It sets
// spec's graph path or store URL to the one to open (absolute, links
// resolved) and a graph's empty scheme to hash.
func (s *Server) checkSpec(spec *api.JobSpec) error {
	if (spec.Graph == "") == (spec.Shards == "") {
		return errors.New("coordinator: a job needs exactly one of a graph file and a shard store")
	}
	if spec.Partitions < 0 || spec.Partitions > api.MaxPartitions {
		return fmt.Errorf("coordinator: partitions %d out of range 0..%d", spec.Partitions, api.MaxPartitions)
	}
	if err := s.cfg.Kernels.check(spec.Kernel); err != nil {
		return err
	}
	if (spec.PerVertex || spec.PerEdge) && s.cfg.CountsReader == nil {
		return errNoCountsReader
	}
	if spec.Shards != "" {
		if spec.Format != "" || spec.SkipBadLines {
			return errors.New("coordinator: a format and skipping bad lines apply to a graph file; a shard store was read when it was partitioned")
		}
		u, err := storeURL(spec.Shards, s.dataDirs)
		if err != nil {
			return err
		}
		spec.Shards = u
		return nil
	}
	if s.cfg.Partitioner == nil {
		return errNoPartitioner
	}
	if spec.Scheme == "" {
		spec.Scheme = "hash"
	}
	if _, err := storage.ParseScheme(spec.Scheme); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	if err := s.cfg.Partitioner.CheckRead(readOptions(*spec)); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	real, err := graphPath(spec.Graph, s.dataDirs)
	if err != nil {
		return err
	}
	spec.Graph = real
	return nil
}

// readOptions returns how a job's graph file is read.
func readOptions(spec api.JobSpec) ReadOptions {
	return ReadOptions{Format: spec.Format, SkipBadLines: spec.SkipBadLines}
}
