package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/cespare/xxhash/v2"

	"github.com/trigrid/trigrid/graph"
)

// ShardVersion is the shard format this build writes and the only one it
// reads.
const ShardVersion = 1

// shardMagic opens every shard; the NUL keeps it from reading as text.
const shardMagic = "TGSHARD\x00"

// Header layout; docs/shards.md is the reference and must change with it.
const (
	offVersion   = 8
	offScheme    = 10
	offReserved  = 11
	offP         = 12
	offI         = 16
	offJ         = 20
	offRows      = 24
	offCols      = 32
	offEdges     = 40
	offPartition = 48
	offSections  = 56
	numSections  = 2
	offHeaderSum = offSections + numSections*sectionDescSize // 120
	headerSize   = offHeaderSum + 8                          // 128
)

// Section indexes and the names errors use for them.
const (
	secDegrees = 0
	secCols    = 1
)

var sectionNames = [numSections]string{"degrees", "cols"}

// maxCols is the largest column space a uint32 column id can address.
const maxCols = 1 << 32

// ShardHeader describes one shard: where its block sits in which
// partitioning, and its dimensions.
type ShardHeader struct {
	Version uint16
	Scheme  Scheme
	// P is the number of groups; the block is B[I][J], 0 <= I, J < P.
	P, I, J uint32
	// Rows and Cols are the sizes of groups I and J (the local index
	// spaces); Edges is the number of stored entries.
	Rows, Cols, Edges uint64
	// PartitionID identifies the partitioning run, so that shards of two
	// runs over the same graph cannot be mixed.
	PartitionID uint64
}

// ShardName is the file name of block (i, j). Zero padding keeps a
// directory listing in block order for P up to 10000.
func ShardName(i, j int) string { return fmt.Sprintf("shard-%04d-%04d.tgs", i, j) }

func (h ShardHeader) check() error {
	if !h.Scheme.Valid() {
		return fmt.Errorf("invalid %v", h.Scheme)
	}
	if h.P == 0 {
		return fmt.Errorf("the header's P is 0")
	}
	if h.I >= h.P || h.J >= h.P {
		return fmt.Errorf("block (%d,%d) outside a %dx%d partition", h.I, h.J, h.P, h.P)
	}
	if h.Cols > maxCols {
		return fmt.Errorf("%d columns do not fit uint32 column ids", h.Cols)
	}
	return nil
}

// EncodeShard encodes block b as a shard. h.Rows, h.Cols and h.Edges are
// taken from b; h.Version may be 0 (meaning ShardVersion). b is checked
// against graph.CSR's invariants while it is encoded, so an invalid block
// is refused rather than stored.
func EncodeShard(h ShardHeader, b *graph.CSR) ([]byte, error) {
	fail := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("storage: encode shard (%d,%d): %s", h.I, h.J, fmt.Sprintf(format, args...))
	}
	if h.Version == 0 {
		h.Version = ShardVersion
	}
	if h.Version != ShardVersion {
		return fail("cannot write format version %d (this build writes %d)", h.Version, ShardVersion)
	}
	if b == nil {
		return fail("nil CSR")
	}
	h.Rows = uint64(b.NumRows())
	h.Cols = uint64(b.NCols)
	h.Edges = uint64(len(b.Cols))
	if b.NCols < 0 {
		return fail("negative column count %d", b.NCols)
	}
	if err := h.check(); err != nil {
		return fail("%v", err)
	}
	degRaw, err := encodeDegrees(b)
	if err != nil {
		return fail("%v", err)
	}
	colRaw, err := encodeCols(b)
	if err != nil {
		return fail("%v", err)
	}

	out := make([]byte, headerSize, headerSize+len(degRaw)/2+len(colRaw)*3/4+64)
	var descs [numSections]sectionDesc
	if out, descs[secDegrees], err = appendSection(out, degRaw); err != nil {
		return fail("degrees: %v", err)
	}
	if out, descs[secCols], err = appendSection(out, colRaw); err != nil {
		return fail("cols: %v", err)
	}
	putHeader(out[:headerSize], h, descs)
	return out, nil
}

