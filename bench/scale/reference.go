package scale

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// prepared is the store every run counts and the count it must match.
type prepared struct {
	store     string
	manifest  *storage.Manifest
	triangles uint64
	reference string
}

// prepare makes the shard store and the independent count. A graph file
// is read, cleaned and oriented once, counted whole on the CPU, and
// partitioned into a store under dir; a store is read back block by
// block into the whole forward graph, which is counted the same way. The
// whole-graph count shares nothing with the jobs but the decoders and
// the CPU kernel: no subtasks, clipping, scheduler, gRPC or worker.
func prepare(ctx context.Context, cfg *Config, dir string) (*prepared, error) {
	if cfg.Graph != "" {
		return prepareGraph(ctx, cfg, dir)
	}
	url := cfg.Shards
	if !strings.Contains(url, "://") {
		abs, err := filepath.Abs(url)
		if err != nil {
			return nil, fmt.Errorf("bench scale: --shards %s: %w", url, err)
		}
		url = abs
	}
	st, err := storage.Open(url)
	if err != nil {
		return nil, fmt.Errorf("bench scale: --shards: %w", err)
	}
	m, err := storage.ReadManifest(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("bench scale: --shards: %w", err)
	}
	cfg.progress().Start("reference count: read shards", "", int64(len(m.Shards)))
	g, err := assemble(ctx, st, m, cfg.progress().Update)
	if err != nil {
		return nil, err
	}
	tri, err := countWhole(ctx, cfg, g)
	if err != nil {
		return nil, err
	}
	return &prepared{store: url, manifest: m, triangles: tri,
		reference: "the whole forward graph read back from the shards, counted on the CPU (auto)"}, nil
}

func prepareGraph(ctx context.Context, cfg *Config, dir string) (*prepared, error) {
	start := time.Now()
	cfg.progress().Start("read, clean and orient "+filepath.Base(cfg.Graph), "", -1)
	fwd, ids, st, clean, err := partition.LoadGraph(ctx, cfg.Graph, cfg.Read, 0)
	if err != nil {
		return nil, fmt.Errorf("bench scale: %w", err)
	}
	tri, err := countWhole(ctx, cfg, fwd)
	if err != nil {
		return nil, err
	}
	storeDir := filepath.Join(dir, "shards")
	store, err := storage.Open(storeDir)
	if err != nil {
		return nil, fmt.Errorf("bench scale: %w", err)
	}
	var stage string
	pcfg := partition.Config{Scheme: cfg.Scheme, P: cfg.P, Progress: func(s string, done, total int64) {
		if s != stage {
			stage = s
			cfg.progress().Start(fmt.Sprintf("partition (P = %d, %s): %s", cfg.P, cfg.Scheme, s), "", total)
		}
		cfg.progress().Update(done, total)
	}}
	if _, err := partition.PartitionLoaded(ctx, fwd, ids, st, clean, start, store, pcfg); err != nil {
		return nil, fmt.Errorf("bench scale: partitioning %s: %w", cfg.Graph, err)
	}
	m, err := storage.ReadManifest(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("bench scale: %w", err)
	}
	return &prepared{store: store.URL(), manifest: m, triangles: tri,
		reference: "the whole graph file, counted on the CPU (auto) before partitioning"}, nil
}

func countWhole(ctx context.Context, cfg *Config, g *graph.CSR) (uint64, error) {
	cfg.progress().Start("reference count", "edges", g.NumEdges())
	cpu, err := kernels.NewCPU("auto", kernels.CPUOptions{Progress: cfg.progress().Update})
	if err != nil {
		return 0, err
	}
	res, err := cpu.Count(ctx, kernels.Whole(g))
	if err != nil {
		return 0, fmt.Errorf("bench scale: reference count: %w", err)
	}
	return res.Triangles, nil
}

// assemble reads every block of m from st (each checked against the
// manifest) and puts their edges back into one forward graph over
// global ids. An edge that does not go from a lower to a higher id is
// an error naming its shard: the shards are not a forward graph's.
func assemble(ctx context.Context, st storage.Store, m *storage.Manifest, progress func(done, total int64)) (*graph.CSR, error) {
	layout, err := partition.ManifestLayout(m)
	if err != nil {
		return nil, fmt.Errorf("bench scale: %s: %w", st.URL(), err)
	}
	n := m.Graph.Vertices
	type loaded struct {
		i, j int
		b    *graph.CSR
	}
	blocks := make([]loaded, 0, len(m.Shards))
	deg := make([]uint64, n+1)
	for x, s := range m.Shards {
		b, err := storage.LoadShard(ctx, st, m, s.I, s.J)
		if err != nil {
			return nil, fmt.Errorf("bench scale: %w", err)
		}
		for r := range b.NumRows() {
			deg[layout.Global(s.I, uint32(r))+1] += uint64(b.Degree(r))
		}
		blocks = append(blocks, loaded{s.I, s.J, b})
		progress(int64(x+1), int64(len(m.Shards)))
	}
	for v := range n {
		deg[v+1] += deg[v]
	}
	g := &graph.CSR{Offsets: deg, Cols: make([]uint32, deg[n]), NCols: n}
	next := slices.Clone(deg[:n])
	for _, lb := range blocks {
		for r := range lb.b.NumRows() {
			u := layout.Global(lb.i, uint32(r))
			for _, c := range lb.b.Row(r) {
				v := layout.Global(lb.j, c)
				if v <= u {
					return nil, fmt.Errorf("bench scale: %s: %s: edge %d -> %d does not go up", st.URL(), storage.ShardName(lb.i, lb.j), u, v)
				}
				g.Cols[next[u]] = v
				next[u]++
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for u := range n {
		slices.Sort(g.Row(u))
	}
	if int64(len(g.Cols)) != m.Graph.Edges {
		return nil, fmt.Errorf("bench scale: %s: the shards hold %d edges, the manifest's graph %d", st.URL(), len(g.Cols), m.Graph.Edges)
	}
	return g, g.Validate()
}
