package storage

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// ManifestFormat is the manifest format this build writes and reads.
// Format 2 added the manifest's own checksum; format 1 manifests carry
// none, so nothing vouches for their shard list, and they are refused
// with a request to re-partition rather than trusted.
const ManifestFormat = 2

// ManifestName is the manifest's file name in a store. It is written after
// every shard, so its presence means the partitioning is complete.
const ManifestName = "manifest.json"

// Manifest describes one partitioning of one graph: how vertices were
// grouped and which shards hold the non-empty blocks.
type Manifest struct {
	Format int    `json:"format"`
	Scheme Scheme `json:"scheme"`
	P      int    `json:"p"`
	// PartitionID is the id every shard header carries (hex in JSON, since
	// JSON readers outside Go lose precision above 2^53). It must not be 0.
	PartitionID uint64     `json:"partition_id"`
	Graph       GraphStats `json:"graph"`
	// Boundaries are the Fold*P+1 range starts of the range scheme: range
	// r is [Boundaries[r], Boundaries[r+1]) and belongs to group
	// RangeGroup(r, P). Empty for hash.
	Boundaries []uint64 `json:"boundaries,omitempty"`
	// Fold is the number of ranges per group of the range scheme; absent
	// (0) means 1, one range per group, as manifests written before
	// folding have it. Builds that predate it refuse a folded manifest,
	// whose boundary count is not P+1, rather than misread it.
	Fold int `json:"fold,omitempty"`
	// GroupSizes has P entries, the vertex count of each group: the row
	// and column counts of every block, stored or empty.
	GroupSizes []int64 `json:"group_sizes"`
	// IDMap, when present, maps rank ids back to the input's ids.
	IDMap *FileRef `json:"id_map,omitempty"`
	// Shards lists the non-empty blocks; a block not listed is empty.
	Shards []ShardInfo `json:"shards"`
	// Created is an RFC 3339 time, for people.
	Created string `json:"created,omitempty"`
	// Checksum is "sha256:" and the hex SHA-256 of the manifest's
	// canonical JSON with this field empty: it covers every field,
	// including each shard's entry and file hash, so a shard dropped from
	// the list with the edge count lowered to match is caught on open.
	// WriteManifest sets it and ReadManifest verifies it. It detects
	// edits and corruption, not a forger who recomputes it.
	Checksum string `json:"checksum,omitempty"`
}

// GraphStats describes the whole forward graph that was partitioned.
type GraphStats struct {
	Vertices int64 `json:"vertices"`
	// Edges counts undirected simple edges, which is also the number of
	// forward edges, so it equals the sum of the shards' edge counts.
	Edges     int64  `json:"edges"`
	Wedges    uint64 `json:"wedges"`
	MaxDegree int64  `json:"max_degree"`
	// Order is the vertex ordering used ("degree", ...).
	Order string `json:"order,omitempty"`
	// Source names the input (a path or URL), for people.
	Source string `json:"source,omitempty"`
	// MaxOutDegree is the largest forward (out-)degree; nil when the
	// writer did not record it.
	MaxOutDegree *int64 `json:"max_out_degree,omitempty"`
	// Removed says what cleaning dropped from the input; nil when the
	// writer did not record it (a graph partitioned from memory).
	Removed *RemovedStats `json:"removed,omitempty"`
	// Input describes the file that was read; nil when not recorded.
	Input *InputStats `json:"input,omitempty"`
}

// RemovedStats is what cleaning dropped from the input.
type RemovedStats struct {
	SelfLoops   uint64 `json:"self_loops"`
	Duplicates  uint64 `json:"duplicates"`
	IsolatedIDs uint64 `json:"isolated_ids"`
	BadLines    int64  `json:"bad_lines"`
}

// InputStats describes the input file as read.
type InputStats struct {
	Format      string `json:"format"`
	Compression string `json:"compression,omitempty"`
	Bytes       int64  `json:"bytes"`
	RawEdges    int64  `json:"raw_edges"`
}

// ShardInfo is the manifest's entry for one stored block.
type ShardInfo struct {
	I     int    `json:"i"`
	J     int    `json:"j"`
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
	Rows  uint64 `json:"rows"`
	Cols  uint64 `json:"cols"`
	Edges uint64 `json:"edges"`
	// XXHash64 is the hash of the whole file, checked before decoding so
	// that a shard swapped for another valid shard is caught.
	XXHash64 uint64 `json:"xxhash64"`
}