func putHeader(b []byte, h ShardHeader, descs [numSections]sectionDesc) {
	le := binary.LittleEndian
	copy(b, shardMagic)
	le.PutUint16(b[offVersion:], h.Version)
	b[offScheme] = uint8(h.Scheme)
	b[offReserved] = 0
	le.PutUint32(b[offP:], h.P)
	le.PutUint32(b[offI:], h.I)
	le.PutUint32(b[offJ:], h.J)
	le.PutUint64(b[offRows:], h.Rows)
	le.PutUint64(b[offCols:], h.Cols)
	le.PutUint64(b[offEdges:], h.Edges)
	le.PutUint64(b[offPartition:], h.PartitionID)
	for s, d := range descs {
		d.put(b[offSections+s*sectionDescSize:])
	}
	le.PutUint64(b[offHeaderSum:], xxhash.Sum64(b[:offHeaderSum]))
}

// encodeDegrees writes one uvarint per row: its degree. Degrees rather than
// offsets because they are small, and most rows of a block fit one byte.
func encodeDegrees(b *graph.CSR) ([]byte, error) {
	if len(b.Offsets) == 0 {
		if len(b.Cols) != 0 {
			return nil, fmt.Errorf("%d columns but no offsets", len(b.Cols))
		}
		return nil, nil
	}
	if b.Offsets[0] != 0 {
		return nil, fmt.Errorf("first offset is %d, want 0", b.Offsets[0])
	}
	if last := b.Offsets[len(b.Offsets)-1]; last != uint64(len(b.Cols)) {
		return nil, fmt.Errorf("last offset is %d but there are %d columns", last, len(b.Cols))
	}
	raw := make([]byte, 0, len(b.Offsets)+len(b.Offsets)/4)
	for r := 1; r < len(b.Offsets); r++ {
		lo, hi := b.Offsets[r-1], b.Offsets[r]
		if hi < lo {
			return nil, fmt.Errorf("row %d: offsets decrease (%d > %d)", r-1, lo, hi)
		}
		raw = binary.AppendUvarint(raw, hi-lo)
	}
	return raw, nil
}

// encodeCols writes each non-empty row as uvarints: its first column, then
// gap-1 for each next column. Rows are strictly increasing, so gap-1 >= 0,
// and the decoder gets strictness for free.
func encodeCols(b *graph.CSR) ([]byte, error) {
	raw := make([]byte, 0, len(b.Cols)*3/2+16)
	ncols := uint64(b.NCols)
	for r := 1; r < len(b.Offsets); r++ {
		row := b.Cols[b.Offsets[r-1]:b.Offsets[r]]
		prev := ^uint64(0) // prev+1 wraps to 0: the first column is stored as is
		for _, c32 := range row {
			c := uint64(c32)
			if c >= ncols {
				return nil, fmt.Errorf("row %d: column %d out of range (%d columns)", r-1, c, ncols)
			}
			if prev != ^uint64(0) && c <= prev {
				return nil, fmt.Errorf("row %d: columns not strictly increasing at %d", r-1, c)
			}
			raw = binary.AppendUvarint(raw, c-(prev+1))
			prev = c
		}
	}
	return raw, nil
}

// DecodeShard decodes a shard. name (the file name) is carried by every
// error, which is a *ShardError. On success the CSR satisfies graph.CSR's
// invariants: the checks ride along with decoding instead of a second pass.
func DecodeShard(name string, data []byte) (ShardHeader, *graph.CSR, error) {
	return decodeShard(name, data, true)
}

func decodeShard(name string, data []byte, verify bool) (ShardHeader, *graph.CSR, error) {
	h, descs, err := parseHeader(name, data, verify)
	if err != nil {
		return ShardHeader{}, nil, err
	}
	var raw [numSections][]byte
	// The decompressed sections are garbage once decoded: their buffers
	// are kept for the next shard's (scratch.go).
	var bufs [numSections][]byte
	defer func() {
		for _, b := range bufs {
			putScratch(b)
		}
	}()
	pos := uint64(headerSize)
	for s, d := range descs {
		stored := data[pos : pos+d.stored]
		pos += d.stored
		if d.codec == codecZstd {
			bufs[s] = getScratch(d.raw)
		}
		if raw[s], err = readSectionInto(name, sectionNames[s], d, stored, verify, bufs[s]); err != nil {
			return ShardHeader{}, nil, err
		}
	}
	offs, err := decodeDegrees(name, raw[secDegrees], h.Rows, h.Edges)
	if err != nil {
		return ShardHeader{}, nil, err
	}
	cols := fresh[uint32](h.Edges)
	if err := decodeColsPar(name, raw[secCols], offs, cols, h.Cols); err != nil {
		return ShardHeader{}, nil, err
	}
	return h, &graph.CSR{Offsets: offs, Cols: cols, NCols: int64(h.Cols)}, nil
}

