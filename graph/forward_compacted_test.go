package graph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
)

// ForwardCompacted must build, array for array, what CleanCompacted then
// Orient(OrderDegree) build from the same pairs, with the same statistics:
// on every edge shape (duplicates in both directions, self-loops, ids only
// in self-loops, sparse and huge ids), with any number of workers, forced
// small buckets, 64-bit entries in either build or both, many column
// ranges, and pairs whose memory cannot hold the second build's entries;
// and the forward graph must be the naive one.
func TestForwardCompactedMatchesCleanThenOrient(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	check := func(t *testing.T, edges []Edge) {
		t.Helper()
		for _, w := range []int{1, 3} {
			c, err := Compact(edges, CleanOptions{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			u, wantCS, err := CleanCompacted(c, CleanOptions{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			wantFwd, wantRank, wantOS, err := Orient(u, OrderDegree, w)
			if err != nil {
				t.Fatal(err)
			}
			for i, paths := range []cleanPaths{{}, {perBucket: 7}, {perBucket: 5, wide: true}, {perBucket: 9, wide2: true},
				{wide: true}, {perBucket: 6, wide: true, wide2: true}, {perBucket: 11, colRangeBits: 1}} {
				cc := *c
				// Every other variant gets pairs at an odd word, whose
				// memory 64-bit entries cannot reuse.
				odd := i % 2
				cc.Pairs = append(make([]uint32, odd, len(c.Pairs)+odd), c.Pairs...)[odd:]
				fwd, rank, cs, os, err := forwardCompacted(&cc, CleanOptions{Workers: w}, paths)
				if err != nil {
					t.Fatal(err)
				}
				if cc.Pairs != nil {
					t.Fatal("the pairs were not released")
				}
				if cs != wantCS || os != wantOS || fwd.NCols != wantFwd.NCols || !slices.Equal(fwd.Offsets, wantFwd.Offsets) ||
					!slices.Equal(fwd.Cols, wantFwd.Cols) || !slices.Equal(rank, wantRank) {
					t.Fatalf("workers %d paths %+v: got %+v %+v (%d edges), want %+v %+v (%d edges)",
						w, paths, cs, os, fwd.NumEdges(), wantCS, wantOS, wantFwd.NumEdges())
				}
			}
		}
		// The naive forward graph, independent of both.
		g := naiveClean(edges)
		fwd, rank, _, _, err := ForwardCompacted(mustCompact(t, edges), CleanOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		want := naiveForward(g, naiveDegreeRank(g))
		if !slices.Equal(rank, naiveDegreeRank(g)) || int(fwd.NumRows()) != len(want) {
			t.Fatalf("ranks or rows differ from the naive ones")
		}
		for r, row := range want {
			if !slices.Equal(fwd.Row(int64(r)), row) {
				t.Fatalf("row %d: %v, naive %v", r, fwd.Row(int64(r)), row)
			}
		}
	}
	trials := 2
	if testlong.Enabled() {
		trials = 5
	}
	for _, sh := range edgeShapes() {
		t.Run(sh.name, func(t *testing.T) {
			for range trials {
				check(t, sh.make(rng))
			}
		})
	}
	t.Run("spread-large", func(t *testing.T) {
		check(t, spreadEdges(rng, 3000, 60_000, 1))
		check(t, spreadEdges(rng, 3000, 60_000, 1<<40))
		if testlong.Enabled() {
			check(t, spreadEdges(rng, 300_000, 3_000_000, 1))
		}
	})
}

func mustCompact(t *testing.T, edges []Edge) *Compacted {
	t.Helper()
	c, err := Compact(edges, CleanOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
