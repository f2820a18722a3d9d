package gpu

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// messyPairs: random pairs over n ids with duplicates in both directions,
// self-loops and a hub, every id keeping a non-loop edge.
func messyPairs(n, m int, seed uint64) []uint32 {
	r := rand.New(rand.NewPCG(seed, 3))
	var p []uint32
	for v := 1; v < n; v++ {
		p = append(p, uint32(v-1), uint32(v))
		if v%3 == 0 {
			p = append(p, 0, uint32(v)) // the hub
		}
	}
	for range m {
		u, v := uint32(r.IntN(n)), uint32(r.IntN(n))
		p = append(p, u, v)
		switch r.IntN(8) {
		case 0:
			p = append(p, v, u)
		case 1:
			p = append(p, u, u)
		case 2:
			p = append(p, u, v)
		}
	}
	return p
}

// TestOrientInPieces: pairs too many for tg_preprocess under a cap are
// oriented in pieces into the forward graph, ranks and statistics that
// the library's whole preprocessing and the CPU path make, at caps from a
// few pieces' worth to a work area just above the least, and the work
// area is freed afterwards. The ranks come from the device where a piece
// holds a key a vertex and from the host elsewhere (n=2000 at the least
// caps).
func TestOrientInPieces(t *testing.T) { forLibs(t, orientInPiecesUnderCaps) }