// parseHeader checks everything that can be checked before touching the
// sections: magic, version, header checksum, field ranges, and that the
// sections fill the data exactly. It also bounds Rows and Edges by the
// section sizes, so no later allocation exceeds a constant times len(data).
func parseHeader(name string, data []byte, verify bool) (ShardHeader, [numSections]sectionDesc, error) {
	var descs [numSections]sectionDesc
	var h ShardHeader
	le := binary.LittleEndian
	n := min(len(data), len(shardMagic))
	if !bytes.Equal(data[:n], []byte(shardMagic)[:n]) {
		return h, descs, shardErr(name, ErrNotShard, "not a trigrid shard (bad magic)")
	}
	if len(data) < offVersion+2 {
		return h, descs, shardErr(name, ErrTruncated, "header: truncated: %d of %d bytes present", len(data), headerSize)
	}
	// The version is checked before the header checksum: a newer format may
	// lay its header out differently, and "version 2" is the useful message.
	if v := le.Uint16(data[offVersion:]); v != ShardVersion {
		return h, descs, shardErr(name, ErrVersion, "shard format version %d is not supported (this build reads %d)", v, ShardVersion)
	}
	if len(data) < headerSize {
		return h, descs, shardErr(name, ErrTruncated, "header: truncated: %d of %d bytes present", len(data), headerSize)
	}
	if want, got := le.Uint64(data[offHeaderSum:]), xxhash.Sum64(data[:offHeaderSum]); want != got && verify {
		return h, descs, shardErr(name, ErrChecksum, "header: checksum mismatch (stored %016x, computed %016x)", want, got)
	}
	h = ShardHeader{
		Version:     ShardVersion,
		Scheme:      Scheme(data[offScheme]),
		P:           le.Uint32(data[offP:]),
		I:           le.Uint32(data[offI:]),
		J:           le.Uint32(data[offJ:]),
		Rows:        le.Uint64(data[offRows:]),
		Cols:        le.Uint64(data[offCols:]),
		Edges:       le.Uint64(data[offEdges:]),
		PartitionID: le.Uint64(data[offPartition:]),
	}
	if data[offReserved] != 0 {
		return h, descs, shardErr(name, ErrCorrupt, "header: reserved byte is %d, want 0", data[offReserved])
	}
	if err := h.check(); err != nil {
		return h, descs, shardErr(name, ErrCorrupt, "header: %v", err)
	}
	pos := uint64(headerSize)
	for s := range descs {
		d, err := getSectionDesc(data[offSections+s*sectionDescSize:])
		if err != nil {
			return h, descs, shardErr(name, ErrCorrupt, "header: %s descriptor: %v", sectionNames[s], err)
		}
		if have := uint64(len(data)) - pos; d.stored > have {
			return h, descs, shardErr(name, ErrTruncated, "%s: truncated: section needs %d bytes, %d present", sectionNames[s], d.stored, have)
		}
		pos += d.stored
		descs[s] = d
	}
	if extra := uint64(len(data)) - pos; extra != 0 {
		return h, descs, shardErr(name, ErrCorrupt, "%d trailing bytes after the last section", extra)
	}
	// Every degree and every column takes at least one and at most
	// ten (degree) or five (column) varint bytes.
	if d := descs[secDegrees]; d.raw < h.Rows || d.raw/10 > h.Rows {
		return h, descs, shardErr(name, ErrCorrupt, "degrees: %d bytes cannot hold %d rows", d.raw, h.Rows)
	}
	if d := descs[secCols]; d.raw < h.Edges || d.raw/5 > h.Edges {
		return h, descs, shardErr(name, ErrCorrupt, "cols: %d bytes cannot hold %d edges", d.raw, h.Edges)
	}
	return h, descs, nil
}