// FileRef names an auxiliary file (the id map) with its size, element
// count and whole-file hash.
type FileRef struct {
	File     string `json:"file"`
	Bytes    int64  `json:"bytes"`
	Count    int64  `json:"count"`
	XXHash64 uint64 `json:"xxhash64"`
}

// hex64 is a uint64 written as 16 hex digits in JSON.
type hex64 uint64

func (h hex64) MarshalText() ([]byte, error) { return fmt.Appendf(nil, "%016x", uint64(h)), nil }

func (h *hex64) UnmarshalText(b []byte) error {
	if len(b) == 0 || len(b) > 16 {
		return fmt.Errorf("storage: %q is not a 64-bit hex value", b)
	}
	v, err := strconv.ParseUint(string(b), 16, 64)
	if err != nil {
		return fmt.Errorf("storage: %q is not a 64-bit hex value", b)
	}
	*h = hex64(v)
	return nil
}

// The JSON methods swap the uint64 hash and id fields for hex64 ones; the
// outer field shadows the embedded one of the same JSON name.

func (m Manifest) MarshalJSON() ([]byte, error) {
	type plain Manifest
	return json.Marshal(struct {
		plain
		PartitionID hex64 `json:"partition_id"`
	}{plain(m), hex64(m.PartitionID)})
}

