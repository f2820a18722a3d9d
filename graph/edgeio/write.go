package edgeio

import (
	"context"
	"io"

	"github.com/trigrid/trigrid/graph"
)

// WriteOptions tune a write. The zero value writes a space-separated edge
// list, uncompressed (WriteFile takes both from the extension).
type WriteOptions struct {
	// Format: FormatEdgeList (space), FormatTSV (tab), FormatMTX, FormatBin;
	// FormatAuto means the file extension decides (edge list for Write).
	// The other formats are read only: writing them is an error.
	Format Format
	// Compression: "", "none", "gzip" or "zstd"; empty means the file
	// extension decides in WriteFile (".gz", ".zst").
	Compression string
	// IDWidth is the binary id width, 4 or 8; 0 picks the smallest that
	// holds every id.
	IDWidth int
	// Workers formats text in parallel; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Progress, when set, is told the edges handed to the writer so far
	// and the total, from the writing goroutine, every piece of edges.
	Progress func(done, total int64)

	// pieceEdges overrides textPiece; tests set it small.
	pieceEdges int
}

// WriteFile writes edges to path atomically: a temporary file in the same
// directory is written, synced and renamed, so readers never see half a
// file. Format and compression come from opts or else the extension. "-"
// writes to standard output.
func WriteFile(path string, edges []graph.Edge, opts WriteOptions) (err error) {
	return WriteFileContext(context.Background(), path, edges, opts)
}

// WriteFileContext is WriteFile stopped by ctx: a cancelled write returns
// ctx's error and removes its temporary file, leaving path as it was.
func WriteFileContext(ctx context.Context, path string, edges []graph.Edge, opts WriteOptions) (err error) {
	return WriteChunksFileContext(ctx, path, opts.slice(edges), opts)
}

// Write writes edges to w in opts.Format (FormatAuto = space-separated
// edge list), compressed as opts.Compression says: WriteChunks of the
// list in pieces of textPiece edges.
func Write(w io.Writer, edges []graph.Edge, opts WriteOptions) (err error) {
	return WriteChunks(w, opts.slice(edges), opts)
}

// textPiece is the number of edges one encoding task of an edge list in
// memory handles: big enough to amortise the hand-off, small enough to
// keep all workers busy.
const textPiece = 1 << 16

// slice is edges as Chunks of textPiece (or the test's pieceEdges).
func (o WriteOptions) slice(edges []graph.Edge) sliceChunks {
	piece := textPiece
	if o.pieceEdges > 0 {
		piece = o.pieceEdges
	}
	return sliceChunks{edges, piece}
}

// ctxWriter fails every Write once ctx is done, so that a long write stops
// at its next buffer.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
