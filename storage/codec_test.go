package storage

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/trigrid/trigrid/graph"
)

// randomCSR builds a valid CSR with the given shape; degrees are drawn up
// to maxDeg (capped by ncols).
func randomCSR(rng *rand.Rand, rows int, ncols int64, maxDeg int) *graph.CSR {
	c := &graph.CSR{Offsets: make([]uint64, rows+1), NCols: ncols}
	for r := range rows {
		d := 0
		if maxDeg > 0 && ncols > 0 {
			d = rng.IntN(min(maxDeg, int(min(ncols, 1<<20))) + 1)
		}
		set := make(map[uint32]struct{}, d)
		for len(set) < d {
			set[uint32(rng.Int64N(ncols))] = struct{}{}
		}
		row := make([]uint32, 0, d)
		for v := range set {
			row = append(row, v)
		}
		slices.Sort(row)
		c.Cols = append(c.Cols, row...)
		c.Offsets[r+1] = uint64(len(c.Cols))
	}
	return c
}

func sameCSR(a, b *graph.CSR) bool {
	if a.NumRows() != b.NumRows() || a.NCols != b.NCols || a.NumEdges() != b.NumEdges() {
		return false
	}
	for r := range a.NumRows() {
		if !slices.Equal(a.Row(r), b.Row(r)) {
			return false
		}
	}
	return true
}

func testHeader() ShardHeader {
	return ShardHeader{Scheme: SchemeHash, P: 4, I: 1, J: 2, PartitionID: 0xfeedface12345678}
}

func TestShardRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hub := &graph.CSR{Offsets: []uint64{0, 0, 200000, 200001}, NCols: 1 << 20}
	for v := range uint32(200000) {
		hub.Cols = append(hub.Cols, v*5)
	}
	hub.Cols = append(hub.Cols, 1<<20-1)
	wide := &graph.CSR{Offsets: []uint64{0, 3, 3, 5}, Cols: []uint32{0, 1 << 31, 1<<32 - 1, 7, 1<<32 - 2}, NCols: 1 << 32}
	tests := []struct {
		name string
		csr  *graph.CSR
	}{
		{"no rows", &graph.CSR{}},
		{"no rows with offsets", &graph.CSR{Offsets: []uint64{0}, NCols: 5}},
		{"empty rows", &graph.CSR{Offsets: make([]uint64, 1000), NCols: 1000}},
		{"one edge", &graph.CSR{Offsets: []uint64{0, 1}, Cols: []uint32{0}, NCols: 1}},
		{"huge hub", hub},
		{"wide column space", wide},
		{"random small", randomCSR(rng, 50, 60, 10)},
		{"random sparse", randomCSR(rng, 3000, 1<<30, 4)},
		{"random dense", randomCSR(rng, 300, 400, 400)},
		{"rmat block", hashBlocks(rmatForward(10, 8, 3), 2)[0][1]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := testHeader()
			data, err := EncodeShard(h, tc.csr)
			if err != nil {
				t.Fatal(err)
			}
			got, c, err := DecodeShard("x.tgs", data)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("decoded CSR invalid: %v", err)
			}
			if !sameCSR(c, tc.csr) {
				t.Fatal("decoded CSR differs")
			}
			want := h
			want.Version = ShardVersion
			want.Rows, want.Cols, want.Edges = uint64(tc.csr.NumRows()), uint64(tc.csr.NCols), uint64(tc.csr.NumEdges())
			if got != want {
				t.Fatalf("header %+v, want %+v", got, want)
			}
		})
	}
}