func (m *Manifest) UnmarshalJSON(b []byte) error {
	type plain Manifest
	aux := struct {
		*plain
		PartitionID hex64 `json:"partition_id"`
	}{plain: (*plain)(m)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	m.PartitionID = uint64(aux.PartitionID)
	return nil
}

func (s ShardInfo) MarshalJSON() ([]byte, error) {
	type plain ShardInfo
	return json.Marshal(struct {
		plain
		XXHash64 hex64 `json:"xxhash64"`
	}{plain(s), hex64(s.XXHash64)})
}

func (s *ShardInfo) UnmarshalJSON(b []byte) error {
	type plain ShardInfo
	aux := struct {
		*plain
		XXHash64 hex64 `json:"xxhash64"`
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	s.XXHash64 = uint64(aux.XXHash64)
	return nil
}

func (f FileRef) MarshalJSON() ([]byte, error) {
	type plain FileRef
	return json.Marshal(struct {
		plain
		XXHash64 hex64 `json:"xxhash64"`
	}{plain(f), hex64(f.XXHash64)})
}

func (f *FileRef) UnmarshalJSON(b []byte) error {
	type plain FileRef
	aux := struct {
		*plain
		XXHash64 hex64 `json:"xxhash64"`
	}{plain: (*plain)(f)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	f.XXHash64 = uint64(aux.XXHash64)
	return nil
}

// Shard returns the entry of block (i, j); false means the block is empty
// (or outside the partition).
func (m *Manifest) Shard(i, j int) (ShardInfo, bool) {
	for _, s := range m.Shards {
		if s.I == i && s.J == j {
			return s, true
		}
	}
	return ShardInfo{}, false
}

// Validate checks the manifest's internal consistency: format, scheme, P,
// group sizes against the vertex count and the scheme, boundaries, and
// that shards are in range, unique, sized like their groups and add up to
// the graph's edge count.
func (m *Manifest) Validate() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("storage: manifest: %s", fmt.Sprintf(format, args...))
	}
	if m.Format == 1 {
		return fail("format 1 carries no checksum of its own, so its shard list cannot be verified: re-partition the graph with this build")
	}
	if m.Format != ManifestFormat {
		return fail("format %d is not supported (this build reads %d)", m.Format, ManifestFormat)
	}
	if !m.Scheme.Valid() {
		return fail("invalid %v", m.Scheme)
	}
	if m.P < 1 || m.P > 1<<20 {
		return fail("P = %d out of range", m.P)
	}
	if m.PartitionID == 0 {
		return fail("partition id is 0")
	}
	n := m.Graph.Vertices
	if n < 0 || m.Graph.Edges < 0 || m.Graph.MaxDegree < 0 {
		return fail("negative graph counts")
	}
	if d := m.Graph.MaxOutDegree; d != nil && *d < 0 {
		return fail("negative forward max degree %d", *d)
	}
	if len(m.GroupSizes) != m.P {
		return fail("%d group sizes for P = %d", len(m.GroupSizes), m.P)
	}
	switch m.Scheme {
	case SchemeHash:
		if len(m.Boundaries) != 0 {
			return fail("hash scheme with %d boundaries", len(m.Boundaries))
		}
		if m.Fold != 0 {
			return fail("hash scheme with fold %d", m.Fold)
		}
		for g, size := range m.GroupSizes {
			if want := hashGroupSize(n, m.P, g); size != want {
				return fail("group %d has %d vertices, want %d (%d vertices mod %d)", g, size, want, n, m.P)
			}
		}
	case SchemeRange:
		fold := m.RangeFold()
		if fold < 1 || fold > MaxFold {
			return fail("fold %d out of range 1..%d", m.Fold, MaxFold)
		}
		r := fold * m.P
		b := m.Boundaries
		if len(b) != r+1 {
			return fail("%d boundaries for P = %d and fold %d, want fold*P+1 = %d", len(b), m.P, fold, r+1)
		}
		if b[0] != 0 || b[r] != uint64(n) {
			return fail("boundaries run from %d to %d, want 0 to %d", b[0], b[r], n)
		}
		sizes := make([]int64, m.P)
		for k := range r {
			if b[k+1] < b[k] {
				return fail("boundaries decrease at range %d", k)
			}
			sizes[RangeGroup(k, m.P)] += int64(b[k+1] - b[k])
		}
		for g := range m.P {
			if m.GroupSizes[g] != sizes[g] {
				return fail("group %d has %d vertices, boundaries say %d", g, m.GroupSizes[g], sizes[g])
			}
		}
	}
	for g, size := range m.GroupSizes {
		if size > maxCols {
			return fail("group %d has %d vertices, more than uint32 local ids address", g, size)
		}
	}
	seen := make(map[[2]int]bool, len(m.Shards))
	files := make(map[string]bool, len(m.Shards))
	var edges uint64
	for _, s := range m.Shards {
		if s.I < 0 || s.I >= m.P || s.J < 0 || s.J >= m.P {
			return fail("shard %s: block (%d,%d) outside a %dx%d partition", s.File, s.I, s.J, m.P, m.P)
		}
		if seen[[2]int{s.I, s.J}] {
			return fail("block (%d,%d) listed twice", s.I, s.J)
		}
		seen[[2]int{s.I, s.J}] = true
		if err := checkName(s.File); err != nil {
			return fail("block (%d,%d): %v", s.I, s.J, err)
		}
		if files[s.File] || s.File == ManifestName || (m.IDMap != nil && s.File == m.IDMap.File) {
			return fail("file %s listed twice", s.File)
		}
		files[s.File] = true
		if s.Bytes < headerSize {
			return fail("shard %s: %d bytes is smaller than a shard header", s.File, s.Bytes)
		}
		if s.Rows != uint64(m.GroupSizes[s.I]) || s.Cols != uint64(m.GroupSizes[s.J]) {
			return fail("shard %s: %dx%d, but groups %d and %d have %d and %d vertices",
				s.File, s.Rows, s.Cols, s.I, s.J, m.GroupSizes[s.I], m.GroupSizes[s.J])
		}
		edges += s.Edges
	}
	if edges != uint64(m.Graph.Edges) {
		return fail("shards hold %d edges, the graph has %d", edges, m.Graph.Edges)
	}
	if r := m.IDMap; r != nil {
		if err := checkName(r.File); err != nil || r.File == ManifestName {
			return fail("id map file %q is not a valid name", r.File)
		}
		if r.Count != n {
			return fail("id map has %d ids for %d vertices", r.Count, n)
		}
	}
	return nil
}

// RangeFold returns the ranges per group of a range manifest (1 when the
// field is absent).
func (m *Manifest) RangeFold() int {
	if m.Fold == 0 {
		return 1
	}
	return m.Fold
}

// hashGroupSize is how many of the ids 0..n-1 are congruent to g mod p.
func hashGroupSize(n int64, p, g int) int64 {
	if int64(g) >= n {
		return 0
	}
	return (n - int64(g) + int64(p) - 1) / int64(p)
}
