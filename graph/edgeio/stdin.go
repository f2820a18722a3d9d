package edgeio

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/hugepage"
	"github.com/trigrid/trigrid/internal/osmem"
)

// streamPiece is the bytes of pairs one read of a stream takes: the
// granule of progress, of the watcher's Filled and of cancellation.
const streamPiece = 32 << 20

// readStreamIDs is ReadFileIDs of a stream (standard input): a binary
// edge list of 32-bit ids becomes pairs straight from the stream, 8 bytes
// an edge as from a file (`gen --format bin -o - | count -` holds what the
// same graph read from a file holds, not twice that as edges); anything
// else is read as edges. name is for messages.
func readStreamIDs(ctx context.Context, r io.Reader, name string, opts ReadOptions) ([]uint32, []graph.Edge, ReadStats, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	if opts.Format == FormatAuto || opts.Format == FormatBin {
		hb, err := br.Peek(binHeaderSize)
		if err == nil && [8]byte(hb[:8]) == binMagic && binary.LittleEndian.Uint32(hb[8:]) == binVersion &&
			binary.LittleEndian.Uint32(hb[12:]) == 4 {
			p, st, err := readPairs32Stream(ctx, br, name, binary.LittleEndian.Uint64(hb[16:]), opts)
			return p, nil, st, err
		}
	}
	opts.wholeLines = true
	edges, st, err := Read(ctx, br, name, opts)
	return nil, edges, st, err
}

// readPairs32Stream reads the binary edge list of 32-bit ids that r holds,
// whose header declares m edges, into pairs as ReadBinaryPairs32 does a
// file: the header checked against the memory available before the pairs
// are made (their pages are taken as the stream fills them), the pairs read in order (opts.Pairs32 told of each piece), and
// a stream shorter or longer than its header an error.
func readPairs32Stream(ctx context.Context, r io.Reader, name string, m uint64, opts ReadOptions) ([]uint32, ReadStats, error) {
	dn := displayName(name)
	st := ReadStats{Path: name, Format: FormatBin}
	if _, err := io.ReadFull(r, make([]byte, binHeaderSize)); err != nil {
		return nil, st, fmt.Errorf("graph/edgeio: %s: reading: %w", dn, err)
	}
	st.Bytes = binHeaderSize
	limit, src := osmem.Available()
	if m > math.MaxInt/8 || (limit > 0 && m*8 > limit) {
		if limit == 0 {
			limit, src = math.MaxInt, "address space"
		}
		return nil, st, fmt.Errorf("graph/edgeio: %s: binary header declares %d edges (%.1f GiB of pairs), more than the %.1f GiB %s: a corrupt header?",
			dn, m, float64(m)*8/(1<<30), float64(limit)/(1<<30), src)
	}
	pairs := make([]uint32, 2*m)
	hugepage.Advise(pairs) // written once here, maybe page-locked for a device
	if opts.Pairs32 != nil {
		opts.Pairs32.Begin(pairs)
	}
	native := nativeLittleEndian()
	var buf []byte
	if !native {
		buf = make([]byte, streamPiece)
	}
	want := m * 8
	for done := uint64(0); done < want; {
		if err := ctx.Err(); err != nil {
			return nil, st, err
		}
		k := min(uint64(streamPiece), want-done)
		lo := done / 4
		b := buf[:min(k, uint64(len(buf)))]
		if native {
			b = unsafe.Slice((*byte)(unsafe.Pointer(&pairs[lo])), k)
		}
		got, err := io.ReadFull(r, b)
		st.Bytes += int64(got)
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			have := done + uint64(got)
			return nil, st, fmt.Errorf("graph/edgeio: %s: truncated binary edge list: header declares %d edges (%d bytes of pairs) but only %d bytes follow: %d bytes (%d edges) missing",
				dn, m, want, have, want-have, m-have/8)
		}
		if err != nil {
			return nil, st, fmt.Errorf("graph/edgeio: %s: reading: %w", dn, err)
		}
		if !native {
			for j := range k / 4 {
				pairs[lo+j] = binary.LittleEndian.Uint32(b[4*j:])
			}
		}
		done += k
		st.Edges = int64(done / 8)
		if opts.Pairs32 != nil {
			opts.Pairs32.Filled(int(lo), int(done/4))
		}
		if opts.Progress != nil {
			opts.Progress(st.Bytes, -1)
		}
	}
	extra, err := io.Copy(io.Discard, r)
	if err != nil {
		return nil, st, fmt.Errorf("graph/edgeio: %s: reading: %w", dn, err)
	}
	if extra > 0 {
		return nil, st, fmt.Errorf("graph/edgeio: %s: %d trailing bytes after the %d declared edges of the binary edge list", dn, extra, m)
	}
	return pairs, st, nil
}
