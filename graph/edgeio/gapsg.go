package edgeio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/trigrid/trigrid/graph"
)

// GAP serialized graph layout (the GAP benchmark suite's .sg and .wsg,
// as its writer.h writes them), all little-endian:
//
//	size        field
//	1           directed, a bool: 0 or 1
//	8           e, int64: the neighbours stored (an undirected graph
//	            stores each edge twice, once at each end)
//	8           n, int64: the vertices
//	8 x (n+1)   out offsets, int64: vertex u's neighbours are entries
//	            offsets[u] to offsets[u+1]-1
//	4 x e       out neighbours, int32 (.sg); or 8 x e, each an int32
//	            neighbour then an int32 weight (.wsg)
//
// A directed graph then has its in offsets and in neighbours, laid out
// the same. Nothing follows.
const (
	gapHeaderSize = 17
	gapMaxNodes   = 1 << 31 // ids are int32
	gapMaxEdges   = 1 << 56
	gapBlock      = 1 << 16 // entries one read covers
)

// readGAP reads a GAP serialized graph: an edge (u, v) for each out
// neighbour v of each vertex u (the in neighbours of a directed graph are
// the same edges reversed: they are checked, not read as edges). Offsets
// must start at 0, never decrease and end at e; neighbours must be
// vertices; anything else, a short file or bytes after the graph is an
// error.
func readGAP(ctx context.Context, r io.Reader, name string, weighted bool, opts ReadOptions, st *ReadStats, fn func([]graph.Edge) error, progress func()) error {
	what := "GAP serialized graph (.sg)"
	width := int64(4)
	if weighted {
		what, width = "GAP weighted serialized graph (.wsg)", 8
	}
	gerr := func(format string, args ...any) error {
		return fmt.Errorf("graph/edgeio: %s: %s: %s", name, what, fmt.Sprintf(format, args...))
	}
	var hb [gapHeaderSize]byte
	if got, err := io.ReadFull(r, hb[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return gerr("truncated header: %d of %d bytes", got, gapHeaderSize)
		}
		return fmt.Errorf("graph/edgeio: %s: reading: %w", name, err)
	}
	if hb[0] > 1 {
		return gerr("the first byte (directed) is %d, want 0 or 1: not a GAP graph?", hb[0])
	}
	directed := hb[0] == 1
	e := int64(binary.LittleEndian.Uint64(hb[1:]))
	n := int64(binary.LittleEndian.Uint64(hb[9:]))
	if n < 0 || n > gapMaxNodes {
		return gerr("the header declares %d vertices: ids are 32-bit, so at most 2^31", n)
	}
	if e < 0 || e > gapMaxEdges {
		return gerr("the header declares %d neighbours, more than a file can hold: a corrupt header?", e)
	}
	st.DeclaredVertices = uint64(n)
	offs, err := readGAPOffsets(ctx, r, n, e, true, gerr, "out")
	if err != nil {
		return err
	}
	b := newBatcher(opts, fn, progress)
	u := int64(0)
	err = readGAPNeighbours(ctx, r, n, e, width, gerr, "out", func(k int64, v uint64) error {
		for offs[u+1] <= k {
			u++
		}
		return b.add(uint64(u), v)
	})
	if err != nil {
		return err
	}
	offs = nil
	if directed {
		if _, err := readGAPOffsets(ctx, r, n, e, false, gerr, "in"); err != nil {
			return err
		}
		if err := readGAPNeighbours(ctx, r, n, e, width, gerr, "in", nil); err != nil {
			return err
		}
	}
	// Bytes after the graph are counted as far as the hint needs.
	extra, err := io.Copy(io.Discard, io.LimitReader(r, 4*e+1))
	if err != nil {
		return fmt.Errorf("graph/edgeio: %s: reading: %w", name, err)
	}
	switch {
	case extra == 4*e+1:
		return gerr("more than %d bytes after the graph", 4*e)
	case extra > 0 && !weighted && !directed && extra == 4*e:
		return gerr("%d bytes after the graph: a weighted graph (.wsg)? name it .wsg or give --format wsg", extra)
	case extra > 0:
		return gerr("%d bytes after the graph", extra)
	}
	if err := b.flush(); err != nil {
		return err
	}
	st.Edges = b.n
	return nil
}

// readGAPOffsets reads and checks the n+1 offsets of one side (kept, the
// memory growing with the bytes read, when keep is set).
func readGAPOffsets(ctx context.Context, r io.Reader, n, e int64, keep bool, gerr func(string, ...any) error, side string) ([]int64, error) {
	var offs []int64
	buf := make([]byte, 8*min(n+1, gapBlock))
	prev := int64(0)
	for i := int64(0); i <= n; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := min(n+1-i, gapBlock)
		if got, err := io.ReadFull(r, buf[:8*c]); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return nil, gerr("the file ends in the %s offsets: %d of the %d are there", side, i+int64(got)/8, n+1)
			}
			return nil, err
		}
		for j := range c {
			o := int64(binary.LittleEndian.Uint64(buf[8*j:]))
			switch {
			case i+j == 0 && o != 0:
				return nil, gerr("the first %s offset is %d, want 0", side, o)
			case o < prev || o > e:
				return nil, gerr("%s offset %d is %d, outside %d to %d (the offsets never decrease and end at the %d neighbours)", side, i+j, o, prev, e, e)
			}
			prev = o
			if keep {
				offs = append(offs, o)
			}
		}
		i += c
	}
	if prev != e {
		return nil, gerr("the last %s offset is %d, but the header declares %d neighbours", side, prev, e)
	}
	return offs, nil
}

// readGAPNeighbours reads and checks the e neighbours of one side (of
// width bytes each, the first 4 the id), handing each to fn (with its
// index) when fn is not nil.
func readGAPNeighbours(ctx context.Context, r io.Reader, n, e, width int64, gerr func(string, ...any) error, side string, fn func(k int64, v uint64) error) error {
	buf := make([]byte, width*min(e, gapBlock))
	for k := int64(0); k < e; {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := min(e-k, gapBlock)
		if got, err := io.ReadFull(r, buf[:width*c]); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return gerr("the file ends in the %s neighbours: %d of the %d are there", side, k+int64(got)/width, e)
			}
			return err
		}
		for j := range c {
			v := int64(int32(binary.LittleEndian.Uint32(buf[width*j:])))
			if v < 0 || v >= n {
				return gerr("%s neighbour %d is %d, not a vertex (0 to %d)", side, k+j, v, n-1)
			}
			if fn != nil {
				if err := fn(k+j, uint64(v)); err != nil {
					return err
				}
			}
		}
		k += c
	}
	return nil
}
