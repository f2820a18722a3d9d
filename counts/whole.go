package counts

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"sync/atomic"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/parallel"
	"github.com/trigrid/trigrid/kernels"
)

// Options says which per-vertex results a count produces.
type Options struct {
	// VerticesFile, when set, receives the per-vertex rows (id, degree,
	// triangles, clustering); EdgesFile the per-edge rows (u, v,
	// support). The format follows the extension (FormatOf).
	VerticesFile, EdgesFile string
	// Top is how many vertices with the most triangles and edges with the
	// highest support the summary lists; 0 lists none.
	Top int
	// Clustering asks for per-vertex counts (and so the average
	// clustering coefficient) even when nothing else needs them.
	Clustering bool
}

// Wanted reports whether o needs per-vertex counts at all.
func (o Options) Wanted() bool {
	return o.VerticesFile != "" || o.EdgesFile != "" || o.Top > 0 || o.Clustering
}

// PerEdge reports whether o needs per-edge support: for the edges file
// and for the top edges.
func (o Options) PerEdge() bool { return o.EdgesFile != "" || o.Top > 0 }

// Check validates the output paths' extensions, so that a bad name fails
// before any counting.
func (o Options) Check() error {
	for _, p := range []string{o.VerticesFile, o.EdgesFile} {
		if p != "" {
			if _, _, err := FormatOf(p); err != nil {
				return err
			}
		}
	}
	if o.Top < 0 {
		return fmt.Errorf("counts: top %d: must be 0 or more", o.Top)
	}
	return nil
}

// Summary is what a count's report says of its per-vertex results.
type Summary struct {
	// AverageClustering is the mean local clustering coefficient (see
	// the package comment).
	AverageClustering float64 `json:"average_clustering"`
	// VerticesFile and EdgesFile are the files written, with their rows.
	VerticesFile string `json:"vertices_file,omitempty"`
	VerticesRows int64  `json:"vertices_rows,omitempty"`
	EdgesFile    string `json:"edges_file,omitempty"`
	EdgesRows    int64  `json:"edges_rows,omitempty"`
	// TopVertices and TopEdges are the Top vertices with the most
	// triangles and edges with the highest support.
	TopVertices []Vertex `json:"top_vertices,omitempty"`
	TopEdges    []Edge   `json:"top_edges,omitempty"`
	// Seconds is the time spent summing, checking and writing.
	Seconds float64 `json:"-"`
}

// Finish checks c against the graph's total (per-vertex counts and
// per-edge support must each sum to 3 x total), writes the files o names
// (both or neither: WriteFiles) and summarises.
func Finish(ctx context.Context, c *Counts, total uint64, o Options) (*Summary, error) {
	if err := c.Check(total); err != nil {
		return nil, err
	}
	s := &Summary{AverageClustering: c.AverageClustering()}
	if o.VerticesFile != "" || o.EdgesFile != "" {
		var err error
		s.VerticesFile, s.EdgesFile = o.VerticesFile, o.EdgesFile
		if s.VerticesRows, s.EdgesRows, err = WriteFiles(ctx, o.VerticesFile, o.EdgesFile, c); err != nil {
			return nil, err
		}
	}
	if o.Top > 0 {
		s.TopVertices = c.TopVertices(o.Top)
		s.TopEdges = c.TopEdges(o.Top)
		if err := c.edgeErr(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// CountWhole counts the whole forward graph fwd per vertex (and per edge
// when perEdge) with lc, and returns the counts over fwd's ids with
// ids[rank] the input id of each, and the kernel's result.
func CountWhole(ctx context.Context, lc kernels.LocalCounter, fwd *graph.CSR, ids []uint64, perEdge bool) (*Counts, kernels.Result, error) {
	n := fwd.NumRows()
	if int64(len(ids)) != n {
		return nil, kernels.Result{}, fmt.Errorf("counts: %d ids for %d vertices", len(ids), n)
	}
	vs := make([]uint64, n)
	acc := &kernels.Local{VI: vs, VJ: vs, VK: vs}
	var es []uint64
	if perEdge {
		es = make([]uint64, fwd.NumEdges())
		acc.EIJ, acc.EIK, acc.EJK = es, es, es
	}
	res, err := lc.CountLocal(ctx, kernels.Whole(fwd), acc)
	if err != nil {
		return nil, kernels.Result{}, err
	}
	c := &Counts{OrigID: ids, Triangles: vs, PerEdge: perEdge, Edges: csrEdges(fwd, es), Degree: csrDegrees(fwd)}
	return c, res, nil
}

// csrDegrees is Degrees of a forward CSR's edges: each row's length plus
// its vertex's appearances as a column, without walking the edges as pairs,
// on all cores.
func csrDegrees(g *graph.CSR) []uint32 {
	deg := make([]uint32, g.NumRows())
	w := runtime.GOMAXPROCS(0)
	parallel.Dynamic(len(deg), 1<<16, w, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			deg[u] = uint32(g.Offsets[u+1] - g.Offsets[u])
		}
	})
	parallel.Dynamic(len(g.Cols), 1<<18, w, func(lo, hi int) {
		for _, v := range g.Cols[lo:hi] {
			atomic.AddUint32(&deg[v], 1)
		}
	})
	return deg
}

// csrEdges yields the edges of a forward CSR with the support at their
// positions (0 where sup is nil).
func csrEdges(g *graph.CSR, sup []uint64) iter.Seq2[[2]uint32, uint64] {
	return func(yield func([2]uint32, uint64) bool) {
		for u := range g.NumRows() {
			for p := g.Offsets[u]; p < g.Offsets[u+1]; p++ {
				var s uint64
				if sup != nil {
					s = sup[p]
				}
				if !yield([2]uint32{uint32(u), g.Cols[p]}, s) {
					return
				}
			}
		}
	}
}
