package storage

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/trigrid/trigrid/graph"
)

// writePartition stores the hash-scheme blocks of g the way the partition
// package does: shards first, manifest last.
func writePartition(t testing.TB, s Store, g *graph.CSR, p int, id uint64) *Manifest {
	t.Helper()
	ctx := context.Background()
	n := g.NumRows()
	m := &Manifest{
		Format: ManifestFormat, Scheme: SchemeHash, P: p, PartitionID: id,
		Graph:   GraphStats{Vertices: n, Edges: g.NumEdges(), Order: "degree", Source: "rmat"},
		Created: "2024-01-01T00:00:00Z",
	}
	for grp := range p {
		m.GroupSizes = append(m.GroupSizes, hashGroupSize(n, p, grp))
	}
	for i, row := range hashBlocks(g, p) {
		for j, b := range row {
			if b.NumEdges() == 0 {
				continue
			}
			data, err := EncodeShard(ShardHeader{Scheme: SchemeHash, P: uint32(p), I: uint32(i), J: uint32(j), PartitionID: id}, b)
			if err != nil {
				t.Fatal(err)
			}
			name := ShardName(i, j)
			if err := s.Put(ctx, name, data); err != nil {
				t.Fatal(err)
			}
			m.Shards = append(m.Shards, ShardInfo{I: i, J: j, File: name, Bytes: int64(len(data)),
				Rows: uint64(b.NumRows()), Cols: uint64(b.NCols), Edges: uint64(b.NumEdges()), XXHash64: xxhash.Sum64(data)})
		}
	}
	if err := WriteManifest(ctx, s, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// countBlocks counts triangles subtask by subtask: for every edge (u, v)
// of B[I][J], |B[I][K].Row(u) ∩ B[J][K].Row(v)|.
func countBlocks(b [][]*graph.CSR) uint64 {
	var t uint64
	p := len(b)
	for i := range p {
		for j := range p {
			for k := range p {
				ij, ik, jk := b[i][j], b[i][k], b[j][k]
				for u := range ij.NumRows() {
					for _, v := range ij.Row(u) {
						x, y := ik.Row(u), jk.Row(int64(v))
						for len(x) > 0 && len(y) > 0 {
							switch {
							case x[0] < y[0]:
								x = x[1:]
							case x[0] > y[0]:
								y = y[1:]
							default:
								t++
								x, y = x[1:], y[1:]
							}
						}
					}
				}
			}
		}
	}
	return t
}

func TestPartitionRoundTrip(t *testing.T) {
	ctx := context.Background()
	g := rmatForward(10, 8, 5)
	const p = 3
	s := NewMemStore()
	want := writePartition(t, s, g, p, 0xabcdef0123456789)
	m, err := ReadManifest(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("manifest read back differs:\n%+v\n%+v", m, want)
	}
	blocks := make([][]*graph.CSR, p)
	orig := hashBlocks(g, p)
	for i := range p {
		for j := range p {
			c, err := LoadShard(ctx, s, m, i, j)
			if err != nil {
				t.Fatal(err)
			}
			if !sameCSR(c, orig[i][j]) {
				t.Fatalf("block (%d,%d) differs", i, j)
			}
			blocks[i] = append(blocks[i], c)
		}
	}
	whole, parts := countForward(g), countBlocks(blocks)
	if whole == 0 || whole != parts {
		t.Fatalf("whole graph %d triangles, through shards %d", whole, parts)
	}
}

func TestManifestJSON(t *testing.T) {
	m := &Manifest{Format: ManifestFormat, Scheme: SchemeRange, P: 2, PartitionID: 0x00ff00ff00ff00ff,
		Graph: GraphStats{Vertices: 5, Edges: 1, Wedges: 1<<63 + 1}, Boundaries: []uint64{0, 2, 5}, GroupSizes: []int64{2, 3},
		IDMap:  &FileRef{File: "ids.tgm", Bytes: 70, Count: 5, XXHash64: 0xdeadbeef},
		Shards: []ShardInfo{{I: 0, J: 1, File: ShardName(0, 1), Bytes: 200, Rows: 2, Cols: 3, Edges: 1, XXHash64: 1<<64 - 1}}}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"scheme":"range"`, `"partition_id":"00ff00ff00ff00ff"`, `"xxhash64":"ffffffffffffffff"`,
		`"xxhash64":"00000000deadbeef"`, `"wedges":9223372036854775809`} {
		if !strings.Contains(string(data), s) {
			t.Errorf("JSON lacks %s: %s", s, data)
		}
	}
	var back Manifest
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, m) {
		t.Fatalf("round trip: %+v != %+v", back, *m)
	}
	if err := back.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"scheme":"grid"}`, `{"partition_id":"xyz"}`, `{"partition_id":"11112222333344445"}`, `{"shards":[{"xxhash64":12}]}`} {
		if err := json.Unmarshal([]byte(bad), new(Manifest)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestRangeGroup pins the boustrophedon order the manifest format
// specifies.
func TestRangeGroup(t *testing.T) {
	var got []int
	for r := range 12 {
		got = append(got, RangeGroup(r, 4))
	}
	if want := []int{0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3}; !reflect.DeepEqual(got, want) {
		t.Fatalf("RangeGroup(0..11, 4) = %v, want %v", got, want)
	}
}

// TestManifestFoldJSON checks that a folded manifest keeps its fold through
// JSON and that a manifest without the field (written before folding)
// reads as one range per group.
func TestManifestFoldJSON(t *testing.T) {
	m := validManifest()
	m.Scheme, m.Boundaries, m.Fold = SchemeRange, []uint64{0, 2, 3, 4, 5}, 2
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"fold":2`) {
		t.Fatalf("JSON lacks the fold: %s", data)
	}
	var back Manifest
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Fold != 2 || back.RangeFold() != 2 || back.Validate() != nil {
		t.Fatalf("round trip: fold %d, validate %v", back.Fold, back.Validate())
	}
	old := `{"format":2,"scheme":"range","p":2,"partition_id":"0000000000000007","graph":{"vertices":5,"edges":3},
		"boundaries":[0,3,5],"group_sizes":[3,2],"shards":[
		{"i":0,"j":1,"file":"shard-0000-0001.tgs","bytes":300,"rows":3,"cols":2,"edges":2,"xxhash64":"0000000000000000"},
		{"i":1,"j":1,"file":"shard-0001-0001.tgs","bytes":300,"rows":2,"cols":2,"edges":1,"xxhash64":"0000000000000000"}]}`
	var om Manifest
	if err := json.Unmarshal([]byte(old), &om); err != nil {
		t.Fatal(err)
	}
	if err := om.Validate(); err != nil || om.Fold != 0 || om.RangeFold() != 1 {
		t.Fatalf("manifest without fold: fold %d (%d), validate %v", om.Fold, om.RangeFold(), err)
	}
}

func validManifest() *Manifest {
	return &Manifest{Format: ManifestFormat, Scheme: SchemeHash, P: 2, PartitionID: 7,
		Graph:      GraphStats{Vertices: 5, Edges: 3},
		GroupSizes: []int64{3, 2},
		Shards: []ShardInfo{
			{I: 0, J: 1, File: ShardName(0, 1), Bytes: 300, Rows: 3, Cols: 2, Edges: 2},
			{I: 1, J: 1, File: ShardName(1, 1), Bytes: 300, Rows: 2, Cols: 2, Edges: 1},
		}}
}

func TestManifestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(m *Manifest)
		want string
	}{
		{"valid", func(m *Manifest) {}, ""},
		{"range valid", func(m *Manifest) { m.Scheme = SchemeRange; m.Boundaries = []uint64{0, 3, 5} }, ""},
		{"format", func(m *Manifest) { m.Format = 3 }, "format 3 is not supported"},
		{"format 1", func(m *Manifest) { m.Format = 1 }, "re-partition"},
		{"forward degree", func(m *Manifest) { d := int64(-1); m.Graph.MaxOutDegree = &d }, "negative forward max degree -1"},
		{"scheme", func(m *Manifest) { m.Scheme = 0 }, "invalid scheme"},
		{"P", func(m *Manifest) { m.P = 0 }, "P = 0"},
		{"partition id", func(m *Manifest) { m.PartitionID = 0 }, "partition id is 0"},
		{"group count", func(m *Manifest) { m.GroupSizes = m.GroupSizes[:1] }, "1 group sizes"},
		{"hash sizes", func(m *Manifest) { m.GroupSizes = []int64{2, 3} }, "group 0 has 2 vertices, want 3"},
		{"hash boundaries", func(m *Manifest) { m.Boundaries = []uint64{0, 3, 5} }, "hash scheme with 3 boundaries"},
		{"range count", func(m *Manifest) { m.Scheme = SchemeRange; m.Boundaries = []uint64{0, 5} }, "2 boundaries"},
		{"range end", func(m *Manifest) { m.Scheme = SchemeRange; m.Boundaries = []uint64{0, 3, 6} }, "want 0 to 5"},
		{"range sizes", func(m *Manifest) { m.Scheme = SchemeRange; m.Boundaries = []uint64{0, 2, 5} }, "boundaries say 2"},
		{"range fold 1 explicit", func(m *Manifest) { m.Scheme = SchemeRange; m.Boundaries = []uint64{0, 3, 5}; m.Fold = 1 }, ""},
		// Fold 2, P = 2: ranges 0..3 go to groups 0, 1, 1, 0.
		{"range folded", func(m *Manifest) { m.Scheme = SchemeRange; m.Boundaries = []uint64{0, 2, 3, 4, 5}; m.Fold = 2 }, ""},
		{"range folded sizes", func(m *Manifest) {
			m.Scheme = SchemeRange
			m.Boundaries = []uint64{0, 1, 3, 4, 5}
			m.Fold = 2
		}, "group 0 has 3 vertices, boundaries say 2"},
		{"range folded count", func(m *Manifest) { m.Scheme = SchemeRange; m.Boundaries = []uint64{0, 3, 5}; m.Fold = 2 }, "want fold*P+1 = 5"},
		{"range fold negative", func(m *Manifest) { m.Scheme = SchemeRange; m.Boundaries = []uint64{0, 3, 5}; m.Fold = -1 }, "fold -1 out of range"},
		{"range fold too big", func(m *Manifest) { m.Scheme = SchemeRange; m.Fold = MaxFold + 1 }, "out of range"},
		{"hash fold", func(m *Manifest) { m.Fold = 2 }, "hash scheme with fold 2"},
		{"range decrease", func(m *Manifest) {
			m.Scheme = SchemeRange
			m.Boundaries = []uint64{0, 6, 5}
		}, "decrease"},
		{"shard outside", func(m *Manifest) { m.Shards[0].J = 2 }, "outside"},
		{"duplicate block", func(m *Manifest) { m.Shards[1].I, m.Shards[1].J = 0, 1 }, "listed twice"},
		{"duplicate file", func(m *Manifest) { m.Shards[1].File = m.Shards[0].File }, "listed twice"},
		{"bad file name", func(m *Manifest) { m.Shards[0].File = "../x" }, "path separator"},
		{"shard dims", func(m *Manifest) { m.Shards[0].Rows = 2 }, "groups 0 and 1 have 3 and 2"},
		{"tiny shard", func(m *Manifest) { m.Shards[0].Bytes = 10 }, "smaller than a shard header"},
		{"edge sum", func(m *Manifest) { m.Graph.Edges = 4 }, "shards hold 3 edges, the graph has 4"},
		{"id map count", func(m *Manifest) { m.IDMap = &FileRef{File: "ids", Count: 4} }, "4 ids for 5 vertices"},
		{"id map name", func(m *Manifest) { m.IDMap = &FileRef{File: ManifestName, Count: 5} }, "not a valid name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := validManifest()
			tc.mod(m)
			err := m.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// withEntry returns a copy of m whose entry for in's block is in.
func withEntry(m *Manifest, in ShardInfo) *Manifest {
	mm := *m
	mm.Shards = slices.Clone(m.Shards)
	for k, s := range mm.Shards {
		if s.I == in.I && s.J == in.J {
			mm.Shards[k] = in
		}
	}
	return &mm
}

func TestLoadShardErrors(t *testing.T) {
	ctx := context.Background()
	g := rmatForward(9, 8, 6)
	good := NewMemStore()
	m := writePartition(t, good, g, 2, 1111)
	other := NewMemStore()
	m2 := writePartition(t, other, g, 2, 2222) // same graph, another run
	name := ShardName(0, 1)
	get := func(s Store, n string) []byte {
		b, err := s.Get(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// setup returns a store and manifest with one thing wrong.
	tests := []struct {
		name  string
		setup func() (Store, *Manifest)
		class error
		want  string
	}{
		{"missing shard", func() (Store, *Manifest) {
			s := NewMemStore()
			for _, in := range m.Shards {
				if in.File != name {
					s.Put(ctx, in.File, get(good, in.File))
				}
			}
			return s, m
		}, os.ErrNotExist, "listed in the manifest but cannot be read"},
		{"mixed partition ids, hashes patched", func() (Store, *Manifest) {
			s := NewMemStore()
			s.Put(ctx, name, get(other, name))
			in, _ := m2.Shard(0, 1)
			return s, withEntry(m, in)
		}, ErrMismatch, "partition 00000000000008ae"},
		{"mixed partition ids", func() (Store, *Manifest) {
			s := NewMemStore()
			s.Put(ctx, name, get(other, name))
			return s, m
		}, ErrChecksum, "file checksum"},
		{"block swapped", func() (Store, *Manifest) {
			s := NewMemStore()
			data := get(good, ShardName(1, 1))
			s.Put(ctx, name, data)
			in, _ := m.Shard(0, 1)
			in.Bytes, in.XXHash64 = int64(len(data)), xxhash.Sum64(data)
			return s, withEntry(m, in)
		}, ErrMismatch, "block (1,1)"},
		{"size", func() (Store, *Manifest) {
			s := NewMemStore()
			s.Put(ctx, name, append(get(good, name), 0))
			return s, m
		}, ErrMismatch, "the manifest says"},
		{"corrupt byte", func() (Store, *Manifest) {
			s := NewMemStore()
			b := get(good, name)
			b[len(b)/2] ^= 4
			s.Put(ctx, name, b)
			return s, m
		}, ErrChecksum, "file checksum"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, mm := tc.setup()
			_, err := LoadShard(ctx, s, mm, 0, 1)
			checkShardError(t, err, name)
			if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want class %v and text %q", err, tc.class, tc.want)
			}
		})
	}
	if _, err := LoadShard(ctx, good, m, 2, 0); !errors.Is(err, ErrMismatch) {
		t.Fatalf("block outside the partition: %v", err)
	}
}

func TestLoadShardEmptyBlock(t *testing.T) {
	m := validManifest()
	c, err := LoadShard(context.Background(), NewMemStore(), m, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.NumRows() != 2 || c.NCols != 3 || c.NumEdges() != 0 || c.Validate() != nil {
		t.Fatalf("empty block is %dx%d with %d edges", c.NumRows(), c.NCols, c.NumEdges())
	}
}

func TestReadManifestErrors(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	if _, err := ReadManifest(ctx, s); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing manifest: %v", err)
	}
	s.Put(ctx, ManifestName, []byte("{"))
	if _, err := ReadManifest(ctx, s); err == nil || !strings.Contains(err.Error(), ManifestName) {
		t.Fatalf("bad JSON: %v", err)
	}
	bad := validManifest()
	bad.P = 3
	if err := bad.Seal(); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(bad)
	s.Put(ctx, ManifestName, data)
	if _, err := ReadManifest(ctx, s); err == nil || !strings.Contains(err.Error(), "group sizes") {
		t.Fatalf("invalid manifest: %v", err)
	}
	if err := WriteManifest(ctx, s, bad); err == nil {
		t.Fatal("WriteManifest stored an invalid manifest")
	}
}
