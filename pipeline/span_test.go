package pipeline

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/worker"
)

// writeDenseBin writes an rmat graph of 32-bit ids as a binary file with
// duplicates, a few self-loops (one in 200 edges) and ids seen only in
// self-loops, all below 2^scale + 2^(scale-4): ids that span fewer words
// than there are pairs, as rmat's do.
func writeDenseBin(t *testing.T, scale int, seed uint64) messyGraph {
	t.Helper()
	edges, err := gen.RMAT(scale, 8, seed, 2)
	if err != nil {
		t.Fatal(err)
	}
	var out []graph.Edge
	for i, e := range edges {
		out = append(out, e)
		switch i % 200 {
		case 2, 50:
			out = append(out, graph.Edge{U: e.V, V: e.U})
		case 4:
			out = append(out, graph.Edge{U: e.U, V: e.U})
		case 6:
			x := uint64(1)<<scale + uint64(i/200)
			out = append(out, graph.Edge{U: x, V: x})
		}
	}
	path := filepath.Join(t.TempDir(), "dense.bin")
	if err := edgeio.WriteFile(path, out, edgeio.WriteOptions{Format: edgeio.FormatBin, IDWidth: 4}); err != nil {
		t.Fatal(err)
	}
	list := make([][2]uint64, len(out))
	for i, e := range out {
		list[i] = [2]uint64{e.U, e.V}
	}
	return messyGraph{path, testgraphs.LocalCounts(list)}
}

// TestCountFileNumbersIDsOnDevice: 32-bit pairs whose ids span fewer words
// than there are pairs, under a cap known before the device starts that
// cannot clean them whole, are only scanned on the host; the device
// numbers, cleans and orients them in pieces, and the count and every
// figure of the graph (vertices, loops, ids seen only in loops) equal
// the count that learns the cap from the device's refusal, which sends
// them the same way. Where the
// device declines them, the host numbers them and the count is the same.
func TestCountFileNumbersIDsOnDevice(t *testing.T) {
	ctx := context.Background()
	lib := deviceLibrary(t)
	g := writeDenseBin(t, 12, 3)
	fwdBytes := gpu.BlockBytes(int64(len(g.want.Degree)), int64(len(g.want.Support)))
	config := func(known uint64, s []worker.Slot) Config {
		cfg := testConfig(nil)
		cfg.Devices = func() ([]worker.Slot, string, error) {
			time.Sleep(20 * time.Millisecond) // a device's start
			return s, "lib", nil
		}
		cfg.DeviceLimit = known
		return cfg
	}
	for _, limit := range []int64{fwdBytes, fwdBytes / 2} {
		slots, lt := deviceSlots(t, lib, 1, uint64(limit), false)
		late, err := CountFile(ctx, g.path, config(0, slots))
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		// Refused whole, the ids go to the pieces as a known cap sends them.
		if lt.residentIDs.Load() != 1 || lt.spanCalls.Load() != 1 || lt.spanned.Load() != 1 || lt.built.Load()+lt.marked.Load() != 0 {
			t.Fatalf("limit %d learnt: %d resident calls, %d span calls (%d built), %d compacted and %d marked orientations",
				limit, lt.residentIDs.Load(), lt.spanCalls.Load(), lt.spanned.Load(), lt.built.Load(), lt.marked.Load())
		}
		if late.Triangles != g.want.Total {
			t.Fatalf("limit %d: %d triangles, brute force %d", limit, late.Triangles, g.want.Total)
		}
		for _, decline := range []bool{false, true} {
			slots, tally := deviceSlots(t, lib, 1, uint64(limit), decline)
			early, err := CountFile(ctx, g.path, config(uint64(limit), slots))
			if err != nil {
				t.Fatalf("limit %d known (decline %v): %v", limit, decline, err)
			}
			if calls, built := tally.spanCalls.Load(), tally.spanned.Load(); calls != 1 || built != 1 && !decline {
				t.Fatalf("limit %d (decline %v): %d calls of OrientSpanOnDevice, %d built", limit, decline, calls, built)
			}
			if decline != (tally.marked.Load()+tally.built.Load() == 1) {
				t.Fatalf("limit %d (decline %v): %d marked, %d compacted orientations after it", limit, decline, tally.marked.Load(), tally.built.Load())
			}
			if early.Plan == nil || !early.Plan.SpanIDs {
				t.Fatalf("limit %d: plan %+v, want the device numbering the ids", limit, early.Plan)
			}
			if early.Removed == nil || early.Removed.IsolatedIDs == 0 || early.Removed.SelfLoops == 0 {
				t.Fatalf("limit %d: removed %+v, want loops and ids seen only in them", limit, early.Removed)
			}
			sameGraphReport(t, early, late)
		}
	}
}
