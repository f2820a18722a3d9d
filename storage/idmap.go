package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// The id map file: rank id -> original id, as one section of zigzag delta
// varints behind a small checksummed header (docs/shards.md). Deltas make
// an identity-like map nearly free and cost little on random ids.
const (
	idMapMagic     = "TGIDMAP\x00"
	idMapVersion   = 1
	idOffVersion   = 8
	idOffCount     = 16
	idOffSection   = 24
	idOffHeaderSum = idOffSection + sectionDescSize // 56
	idHeaderSize   = idOffHeaderSum + 8             // 64
)

// WriteIDMap stores ids (ids[rank] = original id) as name and returns the
// reference to put in the manifest.
func WriteIDMap(ctx context.Context, s Store, name string, ids []uint64) (FileRef, error) {
	raw := make([]byte, 0, len(ids)*3)
	var prev uint64
	for _, v := range ids {
		d := int64(v - prev) // wraps on purpose: deltas are mod 2^64
		raw = binary.AppendUvarint(raw, uint64(d<<1)^uint64(d>>63))
		prev = v
	}
	out := make([]byte, idHeaderSize, idHeaderSize+len(raw)/2)
	out, d, err := appendSection(out, raw)
	if err != nil {
		return FileRef{}, fmt.Errorf("storage: id map %s: %w", name, err)
	}
	le := binary.LittleEndian
	copy(out, idMapMagic)
	le.PutUint16(out[idOffVersion:], idMapVersion)
	le.PutUint64(out[idOffCount:], uint64(len(ids)))
	d.put(out[idOffSection:])
	le.PutUint64(out[idOffHeaderSum:], xxhash.Sum64(out[:idOffHeaderSum]))
	if err := s.Put(ctx, name, out); err != nil {
		return FileRef{}, err
	}
	return FileRef{File: name, Bytes: int64(len(out)), Count: int64(len(ids)), XXHash64: xxhash.Sum64(out)}, nil
}

// ReadIDMap reads the id map ref names and checks it against ref (size,
// whole-file hash, count) and its own header and section checksums.
func ReadIDMap(ctx context.Context, s Store, ref FileRef) ([]uint64, error) {
	name := ref.File
	data, err := s.Get(ctx, name)
	if err != nil {
		return nil, &ShardError{Shard: name, Reason: fmt.Sprintf("id map cannot be read from %s: %v", s.URL(), err), Err: err}
	}
	if int64(len(data)) != ref.Bytes {
		return nil, shardErr(name, ErrMismatch, "%d bytes, the manifest says %d", len(data), ref.Bytes)
	}
	if sum := xxhash.Sum64(data); sum != ref.XXHash64 {
		return nil, shardErr(name, ErrChecksum, "file checksum %016x, the manifest says %016x", sum, ref.XXHash64)
	}
	ids, err := decodeIDMap(name, data)
	if err != nil {
		return nil, err
	}
	if int64(len(ids)) != ref.Count {
		return nil, shardErr(name, ErrMismatch, "%d ids, the manifest says %d", len(ids), ref.Count)
	}
	return ids, nil
}

func decodeIDMap(name string, data []byte) ([]uint64, error) {
	le := binary.LittleEndian
	n := min(len(data), len(idMapMagic))
	if !bytes.Equal(data[:n], []byte(idMapMagic)[:n]) {
		return nil, shardErr(name, ErrNotShard, "not a trigrid id map (bad magic)")
	}
	if len(data) < idHeaderSize {
		return nil, shardErr(name, ErrTruncated, "header: truncated: %d of %d bytes present", len(data), idHeaderSize)
	}
	if v := le.Uint16(data[idOffVersion:]); v != idMapVersion {
		return nil, shardErr(name, ErrVersion, "id map format version %d is not supported (this build reads %d)", v, idMapVersion)
	}
	if want, got := le.Uint64(data[idOffHeaderSum:]), xxhash.Sum64(data[:idOffHeaderSum]); want != got {
		return nil, shardErr(name, ErrChecksum, "header: checksum mismatch (stored %016x, computed %016x)", want, got)
	}
	for _, c := range data[idOffVersion+2 : idOffCount] {
		if c != 0 {
			return nil, shardErr(name, ErrCorrupt, "header: reserved bytes are not zero")
		}
	}
	count := le.Uint64(data[idOffCount:])
	d, err := getSectionDesc(data[idOffSection:])
	if err != nil {
		return nil, shardErr(name, ErrCorrupt, "header: ids descriptor: %v", err)
	}
	if have := uint64(len(data) - idHeaderSize); d.stored != have {
		return nil, shardErr(name, ErrTruncated, "ids: section has %d bytes, header says %d", have, d.stored)
	}
	if d.raw < count || d.raw/10 > count {
		return nil, shardErr(name, ErrCorrupt, "ids: %d bytes cannot hold %d ids", d.raw, count)
	}
	raw, err := readSection(name, "ids", d, data[idHeaderSize:], true)
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, count)
	p := 0
	var prev uint64
	for k := range ids {
		z, m := binary.Uvarint(raw[p:])
		if m <= 0 {
			return nil, shardErr(name, ErrCorrupt, "ids: id %d: bad varint at byte %d", k, p)
		}
		p += m
		prev += uint64(int64(z>>1) ^ -int64(z&1))
		ids[k] = prev
	}
	if p != len(raw) {
		return nil, shardErr(name, ErrCorrupt, "ids: %d bytes left after %d ids", len(raw)-p, count)
	}
	return ids, nil
}