// decodeDegrees turns the degree varints into Rows+1 offsets and checks
// they add up to Edges. rows <= len(raw) was checked by parseHeader.
func decodeDegrees(name string, raw []byte, rows, edges uint64) ([]uint64, error) {
	offs := fresh[uint64](rows + 1)
	p := 0
	var sum uint64
	for r := uint64(0); r < rows; r++ {
		var v uint64
		if p < len(raw) && raw[p] < 0x80 {
			v = uint64(raw[p])
			p++
		} else {
			var m int
			v, m = binary.Uvarint(raw[p:])
			if m <= 0 {
				return nil, shardErr(name, ErrCorrupt, "degrees: row %d: bad varint at byte %d", r, p)
			}
			p += m
		}
		if v > edges-sum {
			return nil, shardErr(name, ErrCorrupt, "degrees: row %d: degrees add up to more than the %d edges in the header", r, edges)
		}
		sum += v
		offs[r+1] = sum
	}
	if p != len(raw) {
		return nil, shardErr(name, ErrCorrupt, "degrees: %d bytes left after %d rows", len(raw)-p, rows)
	}
	if sum != edges {
		return nil, shardErr(name, ErrCorrupt, "degrees: add up to %d edges, header says %d", sum, edges)
	}
	return offs, nil
}

// decodeCols fills cols from the gap varints. Strict increase follows from
// the encoding; the range check is one compare per column. A varint of up
// to four bytes (a gap below 2^28: every gap of a block of fewer columns)
// is read without a branch on its length, whose mispredictions would
// otherwise take most of the decode; longer ones, and those in the last
// bytes of raw, by binary.Uvarint.
func decodeCols(name string, raw []byte, offs []uint64, cols []uint32, ncols uint64) error {
	p, err := decodeRows(name, raw, 0, offs, 0, len(offs)-1, cols, ncols)
	if err == nil && p != len(raw) {
		err = shardErr(name, ErrCorrupt, "cols: %d bytes left after %d edges", len(raw)-p, len(cols))
	}
	return err
}

// decodeRows decodes rows [r0, r1) of the column varints from byte p of
// raw on, as decodeCols does, and returns the byte after them.
func decodeRows(name string, raw []byte, p int, offs []uint64, r0, r1 int, cols []uint32, ncols uint64) (int, error) {
	n := len(raw)
	for r := r0; r < r1; r++ {
		row := cols[offs[r]:offs[r+1]]
		if uint64(len(row)) > ncols { // bounds next below: see have
			return p, shardErr(name, ErrCorrupt, "cols: row %d: %d entries, so columns out of range (%d columns)", r, len(row), ncols)
		}
		next := uint64(0) // the least the row's next column can be
		for k := range row {
			var v uint64
			if p+4 <= n {
				x := binary.LittleEndian.Uint32(raw[p : p+4])
				// A byte below 0x80 ends the varint: the lowest such.
				if stop := ^x & 0x80808080; stop != 0 {
					w := uint64(x & (stop ^ (stop - 1))) // its bytes and no later one
					v = w&0x7f | w>>1&(0x7f<<7) | w>>2&(0x7f<<14) | w>>3&(0x7f<<21)
					p += bits.TrailingZeros32(stop)>>3 + 1
					goto have
				}
			}
			{
				var m int
				v, m = binary.Uvarint(raw[p:])
				if m <= 0 {
					return p, shardErr(name, ErrCorrupt, "cols: row %d: bad varint at byte %d", r, p)
				}
				p += m
				if v >= ncols || next+v >= ncols {
					return p, shardErr(name, ErrCorrupt, "cols: row %d: column %d out of range (%d columns)", r, next+v, ncols)
				}
			}
		have:
			// Columns increase along a row, so its last is checked for all:
			// next stays below 2^61 (at most 2^32 gaps under 2^28 since a
			// long varint was last checked), and no sum overflows.
			c := next + v
			row[k] = uint32(c)
			next = c + 1
		}
		if next > ncols {
			return p, shardErr(name, ErrCorrupt, "cols: row %d: column %d out of range (%d columns)", r, next-1, ncols)
		}
	}
	return p, nil
}
