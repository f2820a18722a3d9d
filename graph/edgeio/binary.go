package edgeio

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/trigrid/trigrid/graph"
)

// Binary edge list layout (docs/formats.md), all little-endian:
//
//	offset size
//	0      8    magic "TGEDGES\x00"
//	8      4    version (1)
//	12     4    id width in bytes: 4 or 8
//	16     8    edge count m
//	24     ...  m pairs (u, v), each id width bytes
//
// Nothing follows the pairs: trailing bytes are an error, so a file cut or
// glued by accident is noticed.
var binMagic = [8]byte{'T', 'G', 'E', 'D', 'G', 'E', 'S', 0}

const (
	binVersion    = 1
	binHeaderSize = 24
	// binBatchEdges bounds the batch a binary Stream delivers (16 MiB of
	// edges) so that memory does not depend on the file size.
	binBatchEdges = 1 << 20
)

type binHeader struct {
	version uint32
	width   uint32
	edges   uint64
}

func (h binHeader) encode() []byte {
	b := make([]byte, binHeaderSize)
	copy(b, binMagic[:])
	binary.LittleEndian.PutUint32(b[8:], h.version)
	binary.LittleEndian.PutUint32(b[12:], h.width)
	binary.LittleEndian.PutUint64(b[16:], h.edges)
	return b
}

// readBinary streams a binary edge list. name is for messages only.
func readBinary(ctx context.Context, r io.Reader, name string, opts ReadOptions, st *ReadStats, fn func([]graph.Edge) error, progress func()) error {
	var hb [binHeaderSize]byte
	n, err := io.ReadFull(r, hb[:])
	switch {
	case n == 0 && err == io.EOF:
		return nil // an empty file is an empty graph, whatever its extension
	case (err == io.ErrUnexpectedEOF || err == io.EOF) && !bytes.HasPrefix(binMagic[:], hb[:min(n, len(binMagic))]):
		return fmt.Errorf("graph/edgeio: %s: not a binary edge list (starts with %q, want %q)", name, hb[:min(n, len(binMagic))], binMagic[:])
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return fmt.Errorf("graph/edgeio: %s: truncated binary header: %d of %d bytes", name, n, binHeaderSize)
	case err != nil:
		return fmt.Errorf("graph/edgeio: %s: reading: %w", name, err)
	}
	if [8]byte(hb[:8]) != binMagic {
		return fmt.Errorf("graph/edgeio: %s: not a binary edge list (magic %q, want %q)", name, hb[:8], binMagic[:])
	}
	h := binHeader{
		version: binary.LittleEndian.Uint32(hb[8:]),
		width:   binary.LittleEndian.Uint32(hb[12:]),
		edges:   binary.LittleEndian.Uint64(hb[16:]),
	}
	if h.version != binVersion {
		return fmt.Errorf("graph/edgeio: %s: binary edge list version %d, this build reads version %d", name, h.version, binVersion)
	}
	if h.width != 4 && h.width != 8 {
		return fmt.Errorf("graph/edgeio: %s: binary id width %d, want 4 or 8", name, h.width)
	}
	pair := uint64(2 * h.width)
	// Sizes below are computed from a header that may be garbage: the
	// bytes of pairs must fit a file (2^63-1 bytes) before any arithmetic
	// trusts them.
	if hi, lo := bits.Mul64(h.edges, pair); hi != 0 || lo > math.MaxInt64-binHeaderSize {
		return fmt.Errorf("graph/edgeio: %s: binary header declares %d edges of %d bytes each, more than a file can hold (2^63 bytes): a corrupt header?",
			name, h.edges, pair)
	}
	batch := uint64(binBatchEdges)
	if opts.chunkSize > 0 {
		batch = max(1, uint64(opts.chunkSize)/pair)
	}
	if h.edges < batch {
		batch = h.edges
	}
	buf := make([]byte, batch*pair)
	edges := make([]graph.Edge, batch)
	var done uint64
	for done < h.edges {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := min(batch, h.edges-done)
		got, err := io.ReadFull(r, buf[:k*pair])
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			have := done*pair + uint64(got)
			want := h.edges * pair
			return fmt.Errorf("graph/edgeio: %s: truncated binary edge list: header declares %d edges (%d bytes of pairs) but only %d bytes follow: %d bytes (%d edges) missing",
				name, h.edges, want, have, want-have, h.edges-have/pair)
		}
		if err != nil {
			return fmt.Errorf("graph/edgeio: %s: reading: %w", name, err)
		}
		if opts.keepBatches && done > 0 {
			edges = make([]graph.Edge, k)
		}
		e := edges[:k]
		if h.width == 4 {
			for j := range e {
				e[j] = graph.Edge{U: uint64(binary.LittleEndian.Uint32(buf[8*j:])), V: uint64(binary.LittleEndian.Uint32(buf[8*j+4:]))}
			}
		} else {
			for j := range e {
				e[j] = graph.Edge{U: binary.LittleEndian.Uint64(buf[16*j:]), V: binary.LittleEndian.Uint64(buf[16*j+8:])}
			}
		}
		done += k
		st.Edges += int64(k)
		if err := fn(e); err != nil {
			return err
		}
		progress()
	}
	extra, err := io.Copy(io.Discard, r)
	if err != nil {
		return fmt.Errorf("graph/edgeio: %s: reading: %w", name, err)
	}
	if extra > 0 {
		return fmt.Errorf("graph/edgeio: %s: %d trailing bytes after the %d declared edges of the binary edge list", name, extra, h.edges)
	}
	return nil
}
