package storage

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/trigrid/trigrid/graph"
)

// WriteManifest validates m, seals it (sets m.Checksum) and stores it as
// ManifestName through Put, which is atomic. Call it after every shard is
// stored: readers take the manifest's presence to mean the partitioning
// is complete.
func WriteManifest(ctx context.Context, s Store, m *Manifest) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if err := m.Seal(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("storage: manifest: %w", err)
	}
	return s.Put(ctx, ManifestName, append(data, '\n'))
}

// ReadManifest reads the manifest of s, verifies its checksum and
// validates it. Errors name the manifest's location.
func ReadManifest(ctx context.Context, s Store) (*Manifest, error) {
	data, err := s.Get(ctx, ManifestName)
	if err != nil {
		return nil, fmt.Errorf("storage: %s: no readable manifest (is the partitioning complete?): %w", s.URL(), err)
	}
	return DecodeManifest(s.URL()+"/"+ManifestName, data)
}

// DecodeManifest parses a manifest's bytes, then checks its format, its
// checksum and its consistency, in that order, so that a manifest of an
// older format gets the advice to re-partition rather than a checksum
// error. where names the manifest in errors.
func DecodeManifest(where string, data []byte) (*Manifest, error) {
	m := new(Manifest)
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("storage: %s: %w", where, err)
	}
	if m.Format != ManifestFormat {
		// Validate words the format error.
		return nil, fmt.Errorf("%w (in %s)", m.Validate(), where)
	}
	if err := m.VerifyChecksum(); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, where)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, where)
	}
	return m, nil
}

// LoadShard returns block (i, j) of the partitioning m describes:
// FetchShard, then DecodeBlock. A block absent from the manifest is empty
// and comes back as an edgeless CSR of the right dimensions. A stored
// block is checked against its manifest entry twice: the whole file (size,
// xxhash64) before decoding, and the decoded header (scheme, P, I, J,
// partition id, counts) after, so a shard of another partitioning is an
// ErrMismatch even when it is intact.
func LoadShard(ctx context.Context, s Store, m *Manifest, i, j int) (*graph.CSR, error) {
	data, err := FetchShard(ctx, s, m, i, j)
	if err != nil {
		return nil, err
	}
	return DecodeBlock(m, i, j, data)
}

// FetchShard returns the bytes of block (i, j)'s shard, checked against
// the manifest's size and xxhash64; nil, with no error, for a block the
// manifest does not list (an empty block).
func FetchShard(ctx context.Context, s Store, m *Manifest, i, j int) ([]byte, error) {
	if i < 0 || i >= m.P || j < 0 || j >= m.P || len(m.GroupSizes) != m.P {
		return nil, shardErr(ShardName(i, j), ErrMismatch, "block (%d,%d) outside a %dx%d partition", i, j, m.P, m.P)
	}
	info, ok := m.Shard(i, j)
	if !ok {
		return nil, nil
	}
	// An object store names the object by its URL, so that the operator
	// can find it without knowing the store's layout.
	name := info.File
	if o, ok := s.(interface{ ObjectURL(string) string }); ok {
		name = o.ObjectURL(info.File)
	}
	data, err := s.Get(ctx, info.File)
	if err != nil {
		return nil, &ShardError{Shard: name, Reason: fmt.Sprintf("listed in the manifest but cannot be read from %s: %v", s.URL(), err), Err: err}
	}
	if int64(len(data)) != info.Bytes {
		return nil, shardErr(name, ErrMismatch, "%d bytes, the manifest says %d", len(data), info.Bytes)
	}
	if sum := xxhash.Sum64(data); sum != info.XXHash64 {
		return nil, shardErr(name, ErrChecksum, "file checksum %016x, the manifest says %016x", sum, info.XXHash64)
	}
	return data, nil
}

// DecodeBlock decodes the shard bytes FetchShard returned for block
// (i, j) and checks the decoded header against the manifest. nil data is
// the empty block of a block the manifest does not list.
func DecodeBlock(m *Manifest, i, j int, data []byte) (*graph.CSR, error) {
	if i < 0 || i >= m.P || j < 0 || j >= m.P || len(m.GroupSizes) != m.P {
		return nil, shardErr(ShardName(i, j), ErrMismatch, "block (%d,%d) outside a %dx%d partition", i, j, m.P, m.P)
	}
	info, ok := m.Shard(i, j)
	if !ok {
		if data != nil {
			return nil, shardErr(ShardName(i, j), ErrMismatch, "%d bytes for a block the manifest does not list", len(data))
		}
		return &graph.CSR{Offsets: make([]uint64, m.GroupSizes[i]+1), NCols: m.GroupSizes[j]}, nil
	}
	name := info.File
	if int64(len(data)) != info.Bytes {
		return nil, shardErr(name, ErrMismatch, "%d bytes, the manifest says %d", len(data), info.Bytes)
	}
	h, c, err := DecodeShard(name, data)
	if err != nil {
		return nil, err
	}
	type key struct {
		Scheme            Scheme
		P, I, J           uint32
		Rows, Cols, Edges uint64
		PartitionID       uint64
	}
	got := key{h.Scheme, h.P, h.I, h.J, h.Rows, h.Cols, h.Edges, h.PartitionID}
	want := key{m.Scheme, uint32(m.P), uint32(i), uint32(j), info.Rows, info.Cols, info.Edges, m.PartitionID}
	if got != want {
		return nil, shardErr(name, ErrMismatch, "header %s, the manifest expects %s", describe(got.Scheme, got.P, got.I, got.J, got.Rows, got.Cols, got.Edges, got.PartitionID),
			describe(want.Scheme, want.P, want.I, want.J, want.Rows, want.Cols, want.Edges, want.PartitionID))
	}
	return c, nil
}

func describe(s Scheme, p, i, j uint32, rows, cols, edges, id uint64) string {
	return fmt.Sprintf("{%v P=%d block (%d,%d) %dx%d %d edges partition %016x}", s, p, i, j, rows, cols, edges, id)
}
