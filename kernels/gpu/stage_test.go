package gpu

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

// stagings lists the ways the id tests hand p to the device: as it is,
// and for 32-bit pairs also staged (stageAll).
func stagings(p kernels.IDPairs) []bool {
	if p.P64 != nil {
		return []bool{false}
	}
	return []bool{false, true}
}

// stageAll stages p's ids on c's device in pieces added in a shuffled
// order: pieces of 1M ids (4 MiB, registered) for large lists, else about
// a fifth of the list, and a last piece of what is left. It returns p
// with Staged set and the stage, which the caller releases.
func stageAll(t *testing.T, c *Counter, p kernels.IDPairs) (kernels.IDPairs, *kernels.IDStage) {
	t.Helper()
	s, err := c.StageIDs(len(p.P32))
	if err != nil {
		t.Fatalf("stage %d ids: %v", len(p.P32), err)
	}
	piece := 1 << 20
	if len(p.P32) < 4<<20 {
		piece = max(1, len(p.P32)/5)
	}
	var cuts [][2]int
	for lo := 0; lo < len(p.P32); lo += piece {
		cuts = append(cuts, [2]int{lo, min(len(p.P32), lo+piece)})
	}
	rng := rand.New(rand.NewPCG(uint64(len(p.P32)), 7))
	rng.Shuffle(len(cuts), func(i, j int) { cuts[i], cuts[j] = cuts[j], cuts[i] })
	for _, cut := range cuts {
		if err := s.Add(p.P32, cut[0], cut[1]); err != nil {
			t.Fatalf("stage words %d to %d: %v", cut[0], cut[1], err)
		}
	}
	p.Staged = s
	return p, s
}

// A stage that misses a piece, was released, belongs to another counter
// or was consumed is an error, never a count; releasing a stage frees its
// device room and unpins its pieces, also after its counter closed.
func TestStageIDsErrors(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	c := autoCounter(t, lib)
	other := autoCounter(t, lib)
	p := idPairs(randomEdges(3000, 70000, 5)) // 140,000 ids: pieces of 256 KiB and more are pinned
	held, _ := c.MemUsage()
	bg := context.Background()
	mustFail := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v; want an error saying %q", what, err, want)
		}
	}

	s, err := c.StageIDs(len(p.P32))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(p.P32, 0, 70000); err != nil {
		t.Fatal(err)
	}
	mustFail("beyond the list", s.Add(p.P32, 70000, len(p.P32)+2), "words")
	if _, err := devmem.Register(lib.abi, p.P32[:70000]); err == nil {
		t.Fatal("a staged piece was not pinned: registering it again succeeded")
	}
	q := p
	q.Staged = s
	_, err = c.PrepareIDs(q)
	mustFail("half staged", err, "70000 of 140000 ids staged")
	q.Staged = nil
	_, _, _, err = other.OrientIDsOnDevice(bg, kernels.IDPairs{P32: p.P32, Staged: s})
	mustFail("another counter's stage", err, "another device")
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	if used, _ := c.MemUsage(); used != held {
		t.Fatalf("%d device bytes held after the stage's release, %d before", used, held)
	}
	r, err := devmem.Register(lib.abi, p.P32[:70000])
	if err != nil || r == nil {
		t.Fatalf("the released stage's piece is still pinned: %v", err)
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	_, err = c.PrepareIDs(kernels.IDPairs{P32: p.P32, Staged: s})
	mustFail("released", err, "released or consumed")
	mustFail("add after release", s.Add(p.P32, 70000, len(p.P32)), "released or consumed")
	if err := s.Release(); err != nil {
		t.Fatalf("second release: %v", err)
	}

	// Consumed: a second preparation from the same stage fails.
	q, s = stageAll(t, c, p)
	if _, err := c.PrepareIDs(q); err != nil {
		t.Fatal(err)
	}
	_, err = c.PrepareIDs(q)
	mustFail("consumed", err, "released or consumed")
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}

	// A counter closed with a stage: the release only unpins.
	c2, err := lib.NewCounter("auto")
	if err != nil {
		t.Fatal(err)
	}
	_, s = stageAll(t, c2, p)
	c2.Close()
	if err := s.Release(); err != nil {
		t.Fatalf("release after close: %v", err)
	}
	if r, err := devmem.Register(lib.abi, p.P32); err != nil || r == nil {
		t.Fatalf("pieces still pinned after the release: %v", err)
	} else if err := r.Release(); err != nil {
		t.Fatal(err)
	}

	// Room the device does not have is an error DoesNotFit recognizes.
	small, err := Open(Options{Path: good, MemLimit: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	c3 := autoCounter(t, small)
	if _, err := c3.StageIDs(len(p.P32)); !c3.DoesNotFit(err) || !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("staging beyond a 64 KiB cap: %v; want an out-of-memory error", err)
	}
	if _, err := c3.StageIDs(3); err == nil {
		t.Fatal("an odd number of ids was staged")
	}
}

