package storage

import (
	"math/rand/v2"
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
