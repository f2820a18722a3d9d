package storage

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// Section codecs. A section is stored raw when zstd would not make it
// smaller (tiny shards), so the codec is recorded per section.
const (
	codecNone uint8 = 0
	codecZstd uint8 = 1
)

// sectionDescSize is the size of one section descriptor in a header:
// codec u8, 7 reserved zero bytes, stored length u64, raw length u64,
// xxhash64 of the stored bytes u64.
const sectionDescSize = 32

// zstdMaxRatio bounds how much a zstd section can expand: the densest zstd
// frame is a run of RLE blocks, 4 bytes for 128 KiB. A raw length above
// stored*zstdMaxRatio cannot be real, so a forged header cannot make the
// decoder allocate more than a constant times the bytes present.
const zstdMaxRatio = 1 << 15

type sectionDesc struct {
	codec  uint8
	stored uint64
	raw    uint64
	sum    uint64
}

func (d sectionDesc) put(b []byte) {
	b[0] = d.codec
	clear(b[1:8])
	binary.LittleEndian.PutUint64(b[8:], d.stored)
	binary.LittleEndian.PutUint64(b[16:], d.raw)
	binary.LittleEndian.PutUint64(b[24:], d.sum)
}

// getSectionDesc parses a descriptor; reserved bytes must be zero so that a
// later version can give them a meaning without old readers misreading it.
func getSectionDesc(b []byte) (sectionDesc, error) {
	d := sectionDesc{
		codec:  b[0],
		stored: binary.LittleEndian.Uint64(b[8:]),
		raw:    binary.LittleEndian.Uint64(b[16:]),
		sum:    binary.LittleEndian.Uint64(b[24:]),
	}
	for _, c := range b[1:8] {
		if c != 0 {
			return d, fmt.Errorf("reserved descriptor bytes are not zero")
		}
	}
	switch d.codec {
	case codecNone:
		if d.raw != d.stored {
			return d, fmt.Errorf("uncompressed section: raw length %d != stored length %d", d.raw, d.stored)
		}
	case codecZstd:
		if d.stored == 0 || d.raw/zstdMaxRatio > d.stored {
			return d, fmt.Errorf("raw length %d impossible for %d compressed bytes", d.raw, d.stored)
		}
	default:
		return d, fmt.Errorf("unknown codec %d", d.codec)
	}
	return d, nil
}

// The encoders and the decoder are shared: EncodeAll and DecodeAll are
// safe for concurrent use and keep their own pools, and building them is
// far more expensive than a small shard. Sections of at most one zstd
// block (SmallSectionBytes) go through an encoder whose window is that
// block: the same bytes as the large-window encoder writes for them (the
// frame is one segment and no match reaches further back), but each of
// its encoders holds a history of 1 MiB, not of twice the 8 MiB window,
// which the large-window encoder allocates at its first section of any
// size.
var (
	zstdOnce  sync.Once
	zstdEnc   *zstd.Encoder
	zstdSmall *zstd.Encoder
	zstdDec   *zstd.Decoder
	zstdErr   error
)

// SmallSectionBytes is the largest section the small-window encoder
// compresses: one zstd block.
const SmallSectionBytes = 128 << 10

// zstdLevel is the level shards are written with. On an rmat block
// (BenchmarkLevels) SpeedBetterCompression makes shards about 10% smaller
// than SpeedDefault (0.242 vs 0.268 of the raw CSR) at about the same
// encode speed, and its slower zstd decode is still several times faster
// than the varint decode that follows, so it barely moves decode time.
const zstdLevel = zstd.SpeedBetterCompression

func newEncoder(level zstd.EncoderLevel, opts ...zstd.EOption) (*zstd.Encoder, error) {
	// The zstd CRC duplicates the xxhash64 every section carries.
	return zstd.NewWriter(nil, append([]zstd.EOption{zstd.WithEncoderLevel(level), zstd.WithEncoderCRC(false)}, opts...)...)
}

func codecs() (*zstd.Encoder, *zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdEnc, zstdErr = newEncoder(zstdLevel)
		if zstdErr != nil {
			return
		}
		zstdSmall, zstdErr = newEncoder(zstdLevel, zstd.WithWindowSize(SmallSectionBytes))
		if zstdErr != nil {
			return
		}
		// Cap-limited DecodeAll never writes past cap(dst), which is the
		// raw length the header declared: a lying frame cannot grow it.
		zstdDec, zstdErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxMemory(1<<40))
	})
	return zstdEnc, zstdDec, zstdErr
}

// appendSection appends raw to out, compressed when that saves bytes, and
// returns the descriptor of what it appended.
func appendSection(out, raw []byte) ([]byte, sectionDesc, error) {
	enc, _, err := codecs()
	if err != nil {
		return out, sectionDesc{}, err
	}
	start := len(out)
	d := sectionDesc{codec: codecZstd, raw: uint64(len(raw))}
	if len(raw) > SmallSectionBytes {
		out = enc.EncodeAll(raw, out)
	} else if len(raw) > 0 {
		out = zstdSmall.EncodeAll(raw, out)
	}
	if len(raw) == 0 || len(out)-start >= len(raw) {
		out = append(out[:start], raw...)
		d.codec = codecNone
	}
	d.stored = uint64(len(out) - start)
	d.sum = xxhash.Sum64(out[start:])
	return out, d, nil
}

// readSection checks and decompresses one section. what names the section
// in errors ("degrees", "cols"). Only fuzz tests pass verify = false, to
// reach the decoders behind the checksums.
func readSection(name, what string, d sectionDesc, stored []byte, verify bool) ([]byte, error) {
	return readSectionInto(name, what, d, stored, verify, nil)
}

// readSectionInto is readSection that decompresses into buf when it holds
// the raw length (a fresh array otherwise). The section returned is
// stored itself for an uncompressed one, else memory of buf (or fresh).
func readSectionInto(name, what string, d sectionDesc, stored []byte, verify bool, buf []byte) ([]byte, error) {
	if verify {
		if got := xxhash.Sum64(stored); got != d.sum {
			return nil, shardErr(name, ErrChecksum, "%s: checksum mismatch (header says %016x, data hashes to %016x)", what, d.sum, got)
		}
	}
	if d.codec == codecNone {
		return stored, nil
	}
	_, dec, err := codecs()
	if err != nil {
		return nil, shardErr(name, err, "%s: zstd: %v", what, err)
	}
	if uint64(cap(buf)) < d.raw {
		buf = make([]byte, 0, d.raw)
	}
	// Capped at the raw length the header declares: a lying frame cannot
	// write past it (WithDecodeAllCapLimit).
	raw, err := dec.DecodeAll(stored, buf[:0:d.raw])
	if err != nil {
		return nil, shardErr(name, ErrCorrupt, "%s: zstd: %v", what, err)
	}
	if uint64(len(raw)) != d.raw {
		return nil, shardErr(name, ErrCorrupt, "%s: decompressed to %d bytes, header says %d", what, len(raw), d.raw)
	}
	return raw, nil
}
