package storage

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// Shards of different sizes decoded at once, over and over, through the
// section buffers kept for reuse, each come back exactly as encoded: a
// buffer is never handed to two decodes, and what one decode left in it
// never reaches another's block.
func TestDecodeReusesScratchSafely(t *testing.T) {
	g := rmatForward(12, 8, 5)
	var blocks []*encodedBlock
	for _, p := range []int{1, 2, 3} {
		for i, row := range hashBlocks(g, p) {
			for j, b := range row {
				h := testHeader()
				h.P, h.I, h.J = uint32(p), uint32(i), uint32(j)
				data, err := EncodeShard(h, b)
				if err != nil {
					t.Fatal(err)
				}
				blocks = append(blocks, &encodedBlock{name: fmt.Sprintf("p%d-%d-%d", p, i, j), b: b, data: data})
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for round := range 6 {
				for x := range blocks {
					blk := blocks[(x*(w+1)+round)%len(blocks)]
					_, c, err := DecodeShard(blk.name, blk.data)
					if err == nil && !sameCSR(c, blk.b) {
						err = fmt.Errorf("%s decoded to another block", blk.name)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

type encodedBlock struct {
	name string
	b    *graph.CSR
	data []byte
}

// Blocks whose gaps take every varint length, one to five bytes, and sit
// at every position relative to the end of the section (where the
// four-byte reads give way to binary.Uvarint), decode to themselves.
func TestDecodeColsEveryVarintLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := range 200 {
		rows := 1 + rng.IntN(6)
		c := &graph.CSR{Offsets: make([]uint64, rows+1), NCols: 1 << 32}
		for r := range rows {
			col := uint64(0)
			for range rng.IntN(5) {
				// A gap of 1 to 5 varint bytes.
				col += uint64(1) << (rng.IntN(5) * 7) * uint64(1+rng.IntN(100))
				if col >= 1<<32 {
					break
				}
				c.Cols = append(c.Cols, uint32(col))
				col++
			}
			c.Offsets[r+1] = uint64(len(c.Cols))
		}
		data, err := EncodeShard(testHeader(), c)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := DecodeShard("t.tgs", data)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if !sameCSR(got, c) {
			t.Fatalf("trial %d: %v decoded to %v", trial, c, got)
		}
	}
}