func orientInPiecesUnderCaps(t *testing.T, path string) {
	ctx := context.Background()
	for _, tc := range []struct{ n, m int }{{300, 4000}, {2000, 40000}, {5, 40}} {
		pairs := messyPairs(tc.n, tc.m, uint64(tc.n))
		n := uint64(tc.n)
		np := uint64(len(pairs) / 2)
		whole, err := Open(Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		want, err := whole.Preprocess(slices.Clone(pairs), n)
		if err != nil {
			t.Fatal(err)
		}
		cpu := cpuForward(t, pairs)
		if !equalCSR(want.Forward, cpu) {
			t.Fatalf("n=%d: the library's whole preprocessing differs from the CPU's", tc.n)
		}
		// From a fresh context's own bytes and the least work area (the
		// CUDA library's sort scratch comes on top: found by steps of 4 KiB).
		base := counterBytes(t, path)
		least := base + int64(devmem.AllocBytes(int64(n)*4)) + 2*int64(devmem.AllocBytes(8*1024)) + 512
		for extra := int64(0); ; extra += 4 << 10 {
			lib, err := Open(Options{Path: path, MemLimit: uint64(least + extra)})
			if err != nil {
				t.Fatal(err)
			}
			_, _, _, err = autoCounter(t, lib).OrientOnDevice(ctx, slices.Clone(pairs), n)
			if err == nil {
				least += extra
				break
			}
			if !errors.Is(err, ErrOutOfMemory) || extra > 1<<20 {
				t.Fatalf("n=%d cap %d: %v", tc.n, least+extra, err)
			}
		}
		prepared := 0
		for _, extra := range []int64{0, 8 * 1024, 16 * 5000, int64(np) * 4} {
			limit := least + extra
			if limit >= PreprocessMinBytes(np, n)+base {
				continue
			}
			lib, err := Open(Options{Path: path, MemLimit: uint64(limit)})
			if err != nil {
				t.Fatal(err)
			}
			c := autoCounter(t, lib)
			before, _ := c.MemUsage()
			fwd, rank, st, err := c.OrientOnDevice(ctx, slices.Clone(pairs), n)
			if err != nil {
				t.Fatalf("n=%d cap %d: %v", tc.n, limit, err)
			}
			if !equalCSR(fwd, want.Forward) || !slices.Equal(rank, want.Rank) {
				t.Fatalf("n=%d cap %d: forward graph or ranks differ from the whole preprocessing's", tc.n, limit)
			}
			ws := want.Stats
			ws.IsolatedIDs = 0
			if got := st; got != ws {
				t.Fatalf("n=%d cap %d: stats %+v, want %+v", tc.n, limit, got, ws)
			}
			if after, _ := c.MemUsage(); after != before {
				t.Fatalf("n=%d cap %d: %d device bytes after, %d before", tc.n, limit, after, before)
			}
			if np*8 < devmem.MinRegisterBytes {
				continue // the pairs were not pinned
			}
			// The columns stay pinned in the pairs' memory, and a count in
			// ranges reads them from there.
			if !stillRegistered(t, lib, fwd) {
				t.Fatalf("n=%d cap %d: the forward graph's columns are not kept pinned", tc.n, limit)
			}
			res, rst, err := c.CountInRanges(ctx, fwd, kernels.RangeOptions{})
			if err != nil {
				t.Fatalf("n=%d cap %d: count in ranges: %v", tc.n, limit, err)
			}
			if wantTri := mustReference(t, kernels.Whole(want.Forward)); res.Triangles != wantTri || !rst.PinnedCols {
				t.Fatalf("n=%d cap %d: %d triangles in ranges (columns pinned before: %v), the reference counts %d",
					tc.n, limit, res.Triangles, rst.PinnedCols, wantTri)
			}
			// The sides lie in the pieces' spare merge array where it holds
			// them (two sides of 64 KiB of entries and 64 KiB of rows at
			// least).
			if fits := np*8 >= 4*padBytes; rst.PinnedSides != fits {
				t.Fatalf("n=%d cap %d: sides in the spare array: %v, want %v (%d bytes)", tc.n, limit, rst.PinnedSides, fits, np*8)
			}
			if orientPrepared(t, path, uint64(limit), pairs, n, want) {
				prepared++
			}
		}
		if np*8 >= devmem.MinRegisterBytes && prepared == 0 {
			t.Fatalf("n=%d: no cap readied the host memory ahead", tc.n)
		}
	}
}

// orientPrepared orients pairs in pieces on a fresh counter of the
// library at path capped at limit, as a caller that compacts them in
// place does: PrepareOrient on a buffer of one more pair, still being
// written, then OrientOnDevice of its front. The forward graph and ranks
// must be want's, the readied pin (of the whole buffer) kept for the
// columns and the device memory back where it was. It reports false,
// having checked nothing, when the limit leaves room for tg_preprocess of
// the buffer (PrepareOrient readies nothing then).
func orientPrepared(t *testing.T, path string, limit uint64, pairs []uint32, n uint64, want *Prepared) bool {
	t.Helper()
	lib, err := Open(Options{Path: path, MemLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	c := autoCounter(t, lib)
	before, _ := c.MemUsage()
	np := uint64(len(pairs) / 2)
	if uint64(PreprocessMinBytes(np+1, 0)) <= limit-before {
		return false
	}
	buf := make([]uint32, len(pairs)+2)
	for i := range buf {
		buf[i] = ^uint32(0) // not ids: the orientation must not read them
	}
	c.PrepareOrient(buf)
	copy(buf, pairs)
	fwd, rank, _, err := c.OrientOnDevice(context.Background(), buf[:len(pairs)], n)
	if err != nil {
		t.Fatalf("n=%d cap %d, readied: %v", n, limit, err)
	}
	if !equalCSR(fwd, want.Forward) || !slices.Equal(rank, want.Rank) {
		t.Fatalf("n=%d cap %d, readied: forward graph or ranks differ from the whole preprocessing's", n, limit)
	}
	if after, _ := c.MemUsage(); after != before {
		t.Fatalf("n=%d cap %d, readied: %d device bytes after, %d before", n, limit, after, before)
	}
	// The columns lie in the readied pinned memory, which the registry
	// holds as their pin, and as its only one.
	if st := lib.pins.Stats(); !stillRegistered(t, lib, fwd) || st.Blocks != 1 || st.Held != int64(len(buf))*4 {
		t.Fatalf("n=%d cap %d: pins %s, want the readied one of %d bytes", n, limit, st, len(buf)*4)
	}
	return true
}

// cpuForward is the CPU path's forward graph of compact pairs.
func cpuForward(t *testing.T, pairs []uint32) *graph.CSR {
	t.Helper()
	edges := make([]graph.Edge, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		edges = append(edges, graph.Edge{U: uint64(pairs[i]), V: uint64(pairs[i+1])})
	}
	return forward(t, edges)
}

// counterBytes is what a fresh counter of the library at path holds.
func counterBytes(t *testing.T, path string) int64 {
	t.Helper()
	lib, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	c := autoCounter(t, lib)
	used, _ := c.MemUsage()
	return int64(used)
}

// TestOrientInPiecesTooSmall: a cap below the pieces' least work area, or
// one whose pieces would make more than maxPieceRuns runs, is out of
// memory, DoesNotFit says so, and the pairs are as given (the host builds
// the forward graph from them).
func TestOrientInPiecesTooSmall(t *testing.T) {
	good, _ := refLibs(t)
	base := counterBytes(t, good)
	for _, tc := range []struct {
		n, m  int
		limit int64
	}{
		{3000, 20000, base + 3000*4 + 8*1024}, // no work area
		{3000, 100000, base + int64(devmem.AllocBytes(3000*4)) + 2*int64(devmem.AllocBytes(8*1024)) + 4096}, // a thousand keys a piece
	} {
		pairs := messyPairs(tc.n, tc.m, 5)
		lib, err := Open(Options{Path: good, MemLimit: uint64(tc.limit)})
		if err != nil {
			t.Fatal(err)
		}
		c := autoCounter(t, lib)
		given := slices.Clone(pairs)
		_, _, _, err = c.OrientOnDevice(context.Background(), pairs, uint64(tc.n))
		if !c.DoesNotFit(err) {
			t.Fatalf("m=%d under a cap of %d: %v, want out of memory", tc.m, tc.limit, err)
		}
		if !slices.Equal(pairs, given) {
			t.Fatalf("m=%d: the pairs changed although nothing was oriented", tc.m)
		}
	}
}

// TestOrientInPiecesRefusesBadIDs: an id beyond the vertices fails the
// pieces with the library's message and is no out-of-memory error.
func TestOrientInPiecesRefusesBadIDs(t *testing.T) {
	forLibs(t, func(t *testing.T, path string) {
		pairs := messyPairs(500, 3000, 9)
		pairs[len(pairs)-1] = 500
		base := counterBytes(t, path)
		limit := base + PreprocessMinBytes(uint64(len(pairs)/2), 500) - 1 // pieces, not the whole
		lib, err := Open(Options{Path: path, MemLimit: uint64(limit)})
		if err != nil {
			t.Fatal(err)
		}
		c := autoCounter(t, lib)
		_, _, _, err = c.OrientOnDevice(context.Background(), pairs, 500)
		var le *abi.Error
		if err == nil || c.DoesNotFit(err) || !errors.As(err, &le) || le.Op != "tg_pieces_sort" {
			t.Fatalf("an id beyond the vertices: %v, want tg_pieces_sort's refusal", err)
		}
	})
}

// TestCutRanges: the ranges cover every key of the runs once, in order,
// none holds more than the limit of keys or rows, and the spans point at
// the runs' keys in the base array.
func TestCutRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		nruns := 1 + r.IntN(6)
		var base []uint64
		var bounds []int
		var keysOf [][]uint64
		for range nruns {
			k := r.IntN(300)
			run := make([]uint64, 0, k)
			for range k {
				row := uint64(r.IntN(20))
				if trial%3 == 0 {
					row = uint64(r.IntN(3)) // long rows
				}
				run = append(run, row<<32|uint64(r.IntN(1000)))
			}
			slices.Sort(run)
			run = slices.Compact(run)
			keysOf = append(keysOf, run)
			bounds = append(bounds, len(base))
			base = append(base, run...)
		}
		bounds = append(bounds, len(base))
		runs := make([]rope, nruns)
		for i := range runs {
			runs[i] = span(uint64(bounds[i]), uint64(bounds[i+1]-bounds[i]))
		}
		limit := uint64(max(nruns, 1+r.IntN(80)))
		var got []uint64
		last := uint64(0)
		err := cutRanges(runs, limit, base, func(lo, hi uint64, spans []uint64) error {
			if lo < last || hi <= lo {
				t.Fatalf("range [%d, %d) after %d", lo, hi, last)
			}
			last = hi
			var keys []uint64
			for i := 0; i < len(spans); i += 2 {
				keys = append(keys, base[spans[i]:spans[i]+spans[i+1]]...)
			}
			if uint64(len(keys)) > limit || len(keys) == 0 {
				t.Fatalf("range [%x, %x) holds %d keys, limit %d", lo, hi, len(keys), limit)
			}
			for _, k := range keys {
				if k < lo || k >= hi {
					t.Fatalf("key %x outside [%x, %x)", k, lo, hi)
				}
			}
			if (hi-1)>>32-lo>>32+1 > limit {
				t.Fatalf("range [%x, %x) spans more than %d rows", lo, hi, limit)
			}
			slices.Sort(keys)
			got = append(got, keys...)
			// The spans are the range's to overwrite: later ranges must
			// not read them.
			for i := 0; i < len(spans); i += 2 {
				clear(base[spans[i] : spans[i]+spans[i+1]])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var want []uint64
		for i := range nruns {
			want = append(want, keysOf[i]...)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: the ranges hold %d keys, the runs %d", trial, len(got), len(want))
		}
	}
}

// TestOrientMarkedInPieces: pairs of the input's own ids, numbered by
// graph.MarkPairs but not rewritten, are oriented in pieces with the
// device mapping their ids (ids spread out, loops, loop-only ids): the
// forward graph, ranks and statistics equal OrientOnDevice's of the pairs
// MarkedPairs.Compact writes, less the loops and pairs it counts as
// given. An id the map leaves unmarked fails with the library's message.
func TestOrientMarkedInPieces(t *testing.T) {
	forLibs(t, func(t *testing.T, path string) {
		ctx := context.Background()
		for _, tc := range []struct{ n, m int }{{300, 4000}, {2000, 40000}} {
			pairs := messyPairs(tc.n, tc.m, uint64(tc.n)+1)
			for i := range pairs {
				pairs[i] = 3*pairs[i] + 7 // ids 7, 10, 13, ...: not compact
			}
			pairs = append(pairs, 2, 2, 5, 5) // loops of ids seen nowhere else
			loops := 0
			for i := 0; i < len(pairs); i += 2 {
				if pairs[i] == pairs[i+1] {
					loops++
				}
			}
			m, err := graph.MarkPairs(slices.Clone(pairs), graph.CleanOptions{Workers: 2})
			if err != nil || m.Bits == nil {
				t.Fatalf("n=%d: marked %v, bits %v", tc.n, err, m != nil && m.Bits != nil)
			}
			c, err := m.Compact()
			if err != nil {
				t.Fatal(err)
			}
			n := uint64(len(c.OrigID))
			base := counterBytes(t, path)
			limit := base + PreprocessMinBytes(uint64(len(c.Pairs)/2), n)/3 // pieces
			wantC := autoCounter(t, mustOpen(t, path, uint64(limit)))
			want, wrank, wst, err := wantC.OrientOnDevice(ctx, slices.Clone(c.Pairs), n)
			if err != nil {
				t.Fatal(err)
			}
			m, err = graph.MarkPairs(slices.Clone(pairs), graph.CleanOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			got, rank, st, err := autoCounter(t, mustOpen(t, path, uint64(limit))).OrientMarkedOnDevice(ctx, m)
			if err != nil {
				t.Fatalf("n=%d cap %d: %v", tc.n, limit, err)
			}
			if !equalCSR(got, want) || !slices.Equal(rank, wrank) {
				t.Fatalf("n=%d: forward graph or ranks differ from the compacted pairs'", tc.n)
			}
			wst.SelfLoops, wst.InputPairs = uint64(loops), uint64(len(pairs)/2)
			if st != wst {
				t.Fatalf("n=%d: stats %+v, want %+v", tc.n, st, wst)
			}
		}
		// A map missing a mark: the pair with that id breaks the rule.
		pairs := messyPairs(500, 3000, 9)
		m, err := graph.MarkPairs(slices.Clone(pairs), graph.CleanOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		m.Bits[2] &^= 1 // id 64 unmarked
		limit := counterBytes(t, path) + PreprocessMinBytes(uint64(len(pairs)/2), 500)/3
		c := autoCounter(t, mustOpen(t, path, uint64(limit)))
		_, _, _, err = c.OrientMarkedOnDevice(ctx, m)
		var le *abi.Error
		if err == nil || c.DoesNotFit(err) || !errors.As(err, &le) || le.Op != "tg_pieces_sort" {
			t.Fatalf("an unmarked id: %v, want tg_pieces_sort's refusal", err)
		}
	})
}

func mustOpen(t *testing.T, path string, limit uint64) *Library {
	t.Helper()
	lib, err := Open(Options{Path: path, MemLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// TestPiecesMayTake errs towards yes: wherever the pieces take the pairs,
// it says they may; far below that, it says they may not.
func TestPiecesMayTake(t *testing.T) {
	pairs := messyPairs(2000, 100000, 3)
	np := uint64(len(pairs) / 2)
	path, _ := refLibs(t)
	took := 0
	for limit := uint64(1 << 14); limit < uint64(PreprocessMinBytes(np, 2000)); limit += limit / 8 {
		_, _, _, err := autoCounter(t, mustOpen(t, path, limit)).orientInPieces(context.Background(), slices.Clone(pairs), 2000, nil, false)
		may := PiecesMayTake(limit, np, 2000, 0)
		if err == nil {
			took++
			if !may {
				t.Fatalf("limit %d: the pieces took %d pairs, PiecesMayTake says they may not", limit, np)
			}
		} else if !errors.Is(err, ErrOutOfMemory) {
			t.Fatalf("limit %d: %v", limit, err)
		}
	}
	if took == 0 || PiecesMayTake(1<<14, np, 2000, 0) {
		t.Fatalf("the pieces took the pairs under %d limits; at 16 KiB PiecesMayTake says %v", took, PiecesMayTake(1<<14, np, 2000, 0))
	}
	// Vertices beyond the GPU path's (tg_pieces_begin refuses them),
	// whatever the room.
	if PiecesMayTake(1<<62, 1<<32, 1<<32-1, 0) {
		t.Fatal("PiecesMayTake takes 2^32-1 vertices")
	}
}

// TestOrientSpanInPieces: pairs of the input's own ids (spread out, loops,
// loop-only ids, ids never seen) oriented in pieces with the device
// numbering them: the forward graph and statistics equal OrientOnDevice's
// of the pairs graph.CompactPairsInPlace writes (less the loops and pairs
// it counts as given), rank[id] is the compacted id's rank for every id
// with an edge and ^0 for the others, at caps from a few pieces to many,
// and the ranks come from the device or the host (the span past a piece).
func TestOrientSpanInPieces(t *testing.T) {
	forLibs(t, func(t *testing.T, path string) {
		ctx := context.Background()
		for _, tc := range []struct{ n, m, div int }{{300, 4000, 3}, {2000, 40000, 3}, {2000, 40000, 12}} {
			pairs := messyPairs(tc.n, tc.m, uint64(tc.n)+2)
			for i := range pairs {
				pairs[i] = 3*pairs[i] + 7 // ids 7, 10, 13, ...: not compact
			}
			pairs = append(pairs, 2, 2, 5, 5) // loops of ids seen nowhere else
			loops := 0
			for i := 0; i < len(pairs); i += 2 {
				if pairs[i] == pairs[i+1] {
					loops++
				}
			}
			span := uint64(3*tc.n + 7)
			c, err := graph.CompactPairsInPlace(slices.Clone(pairs), graph.CleanOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			n := uint64(len(c.OrigID))
			base := counterBytes(t, path)
			limit := base + PreprocessMinBytes(uint64(len(c.Pairs)/2), n)/int64(tc.div) // pieces
			want, wrank, wst, err := autoCounter(t, mustOpen(t, path, uint64(limit))).OrientOnDevice(ctx, slices.Clone(c.Pairs), n)
			if err != nil {
				t.Fatal(err)
			}
			got, rank, st, err := autoCounter(t, mustOpen(t, path, uint64(limit))).OrientSpanOnDevice(ctx, slices.Clone(pairs), span)
			if err != nil {
				t.Fatalf("n=%d cap %d: %v", tc.n, limit, err)
			}
			if !equalCSR(got, want) {
				t.Fatalf("n=%d cap %d: the forward graph differs from the compacted pairs'", tc.n, limit)
			}
			if uint64(len(rank)) != span {
				t.Fatalf("n=%d: %d ranks, want %d", tc.n, len(rank), span)
			}
			wantRank := make([]uint32, span)
			for i := range wantRank {
				wantRank[i] = ^uint32(0)
			}
			for v, id := range c.OrigID {
				wantRank[id] = wrank[v]
			}
			if !slices.Equal(rank, wantRank) {
				t.Fatalf("n=%d cap %d: the ranks differ from the compacted pairs'", tc.n, limit)
			}
			wst.SelfLoops, wst.InputPairs = uint64(loops), uint64(len(pairs)/2)
			if st != wst {
				t.Fatalf("n=%d: stats %+v, want %+v", tc.n, st, wst)
			}
		}
	})
}
