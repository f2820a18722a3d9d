package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
)

// Load reads, cleans, orders and orients a graph file ("-" is standard
// input) into its forward CSR, filling the matching parts of rep: input,
// removed, vertices, edges, degree figures and the read, clean and order
// times. With ids it also returns the input id of every forward id.
//
// In degree order a file whose ids fit 32 bits is read as 32-bit pairs,
// compacted in their own memory and oriented with graph.ForwardCompacted,
// which builds the same forward graph as graph.Clean then graph.Orient.
func Load(ctx context.Context, path string, cfg Config, rep *Report, ids bool) (*graph.CSR, []uint64, error) {
	cfg.fill()
	if cfg.Order == graph.OrderDegree {
		in, err := readIDs(ctx, path, &cfg, rep, nil)
		if err != nil {
			return nil, nil, err
		}
		if in.p32 != nil {
			return forwardOfIDs(ctx, path, in.p32, &cfg, rep, ids)
		}
		return forwardOf(ctx, path, in.edges, &cfg, rep, ids)
	}
	edges, err := readEdges(ctx, path, &cfg, rep)
	if err != nil {
		return nil, nil, err
	}
	return forwardOf(ctx, path, edges, &cfg, rep, ids)
}

func readEdges(ctx context.Context, path string, cfg *Config, rep *Report) ([]graph.Edge, error) {
	t := time.Now()
	cfg.Progress.Start("read", "bytes", -1)
	ro := cfg.Read
	ro.Progress = cfg.Progress.Update
	edges, rs, err := edgeio.ReadFile(ctx, path, ro)
	cfg.Progress.Done()
	if err != nil {
		return nil, err
	}
	noteRead(rep, rs, t)
	return edges, nil
}

// noteRead fills rep's input, bad lines and read time from a read that
// began at t.
func noteRead(rep *Report, rs edgeio.ReadStats, t time.Time) {
	rep.Input = &Input{Format: rs.Format.String(), Compression: rs.Compression, Bytes: rs.Bytes, Lines: rs.Lines, RawEdges: rs.Edges,
		Header: rs.Header, HeaderLine: rs.HeaderLine, DeclaredVertices: rs.DeclaredVertices, Archive: rs.Archive, Member: rs.Member}
	rep.removed().BadLines = rs.BadLines
	rep.Seconds.Read = since(t)
}

// noteUnusedIDs sets Removed.UnusedDeclaredIDs once cleaning has counted
// the distinct ids of the input: those with an edge (Vertices) and those
// only in self-loops (IsolatedIDs). A Matrix Market file's indices never
// exceed its declared size, so the difference is the declared ids that no
// entry uses.
func noteUnusedIDs(rep *Report) {
	if rep.Input == nil || rep.Removed == nil {
		return
	}
	used := uint64(rep.Vertices) + rep.Removed.IsolatedIDs
	if d := rep.Input.DeclaredVertices; d > used {
		rep.Removed.UnusedDeclaredIDs = d - used
	}
}

// forwardOf cleans and orients edges on the host. The caller's edges are
// released as soon as cleaning is done (the slice is not used afterwards),
// so peak memory is the larger of two neighbouring stages.
func forwardOf(ctx context.Context, path string, edges []graph.Edge, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	prog := cfg.Progress
	t := time.Now()
	prog.Start("clean", "", -1)
	und, cs, err := graph.Clean(edges, graph.CleanOptions{Workers: cfg.Workers, Progress: prog.Update})
	prog.Done()
	edges = nil
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Seconds.Clean = since(t)
	return orientOf(ctx, path, und, cs, cfg, rep, wantIDs)
}