func TestEncodeShardRefusesInvalid(t *testing.T) {
	tests := []struct {
		name string
		h    ShardHeader
		csr  *graph.CSR
		want string
	}{
		{"nil", testHeader(), nil, "nil CSR"},
		{"bad scheme", ShardHeader{P: 1}, &graph.CSR{}, "invalid scheme"},
		{"P zero", ShardHeader{Scheme: SchemeRange}, &graph.CSR{}, "P is 0"},
		{"block outside", ShardHeader{Scheme: SchemeRange, P: 2, I: 2}, &graph.CSR{}, "outside"},
		{"version", ShardHeader{Version: 9, Scheme: SchemeHash, P: 1}, &graph.CSR{}, "version 9"},
		{"unsorted", testHeader(), &graph.CSR{Offsets: []uint64{0, 2}, Cols: []uint32{3, 1}, NCols: 5}, "strictly increasing"},
		{"duplicate", testHeader(), &graph.CSR{Offsets: []uint64{0, 2}, Cols: []uint32{1, 1}, NCols: 5}, "strictly increasing"},
		{"out of range", testHeader(), &graph.CSR{Offsets: []uint64{0, 1}, Cols: []uint32{5}, NCols: 5}, "out of range"},
		{"offsets decrease", testHeader(), &graph.CSR{Offsets: []uint64{0, 2, 1, 2}, Cols: []uint32{1, 2}, NCols: 5}, "decrease"},
		{"last offset", testHeader(), &graph.CSR{Offsets: []uint64{0, 1}, Cols: []uint32{1, 2}, NCols: 5}, "last offset"},
		{"too wide", testHeader(), &graph.CSR{NCols: 1<<32 + 1}, "do not fit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EncodeShard(tc.h, tc.csr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func smallShard(t testing.TB) (*graph.CSR, []byte) {
	t.Helper()
	c := randomCSR(rand.New(rand.NewPCG(7, 7)), 40, 300, 12)
	data, err := EncodeShard(testHeader(), c)
	if err != nil {
		t.Fatal(err)
	}
	return c, data
}

func checkShardError(t *testing.T, err error, name string) *ShardError {
	t.Helper()
	var se *ShardError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *ShardError", err, err)
	}
	if se.Shard != name || !strings.Contains(err.Error(), name) {
		t.Fatalf("error %q does not name shard %q", err, name)
	}
	return se
}

// TestDecodeShardEveryByteFlipped flips each byte of a small shard, in
// both a compressed and an uncompressed variant: every flip must be an
// error, never a panic and never a different CSR.
func TestDecodeShardEveryByteFlipped(t *testing.T) {
	_, data := smallShard(t)
	tiny, err := EncodeShard(testHeader(), &graph.CSR{Offsets: []uint64{0, 2, 3}, Cols: []uint32{1, 4, 0}, NCols: 6})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"zstd", data}, {"raw sections", tiny}} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.data {
				for _, mask := range []byte{0x01, 0x80, 0xff} {
					bad := slices.Clone(tc.data)
					bad[i] ^= mask
					_, _, err := DecodeShard("s.tgs", bad)
					if err == nil {
						t.Fatalf("byte %d ^ %#x: decoded without error", i, mask)
					}
					checkShardError(t, err, "s.tgs")
				}
			}
		})
	}
}

func TestDecodeShardTruncated(t *testing.T) {
	_, data := smallShard(t)
	for n := range len(data) {
		_, _, err := DecodeShard("t.tgs", data[:n])
		if err == nil {
			t.Fatalf("length %d of %d: decoded without error", n, len(data))
		}
		se := checkShardError(t, err, "t.tgs")
		if n >= offVersion+2 && !errors.Is(err, ErrTruncated) {
			t.Fatalf("length %d: %v, want a truncation error", n, err)
		}
		if n >= headerSize && !strings.Contains(se.Reason, "section needs") {
			t.Fatalf("length %d: %q does not say how many bytes the section needs", n, se.Reason)
		}
	}
	_, _, err := DecodeShard("t.tgs", append(slices.Clone(data), 0))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "trailing") {
		t.Fatalf("trailing byte: %v", err)
	}
}

