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
			return hostForward(ctx, path, hostInput{p32: in.p32}, &cfg, rep, ids)
		}
		return hostForward(ctx, path, hostInput{edges: in.edges}, &cfg, rep, ids)
	}
	edges, err := readEdges(ctx, path, &cfg, rep)
	if err != nil {
		return nil, nil, err
	}
	return hostForward(ctx, path, hostInput{edges: edges}, &cfg, rep, ids)
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

// hostInput is what the host builds a forward graph from: c when set (ids
// already compacted, by the host or by a device that could not take them
// further), else p32 when set (32-bit pairs of input ids), else edges as
// read. hostForward consumes it: the caller must not use its slices again.
type hostInput struct {
	edges []graph.Edge
	p32   []uint32
	c     *graph.Compacted
}

// hostForward cleans and orients src on the host, filling rep. Edges are
// released as soon as cleaning is done, so peak memory is the larger of two
// neighbouring stages; pairs are compacted in their own memory. Compacted
// ids keep the compaction's time already in rep.Seconds.Clean and add to
// it. In degree order pairs and compacted ids go straight to the forward
// graph (graph.ForwardCompacted), as the device does, its time in Order.
func hostForward(ctx context.Context, path string, src hostInput, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
	prog := cfg.Progress
	opts := graph.CleanOptions{Workers: cfg.Workers, Progress: prog.Update}
	t := time.Now()
	switch {
	case src.c != nil && cfg.Order == graph.OrderDegree:
		return orientPairsOnHost(ctx, path, src.c, cfg, rep, wantIDs)
	case src.c != nil:
		prog.Start("clean", "", -1)
		und, cs, err := graph.CleanCompacted(src.c, opts)
		prog.Done()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		rep.Seconds.Clean += since(t)
		return orientOf(ctx, path, und, cs, cfg, rep, wantIDs)
	case src.p32 != nil:
		prog.Start("clean", "", -1)
		c, err := graph.CompactPairsInPlace(src.p32, opts)
		prog.Done()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		rep.Seconds.Clean = since(t)
		return orientPairsOnHost(ctx, path, c, cfg, rep, wantIDs)
	}
	prog.Start("clean", "", -1)
	und, cs, err := graph.Clean(src.edges, opts)
	prog.Done()
	src.edges = nil
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Seconds.Clean = since(t)
	return orientOf(ctx, path, und, cs, cfg, rep, wantIDs)
}

// orientPairsOnHost builds the degree-order forward graph of c on the host
// with graph.ForwardCompacted.
func orientPairsOnHost(ctx context.Context, path string, c *graph.Compacted, cfg *Config, rep *Report, wantIDs bool) (*graph.CSR, []uint64, error) {
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
