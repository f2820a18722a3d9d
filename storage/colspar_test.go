package storage

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// An rmat block decodes in 2 to 16 parts to its own columns, the parts
// really split it, and a damaged copy gives the serial decoder's error,
// word for word.
func TestDecodeColsInParts(t *testing.T) {
	blk := benchBlock()
	raw, err := encodeCols(blk)
	if err != nil {
		t.Fatal(err)
	}
	ncols := uint64(blk.NCols)
	for parts := 2; parts <= 16; parts++ {
		rows, starts, ok := splitCols(raw, blk.Offsets, parts)
		if !ok || len(rows) != parts+1 || len(starts) != parts+1 {
			t.Fatalf("%d parts: split into %d runs (ok %v)", parts, len(rows)-1, ok)
		}
		got := make([]uint32, len(blk.Cols))
		if err := decodeColsParts("b", raw, blk.Offsets, got, ncols, parts); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, blk.Cols) {
			t.Fatalf("%d parts: the columns differ from the block's", parts)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		bad := slices.Clone(raw)
		for range 1 + rng.IntN(3) {
			bad[rng.IntN(len(bad))] ^= byte(1 << rng.IntN(8))
		}
		serial := make([]uint32, len(blk.Cols))
		want := decodeCols("b", bad, blk.Offsets, serial, ncols)
		got := make([]uint32, len(blk.Cols))
		err := decodeColsParts("b", bad, blk.Offsets, got, ncols, 2+rng.IntN(8))
		if (err == nil) != (want == nil) || err != nil && err.Error() != want.Error() {
			t.Fatalf("damaged: %v, the serial decoder %v", err, want)
		}
		if err == nil && !slices.Equal(got, serial) {
			t.Fatal("damaged but valid: the parts' columns differ from the serial decoder's")
		}
	}
}

func BenchmarkDecodeColsParts(b *testing.B) {
	blk := benchBlock()
	raw, err := encodeCols(blk)
	if err != nil {
		b.Fatal(err)
	}
	cols := make([]uint32, len(blk.Cols))
	for _, parts := range []int{1, 2} {
		b.Run(map[int]string{1: "serial", 2: "2parts"}[parts], func(b *testing.B) {
			b.SetBytes(int64(4 * len(cols)))
			for b.Loop() {
				if err := decodeColsParts("b", raw, blk.Offsets, cols, uint64(blk.NCols), parts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