// forwardOfCompacted finishes on the host the cleaning of edges that were
// compacted for a device that could not take them, then orients them. The
// compaction's time, already in rep.Seconds.Clean, is kept and added to.
// In degree order the forward graph is built straight from the pairs
// (graph.ForwardCompacted), as the device does, its time in Order.
func forwardOfCompacted(ctx context.Context, path string, c *graph.Compacted, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	if cfg.Order == graph.OrderDegree {
		return forwardOfPairs(ctx, path, c, cfg, rep, wantIDs)
	}
	prog := cfg.Progress
	t := time.Now()
	prog.Start("clean", "", -1)
	und, cs, err := graph.CleanCompacted(c, graph.CleanOptions{Workers: cfg.Workers, Progress: prog.Update})
	prog.Done()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Seconds.Clean += since(t)
	return orientOf(ctx, path, und, cs, cfg, rep, wantIDs)
}

// forwardOfIDs compacts 32-bit pairs of input ids in their own memory
// (pairs must not be used afterwards) and builds their degree-order forward
// graph on the host.
func forwardOfIDs(ctx context.Context, path string, pairs []uint32, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	t := time.Now()
	cfg.Progress.Start("clean", "", -1)
	c, err := graph.CompactPairsInPlace(pairs, graph.CleanOptions{Workers: cfg.Workers, Progress: cfg.Progress.Update})
	cfg.Progress.Done()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Seconds.Clean = since(t)
	return forwardOfPairs(ctx, path, c, cfg, rep, wantIDs)
}

// forwardOfPairs builds the degree-order forward graph of c on the host
// with graph.ForwardCompacted.
func forwardOfPairs(ctx context.Context, path string, c *graph.Compacted, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	prog := cfg.Progress
	t := time.Now()
	prog.Start("order", "", -1)
	fwd, rank, cs, os, err := graph.ForwardCompacted(c, graph.CleanOptions{Workers: cfg.Workers, Progress: prog.Update})
	prog.Done()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Vertices, rep.Edges = cs.Vertices, cs.Edges
	r := rep.removed()
	r.SelfLoops, r.Duplicates, r.IsolatedIDs = cs.SelfLoops, cs.Duplicates, cs.IsolatedIDs
	noteUnusedIDs(rep)
	var ids []uint64
	if wantIDs {
		ids = make([]uint64, len(rank))
		for v, r := range rank {
			ids[r] = c.OrigID[v]
		}
	}
	rep.Order = graph.OrderDegree.String()
	rep.Wedges, rep.MaxDegree, rep.MaxOutDegree, rep.Degeneracy = os.Wedges, os.MaxDegree, &os.MaxOutDegree, os.Degeneracy
	rep.Seconds.Order = since(t)
	return fwd, ids, ctx.Err()
}

// orientOf records what cleaning removed and orients und.
func orientOf(ctx context.Context, path string, und *graph.Undirected, cs graph.CleanStats, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	prog := cfg.Progress
	rep.Vertices, rep.Edges = cs.Vertices, cs.Edges
	r := rep.removed()
	r.SelfLoops, r.Duplicates, r.IsolatedIDs = cs.SelfLoops, cs.Duplicates, cs.IsolatedIDs
	noteUnusedIDs(rep)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}

	t := time.Now()
	prog.Start("order", "", -1)
	var orig []uint64
	if wantIDs {
		orig = und.OrigID
	}
	und.OrigID = nil // without ids, free it before the forward graph is built
	fwd, rank, os, err := graph.Orient(und, cfg.Order, cfg.Workers)
	prog.Done()
	und = nil
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var ids []uint64
	if wantIDs {
		ids = make([]uint64, len(rank))
		for c, r := range rank {
			ids[r] = orig[c]
		}
	}
	rep.Order = cfg.Order.String()
	rep.Wedges, rep.MaxDegree, rep.MaxOutDegree, rep.Degeneracy = os.Wedges, os.MaxDegree, &os.MaxOutDegree, os.Degeneracy
	rep.Seconds.Order = since(t)
	return fwd, ids, ctx.Err()
}

func finish(rep *Report, start time.Time) {
	rep.Transitivity = counts.Transitivity(rep.Triangles, rep.Wedges)
	rep.Seconds.Total = since(start)
	if rep.Seconds.Total > 0 {
		rep.EdgesPerSecond = float64(rep.Edges) / rep.Seconds.Total
	}
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }
