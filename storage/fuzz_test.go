package storage

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

func fuzzSeeds(f *testing.F) {
	f.Helper()
	rng := rand.New(rand.NewPCG(9, 9))
	for _, c := range []*graph.CSR{
		{},
		{Offsets: []uint64{0, 1}, Cols: []uint32{0}, NCols: 1},
		{Offsets: []uint64{0, 0, 2, 3}, Cols: []uint32{1, 9, 4}, NCols: 10},
		randomCSR(rng, 30, 100, 8),
		randomCSR(rng, 20, 1<<31, 6),
	} {
		data, err := EncodeShard(testHeader(), c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(shardMagic))
	f.Add([]byte("1 2\n"))
}

// checkDecoded holds a successful decode to the codec's promise: a valid
// CSR that encodes back to an equal one.
func checkDecoded(t *testing.T, h ShardHeader, c *graph.CSR) {
	if err := c.Validate(); err != nil {
		t.Fatalf("decoded an invalid CSR: %v", err)
	}
	if uint64(c.NumRows()) != h.Rows || uint64(c.NCols) != h.Cols || uint64(c.NumEdges()) != h.Edges {
		t.Fatalf("CSR %dx%d/%d, header %+v", c.NumRows(), c.NCols, c.NumEdges(), h)
	}
	data, err := EncodeShard(h, c)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	_, c2, err := DecodeShard("again", data)
	if err != nil || !sameCSR(c, c2) {
		t.Fatalf("re-decode: %v", err)
	}
}

// FuzzDecodeShard: any bytes either decode to a valid CSR or give an
// error; never a panic, never an allocation out of proportion to the input.
func FuzzDecodeShard(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h, c, err := DecodeShard("fuzz.tgs", data)
		if err != nil {
			if _, ok := err.(*ShardError); !ok {
				t.Fatalf("error %v is %T, not *ShardError", err, err)
			}
			return
		}
		checkDecoded(t, h, c)
	})
}

// FuzzDecodeShardUnchecked skips the header and section checksums, so
// mutations reach the varint, zstd and CSR checks that checksums normally
// shield.
func FuzzDecodeShardUnchecked(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h, c, err := decodeShard("fuzz.tgs", data, false)
		if err != nil {
			return
		}
		checkDecoded(t, h, c)
	})
}

// refDecodeCols is decodeCols written the plain way, one binary.Uvarint
// and one range check a column, as the fast decoder's independent check.
func refDecodeCols(raw []byte, offs []uint64, ncols uint64) ([]uint32, bool) {
	cols := make([]uint32, offs[len(offs)-1])
	p := 0
	for r := 0; r+1 < len(offs); r++ {
		next := uint64(0)
		for k := offs[r]; k < offs[r+1]; k++ {
			v, m := binary.Uvarint(raw[p:])
			if m <= 0 || v >= ncols || next+v >= ncols {
				return nil, false
			}
			p += m
			cols[k] = uint32(next + v)
			next += v + 1
		}
	}
	return cols, p == len(raw)
}

// FuzzDecodeCols: the column decoder agrees with refDecodeCols on any
// bytes, degrees and column count, error for error.
func FuzzDecodeCols(f *testing.F) {
	f.Add([]byte{0, 0, 5, 0x80, 1, 0xff, 0xff, 0xff, 0x7f}, []byte{3, 2, 0, 1}, uint64(300))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0, 1}, []byte{1, 2}, uint64(1)<<32)
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []byte{10}, uint64(80))
	f.Fuzz(func(t *testing.T, raw, degs []byte, ncols uint64) {
		ncols %= maxCols + 1
		offs := make([]uint64, len(degs)+1)
		for r, d := range degs {
			offs[r+1] = offs[r] + uint64(d%32)
		}
		want, ok := refDecodeCols(raw, offs, ncols)
		got := make([]uint32, offs[len(offs)-1])
		err := decodeCols("fuzz", raw, offs, got, ncols)
		if (err == nil) != ok {
			t.Fatalf("decodeCols error %v, the reference decoder's ok %v", err, ok)
		}
		if ok && !slices.Equal(got, want) {
			t.Fatalf("decodeCols gave %v, the reference %v", got, want)
		}
		for parts := 2; parts <= 5; parts++ {
			par := make([]uint32, len(got))
			err := decodeColsParts("fuzz", raw, offs, par, ncols, parts)
			if (err == nil) != ok {
				t.Fatalf("%d parts: error %v, the reference decoder's ok %v", parts, err, ok)
			}
			if ok && !slices.Equal(par, want) {
				t.Fatalf("%d parts gave %v, the reference %v", parts, par, want)
			}
		}
	})
}