// On the device: ids staged in pinned pieces of 512 KiB (and a short
// last one) give the statistics, forward graph and input ids of the same
// ids uploaded in one piece. Small enough for compute-sanitizer.
func TestDeviceStageIDs(t *testing.T) {
	lib := deviceLib(t)
	c := autoCounter(t, lib)
	edges := randomEdges(20000, 300001, 3)
	p := idPairs(edges)
	want, wantIDs, wantSt, err := c.OrientIDsOnDevice(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.StageIDs(len(p.P32))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	const piece = 128 << 10 // words
	for lo := len(p.P32) / piece * piece; lo >= 0; lo -= piece {
		if err := s.Add(p.P32, lo, min(len(p.P32), lo+piece)); err != nil {
			t.Fatal(err)
		}
	}
	p.Staged = s
	fwd, ids, st, err := c.OrientIDsOnDevice(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if st != wantSt || !equalCSR(fwd, want) || !slices.Equal(ids, wantIDs) {
		t.Fatalf("staged: stats %+v and a forward graph that differ from one upload's %+v", st, wantSt)
	}
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
}

// Pairs not staged while read go to the device in pieces when they make
// two or more (uploadPairs): every id staged, the count from them exact,
// whether the device takes them to count, to orient or to keep; fewer go
// pinned whole, as they are.
func TestUploadPairsInPieces(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	defer func(p int) { uploadPiece = p }(uploadPiece)
	uploadPiece = 64 << 10
	edges := randomEdges(5000, 60000, 3)
	fwd := hostForward(t, edges)
	want := mustReference(t, kernels.Whole(fwd))
	c := autoCounter(t, lib)

	small := idPairs(edges[:1000])
	if p, done := c.uploadPairs(small); p.Staged != nil {
		t.Fatal("fewer ids than two pieces were staged")
	} else {
		done()
	}
	p, done := c.uploadPairs(idPairs(edges))
	if p.Staged == nil {
		t.Fatal("ids of several pieces were not staged")
	}
	s := p.Staged.Handle().(*stage)
	if s.added != len(p.P32) || len(p.P32)*4 < 4*uploadPiece {
		t.Fatalf("%d of %d ids staged", s.added, len(p.P32))
	}
	if _, err := c.PrepareIDs(p); err != nil {
		t.Fatal(err)
	}
	done()
	res, err := c.CountResident(context.Background())
	if err != nil || res.Triangles != want {
		t.Fatalf("count from ids uploaded in pieces: %d triangles (%v), the reference counts %d", res.Triangles, err, want)
	}

	// Through the public entries, which upload for themselves.
	if _, err := c.PrepareIDs(idPairs(edges)); err != nil {
		t.Fatal(err)
	}
	if res, err := c.CountResident(context.Background()); err != nil || res.Triangles != want {
		t.Fatalf("PrepareIDs: %d triangles (%v), the reference counts %d", res.Triangles, err, want)
	}
	if c.input != nil {
		t.Fatal("the upload's stage is still held")
	}
	got, _, _, err := c.OrientIDsOnDevice(context.Background(), idPairs(edges))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Offsets, fwd.Offsets) || !slices.Equal(got.Cols, fwd.Cols) {
		t.Fatal("the forward graph oriented from ids uploaded in pieces differs from the host's")
	}
}