// rehash recomputes the header checksum, so tests can present a header
// whose fields are wrong but whose checksum is right.
func rehash(b []byte) []byte {
	binary.LittleEndian.PutUint64(b[offHeaderSum:], xxhash.Sum64(b[:offHeaderSum]))
	return b
}

func TestDecodeShardErrors(t *testing.T) {
	_, data := smallShard(t)
	le := binary.LittleEndian
	mod := func(f func(b []byte)) []byte {
		b := slices.Clone(data)
		f(b)
		return b
	}
	colsStart := headerSize + int(le.Uint64(data[offSections+8:]))
	tests := []struct {
		name  string
		data  []byte
		class error
		want  string
	}{
		{"empty", nil, ErrTruncated, "header: truncated: 0 of 128 bytes"},
		{"text", []byte("1 2\n2 3\n"), ErrNotShard, "not a trigrid shard"},
		{"version", mod(func(b []byte) { le.PutUint16(b[offVersion:], 7) }), ErrVersion,
			"shard format version 7 is not supported (this build reads 1)"},
		{"header checksum", mod(func(b []byte) { b[offRows]++ }), ErrChecksum, "header: checksum mismatch"},
		{"degrees checksum", mod(func(b []byte) { b[headerSize] ^= 1 }), ErrChecksum, "degrees: checksum mismatch"},
		{"cols checksum", mod(func(b []byte) { b[colsStart+3] ^= 1 }), ErrChecksum, "cols: checksum mismatch"},
		{"scheme", mod(func(b []byte) { b[offScheme] = 9; rehash(b) }), ErrCorrupt, "invalid scheme(9)"},
		{"block outside", mod(func(b []byte) { le.PutUint32(b[offJ:], 4); rehash(b) }), ErrCorrupt, "outside"},
		{"rows", mod(func(b []byte) { le.PutUint64(b[offRows:], 39); rehash(b) }), ErrCorrupt, "degrees:"},
		{"edges", mod(func(b []byte) { le.PutUint64(b[offEdges:], le.Uint64(b[offEdges:])+1); rehash(b) }), ErrCorrupt, "edges"},
		{"huge rows", mod(func(b []byte) { le.PutUint64(b[offRows:], 1<<60); rehash(b) }), ErrCorrupt, "cannot hold"},
		{"cols too few", mod(func(b []byte) { le.PutUint64(b[offCols:], 10); rehash(b) }), ErrCorrupt, "out of range"},
		{"codec", mod(func(b []byte) { b[offSections] = 5; rehash(b) }), ErrCorrupt, "unknown codec 5"},
		{"raw length", mod(func(b []byte) { b[offSections] = codecZstd; le.PutUint64(b[offSections+16:], 1<<62); rehash(b) }), ErrCorrupt, "impossible"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := DecodeShard("e.tgs", tc.data)
			checkShardError(t, err, "e.tgs")
			if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want class %v and text %q", err, tc.class, tc.want)
			}
		})
	}
}

// TestShardRatio holds the codec to its size target on an rmat graph: at
// most 45% of the u64-offset, u32-column CSR, per block and in total.
func TestShardRatio(t *testing.T) {
	t.Parallel()
	g := rmatForward(14, 16, 11)
	for _, p := range []int{1, 4} {
		var raw, enc int64
		for i, row := range hashBlocks(g, p) {
			for j, b := range row {
				data, err := EncodeShard(ShardHeader{Scheme: SchemeHash, P: uint32(p), I: uint32(i), J: uint32(j)}, b)
				if err != nil {
					t.Fatal(err)
				}
				raw += rawCSRBytes(b)
				enc += int64(len(data))
			}
		}
		ratio := float64(enc) / float64(raw)
		t.Logf("P=%d: %d edges, %d raw bytes, %d shard bytes, ratio %.3f", p, g.NumEdges(), raw, enc, ratio)
		if ratio > 0.45 {
			t.Errorf("P=%d: shards are %.1f%% of the raw CSR, target 45%%", p, 100*ratio)
		}
	}
}
