package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/plan"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

// deviceLibrary is $TRIGRID_CUDA_LIB when set (the real library, on a GPU
// machine); otherwise it compiles the plain-C reference implementation of
// the same ABI (its tg_preprocess cleans and orients on the CPU, in C), or
// skips without a C compiler.
func deviceLibrary(t *testing.T) string {
	t.Helper()
	if lib := os.Getenv("TRIGRID_CUDA_LIB"); lib != "" {
		return lib
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		if testgraphs.InCI() {
			t.Fatal("no gcc: cannot build the reference CUDA-ABI library")
		}
		t.Skip("no gcc: cannot build the reference CUDA-ABI library")
	}
	src := filepath.Join("..", "kernels", "cuda")
	files, _ := filepath.Glob(filepath.Join(src, "ref", "*.c"))
	lib := filepath.Join(t.TempDir(), "libtrigrid_ref.so")
	args := append([]string{"-O2", "-std=c11", "-fPIC", "-shared", "-I", src, "-o", lib}, files...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return lib
}

// spyTally counts the calls that reach OrientIDsOnDevice (or
// KeepIDsOnDevice) and OrientOnDevice and those that built the forward
// graph there.
type spyTally struct {
	idCalls, idBuilt, calls, built atomic.Int32
	// residentIDs counts the calls that reach PrepareResidentIDs;
	// marked the forward graphs built by OrientMarkedOnDevice; spanCalls
	// and spanned the calls of OrientSpanOnDevice and its forward graphs.
	residentIDs, marked, spanCalls, spanned atomic.Int32
	mu                                      sync.Mutex
	made                                    []*gpu.Counter // every counter the slots made
}

// uploads is the blocks every counter made so far uploaded.
func (t *spyTally) uploads() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.made {
		n += c.Uploads()
	}
	return n
}

// counts is {idCalls, idBuilt, calls, built}.
func (t *spyTally) counts() [4]int32 {
	return [4]int32{t.idCalls.Load(), t.idBuilt.Load(), t.calls.Load(), t.built.Load()}
}

// orientSpy tallies a device counter's orientations. With hostIDs its
// OrientIDsOnDevice and OrientSpanOnDevice answer that the pairs do not
// fit, so that the host compacts (or numbers) the ids and OrientOnDevice
// (or OrientMarkedOnDevice) takes over.
type orientSpy struct {
	*gpu.Counter
	hostIDs bool
	tally   *spyTally
}

func (s orientSpy) OrientIDsOnDevice(ctx context.Context, p kernels.IDPairs) (*graph.CSR, []uint64, kernels.PrepStats, error) {
	s.tally.idCalls.Add(1)
	if s.hostIDs {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("spy: %w", gpu.ErrOutOfMemory)
	}
	fwd, ids, st, err := s.Counter.OrientIDsOnDevice(ctx, p)
	if err == nil {
		s.tally.idBuilt.Add(1)
	}
	return fwd, ids, st, err
}

func (s orientSpy) KeepIDsOnDevice(ctx context.Context, p kernels.IDPairs, wantIDs bool, host *kernels.HostBlocks) ([]uint64, kernels.PrepStats, error) {
	s.tally.idCalls.Add(1)
	if s.hostIDs {
		host.Scanned()
		return nil, kernels.PrepStats{}, fmt.Errorf("spy: %w", gpu.ErrOutOfMemory)
	}
	ids, st, err := s.Counter.KeepIDsOnDevice(ctx, p, wantIDs, host)
	if err == nil {
		s.tally.idBuilt.Add(1)
	}
	return ids, st, err
}

func (s orientSpy) PrepareResidentIDs(ctx context.Context, p kernels.IDPairs) (kernels.PrepStats, error) {
	s.tally.residentIDs.Add(1)
	return s.Counter.PrepareResidentIDs(ctx, p)
}

func (s orientSpy) OrientSpanOnDevice(ctx context.Context, pairs []uint32, span uint64) (*graph.CSR, []uint32, kernels.PrepStats, error) {
	s.tally.spanCalls.Add(1)
	if s.hostIDs {
		return nil, nil, kernels.PrepStats{}, fmt.Errorf("spy: %w", gpu.ErrOutOfMemory)
	}
	fwd, rank, st, err := s.Counter.OrientSpanOnDevice(ctx, pairs, span)
	if err == nil {
		s.tally.spanned.Add(1)
	}
	return fwd, rank, st, err
}

func (s orientSpy) OrientMarkedOnDevice(ctx context.Context, m *graph.MarkedPairs) (*graph.CSR, []uint32, kernels.PrepStats, error) {
	fwd, rank, st, err := s.Counter.OrientMarkedOnDevice(ctx, m)
	if err == nil {
		s.tally.marked.Add(1)
	}
	return fwd, rank, st, err
}

func (s orientSpy) OrientOnDevice(ctx context.Context, pairs []uint32, n uint64) (*graph.CSR, []uint32, kernels.PrepStats, error) {
	s.tally.calls.Add(1)
	fwd, rank, st, err := s.Counter.OrientOnDevice(ctx, pairs, n)
	if err == nil {
		s.tally.built.Add(1)
	}
	return fwd, rank, st, err
}

// deviceSlots returns n slots counting on the library at path with a
// context capped at limit bytes (0: none), and the spy's tallies.
func deviceSlots(t *testing.T, path string, n int, limit uint64, hostIDs bool) ([]worker.Slot, *spyTally) {
	t.Helper()
	lib, err := gpu.Open(gpu.Options{Path: path, MemLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	tally := new(spyTally)
	slots := make([]worker.Slot, n)
	for x := range slots {
		slots[x] = worker.Slot{Device: api.Device{Kind: "gpu", Name: "lib"}, NewCounter: func(string) (kernels.Counter, error) {
			c, err := lib.NewCounter("auto")
			if err != nil {
				return nil, err
			}
			tally.mu.Lock()
			tally.made = append(tally.made, c)
			tally.mu.Unlock()
			return orientSpy{Counter: c, hostIDs: hostIDs, tally: tally}, nil
		}}
	}
	return slots, tally
}

// messyGraph is an input file and its brute-force counts.
type messyGraph struct {
	path string
	want *testgraphs.Local
}

// messyGraphs writes writeMessy's text graph (seed text) and
// writeMessyBin's binary one (seed bin) of scale, with their brute-force
// counts.
func messyGraphs(t *testing.T, scale int, text, bin uint64) []messyGraph {
	t.Helper()
	path := writeMessy(t, scale, text)
	b, edges := writeMessyBin(t, scale, bin)
	return []messyGraph{
		{path, testgraphs.LocalCounts(testgraphs.ReadEdges(t, path))},
		{b, testgraphs.LocalCounts(edges)},
	}
}

// writeMessy writes an rmat graph in spread-out 64-bit ids with
// duplicates (both directions), self-loops and ids that appear only in
// self-loops, as text.
func writeMessy(t *testing.T, scale int, seed uint64) string {
	t.Helper()
	edges, err := gen.RMAT(scale, 8, seed, 2)
	if err != nil {
		t.Fatal(err)
	}
	id := func(x uint64) uint64 { return x*0x9e3779b97f4a7c15 + 12345 }
	var b strings.Builder
	for i, e := range edges {
		fmt.Fprintf(&b, "%d %d\n", id(e.U), id(e.V))
		switch i % 17 {
		case 3:
			fmt.Fprintf(&b, "%d %d\n", id(e.V), id(e.U))
		case 5:
			fmt.Fprintf(&b, "%d %d\n", id(e.U), id(e.U))
		case 7:
			fmt.Fprintf(&b, "%d %d\n", uint64(i)<<40|7, uint64(i)<<40|7)
		}
	}
	path := filepath.Join(t.TempDir(), "messy.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeMessyBin writes an rmat graph with duplicates, self-loops and ids
// seen only in self-loops as a binary edge list of 32-bit ids, which the
// device path reads as it is on disk.
func writeMessyBin(t *testing.T, scale int, seed uint64) (string, [][2]uint64) {
	t.Helper()
	edges, err := gen.RMAT(scale, 8, seed, 2)
	if err != nil {
		t.Fatal(err)
	}
	var out []graph.Edge
	for i, e := range edges {
		out = append(out, e)
		switch i % 13 {
		case 2:
			out = append(out, graph.Edge{U: e.V, V: e.U})
		case 4:
			out = append(out, graph.Edge{U: e.U, V: e.U})
		case 6:
			x := uint64(1)<<scale + uint64(i)
			out = append(out, graph.Edge{U: x, V: x})
		}
	}
	path := filepath.Join(t.TempDir(), "messy.bin")
	if err := edgeio.WriteFile(path, out, edgeio.WriteOptions{Format: edgeio.FormatBin, IDWidth: 4}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := edgeio.ReadBinaryPairs32(context.Background(), path, edgeio.ReadOptions{}); !ok || err != nil {
		t.Fatalf("%s is not read as 32-bit pairs (%v)", path, err)
	}
	list := make([][2]uint64, len(out))
	for i, e := range out {
		list[i] = [2]uint64{e.U, e.V}
	}
	return path, list
}

// TestPartitionedDeviceOrientation: a partitioned count whose forward
// graph the device built (the library's tg_preprocess) gives the
// brute-force totals, per-vertex and per-edge counts in the input's ids,
// and the CPU path's report, for both schemes and P = 2, 3, 4 (3 on ca-GrQc); --verify
// checks it array for array against the host's.
func TestPartitionedDeviceOrientation(t *testing.T) {
	ctx := context.Background()
	lib := deviceLibrary(t)
	grqc := filepath.Join("..", "testdata", "ca-GrQc.txt.gz")
	for _, g := range append(messyGraphs(t, 9, 5, 4), messyGraph{grqc, testgraphs.LocalCounts(testgraphs.ReadEdges(t, grqc))}) {
		path, want := g.path, g.want
		ps := []int{2, 3, 4}
		if path == grqc {
			ps = []int{3} // a real graph, one P per scheme
		}
		cpu, err := CountFilePartitioned(ctx, path, func() Config {
			c := testConfig(cpuSlots(2, "merge"))
			c.P = 2
			return c
		}())
		if err != nil {
			t.Fatal(err)
		}
		if cpu.Triangles != want.Total {
			t.Fatalf("%s: the CPU path counts %d, brute force %d", path, cpu.Triangles, want.Total)
		}
		dir := t.TempDir()
		for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
			for _, p := range ps {
				name := fmt.Sprintf("%s/%v-%d", filepath.Base(path), sc, p)
				t.Run(name, func(t *testing.T) {
					// P = 4 has the host compact the ids.
					hostIDs := p == 4
					slots, tally := deviceSlots(t, lib, 2, 0, hostIDs)
					cfg := testConfig(slots)
					cfg.Scheme, cfg.P, cfg.Verify = sc, p, p >= 3
					if p == 2 {
						// The device found and started while the file is read.
						cfg.Slots, cfg.Devices = nil, func() ([]worker.Slot, string, error) { return slots, "lib", nil }
					}
					cfg.PerVertex = counts.Options{VerticesFile: filepath.Join(dir, fmt.Sprintf("%v%d.v.tsv", sc, p)), EdgesFile: filepath.Join(dir, fmt.Sprintf("%v%d.e.tsv", sc, p))}
					rep, err := CountFilePartitioned(ctx, path, cfg)
					if err != nil {
						t.Fatal(err)
					}
					wantCalls := [4]int32{1, 1, 0, 0}
					if hostIDs {
						wantCalls = [4]int32{1, 0, 1, 1}
					}
					if got := tally.counts(); got != wantCalls {
						t.Fatalf("orientation on the device: %v calls and builds from input ids, then from compact ids; want %v", got, wantCalls)
					}
					checkAgainst(t, want, rep, cfg.PerVertex.VerticesFile, cfg.PerVertex.EdgesFile)
					sameGraphReport(t, rep, cpu)
					if p == 2 && rep.Device != "lib" {
						t.Fatalf("device %q, want the one Devices gave", rep.Device)
					}
					if cfg.Verify && !rep.Verified {
						t.Fatal("--verify did not verify")
					}
				})
			}
		}
	}
}

// TestPartitionedDeviceTooSmall: under a cap below what preprocessing
// needs the host compacts the ids and the device orients them in pieces
// (with --verify checked against the host's build from the input), and
// the count is still exact.
func TestPartitionedDeviceTooSmall(t *testing.T) {
	ctx := context.Background()
	lib := deviceLibrary(t)
	for _, g := range messyGraphs(t, 9, 6, 7) {
		path, want := g.path, g.want
		full, err := CountFilePartitioned(ctx, path, func() Config {
			c := testConfig(cpuSlots(1, "merge"))
			c.P = 2
			return c
		}())
		if err != nil {
			t.Fatal(err)
		}
		// A cap that holds P = 4's subtasks but not preprocessing's buffers.
		limit := uint64(gpu.PreprocessMinBytes(uint64(len(want.Support)), uint64(len(want.Degree))) / 2)
		for _, verify := range []bool{false, true} {
			slots, tally := deviceSlots(t, lib, 1, limit, false)
			cfg := testConfig(slots)
			cfg.P, cfg.Verify = 4, verify
			cfg.PerVertex = counts.Options{VerticesFile: filepath.Join(t.TempDir(), "v.tsv"), EdgesFile: filepath.Join(t.TempDir(), "e.tsv")}
			rep, err := CountFilePartitioned(ctx, path, cfg)
			if err != nil {
				t.Fatalf("%s verify %v: %v", path, verify, err)
			}
			if got, want := tally.counts(), [4]int32{1, 0, 1, 1}; got != want {
				t.Fatalf("%s verify %v: %v calls and builds on the device from input ids, then from compact ids; want %v", path, verify, got, want)
			}
			checkAgainst(t, want, rep, cfg.PerVertex.VerticesFile, cfg.PerVertex.EdgesFile)
			sameGraphReport(t, rep, full)
		}
	}
}

// sameGraphReport compares what two reports say of the graph.
func sameGraphReport(t *testing.T, got, want *Report) {
	t.Helper()
	type figures struct {
		Triangles, Wedges uint64
		Vertices, Edges   int64
		MaxDegree, MaxOut int64
		Removed           Removed
		RawEdges          int64
	}
	of := func(r *Report) figures {
		f := figures{Triangles: r.Triangles, Wedges: r.Wedges, Vertices: r.Vertices, Edges: r.Edges, MaxDegree: r.MaxDegree}
		if r.MaxOutDegree != nil {
			f.MaxOut = *r.MaxOutDegree
		}
		if r.Removed != nil {
			f.Removed = *r.Removed
		}
		if r.Input != nil {
			f.RawEdges = r.Input.RawEdges
		}
		return f
	}
	if g, w := of(got), of(want); g != w {
		t.Fatalf("report\n got %+v\nwant %+v", g, w)
	}
}

// An error finding the devices is the count's error, and the read stops.
func TestPartitionedDevicesError(t *testing.T) {
	cfg := testConfig(nil)
	cfg.P = 2
	cfg.Devices = func() ([]worker.Slot, string, error) { return nil, "", errors.New("no such GPU") }
	if _, err := CountFilePartitioned(context.Background(), writeMessy(t, 8, 1), cfg); err == nil || !strings.Contains(err.Error(), "no such GPU") {
		t.Fatalf("err %v, want the devices' error", err)
	}
}

// A device counter leaves a degeneracy-order count to the host, which
// orients as asked.
func TestPartitionedDeviceDegeneracyOnHost(t *testing.T) {
	lib := deviceLibrary(t)
	path := writeMessy(t, 8, 2)
	want := testgraphs.LocalCounts(testgraphs.ReadEdges(t, path))
	slots, tally := deviceSlots(t, lib, 1, 0, false)
	cfg := testConfig(slots)
	cfg.P, cfg.Order = 3, graph.OrderDegeneracy
	rep, err := CountFilePartitioned(context.Background(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Triangles != want.Total || rep.Order != "degeneracy" || tally.counts() != [4]int32{} {
		t.Fatalf("%d triangles in order %s with device orientations %v; want %d, degeneracy, none", rep.Triangles, rep.Order, tally.counts(), want.Total)
	}
}

// The in-memory partitioner (Load: 32-bit pairs compacted in place and
// graph.ForwardCompacted where the ids allow, else Clean then Orient)
// writes shards and id map byte-identical to the streaming partitioner's
// for the same partition id, on 32-bit and 64-bit ids, both schemes.
func TestPartitionFileMatchesStreaming(t *testing.T) {
	ctx := context.Background()
	bin, _ := writeMessyBin(t, 9, 3)
	for _, path := range []string{bin, writeMessy(t, 9, 3), filepath.Join("..", "testdata", "ca-GrQc.txt.gz")} {
		for _, sc := range []storage.Scheme{storage.SchemeHash, storage.SchemeRange} {
			mem, ext := storage.NewMemStore(), storage.NewMemStore()
			pc := partition.Config{Scheme: sc, P: 3, Workers: 2, PartitionID: 42}
			if _, err := PartitionFile(ctx, path, mem, testConfig(nil), pc); err != nil {
				t.Fatal(err)
			}
			pc.MemLimit = 4 << 30
			if _, err := PartitionFile(ctx, path, ext, testConfig(nil), pc); err != nil {
				t.Fatal(err)
			}
			names, err := mem.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			other, err := ext.List(ctx)
			if err != nil || !slices.Equal(names, other) || len(names) < 3 {
				t.Fatalf("%s %v: files %v and %v (%v)", path, sc, names, other, err)
			}
			for _, name := range names {
				a, errA := mem.Get(ctx, name)
				b, errB := ext.Get(ctx, name)
				if name == "manifest.json" {
					a, b = withoutTime(t, a), withoutTime(t, b)
				}
				if errA != nil || errB != nil || !bytes.Equal(a, b) {
					t.Fatalf("%s %v: %s differs between the in-memory and the streaming partitioner (%v, %v)", path, sc, name, errA, errB)
				}
			}
		}
	}
}

// withoutTime is a manifest without its creation time and the checksum
// that covers it.
func withoutTime(t *testing.T, data []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "created")
	delete(m, "checksum")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCountFileLargerThanDevice: `count` of the whole graph under a cap
// that cannot hold it whole counts it in row ranges with its columns in
// host memory (on, auto) or in blocks as --partitions 0 does (off),
// exactly, with and without --verify, within the cap; a cap that holds
// it counts it whole.
func TestCountFileLargerThanDevice(t *testing.T) {
	ctx := context.Background()
	lib := deviceLibrary(t)
	for _, g := range messyGraphs(t, 12, 8, 9) {
		path, want := g.path, g.want
		fwdBytes := gpu.BlockBytes(int64(len(want.Degree)), int64(len(want.Support)))
		for _, c := range []struct {
			limit          int64
			verify         bool
			mode           StreamMode
			ranges, blocks bool
		}{
			{4 * fwdBytes, false, StreamOn, false, false},
			{fwdBytes / 2, true, StreamOn, true, false},
			{fwdBytes / 4, false, StreamOn, true, false},
			{fwdBytes / 12, false, StreamOn, true, false},
			{fwdBytes / 4, true, StreamAuto, true, false},
			{fwdBytes * 3 / 4, false, StreamAuto, true, false},
			{fwdBytes / 40, false, StreamAuto, true, false},
			{fwdBytes / 4, false, StreamOff, false, true},
		} {
			slots, _ := deviceSlots(t, lib, 1, uint64(c.limit), false)
			cfg := testConfig(slots)
			cfg.Verify, cfg.RowRanges = c.verify, c.mode
			rep, err := CountFile(ctx, path, cfg)
			if err != nil {
				t.Fatalf("%s limit %d: %v", path, c.limit, err)
			}
			if rep.Triangles != want.Total {
				t.Fatalf("%s limit %d: %d triangles, brute force %d", path, c.limit, rep.Triangles, want.Total)
			}
			if blocks := rep.Partition != nil && rep.Partition.P > 1; blocks != c.blocks {
				t.Fatalf("%s limit %d mode %v: counted in blocks %v (%+v), want %v", path, c.limit, c.mode, blocks, rep.Partition, c.blocks)
			}
			dm := rep.DeviceMemory
			if ranges := dm != nil && dm.RowRanges > 0; ranges != c.ranges {
				t.Fatalf("%s limit %d mode %v: counted in row ranges %v (%+v), want %v", path, c.limit, c.mode, ranges, dm, c.ranges)
			}
			wantLayout := plan.Whole
			if c.ranges {
				wantLayout = plan.RowRanges
			} else if c.blocks {
				wantLayout = plan.Blocks
			}
			if rep.Plan == nil || rep.Plan.Layout != wantLayout {
				t.Fatalf("%s limit %d mode %v: plan %+v, want layout %s", path, c.limit, c.mode, rep.Plan, wantLayout)
			}
			if (c.ranges || c.blocks) && (dm.PeakBytes > uint64(c.limit) || c.ranges && dm.MappedBytes == 0) {
				t.Fatalf("%s limit %d: device figures %+v", path, c.limit, dm)
			}
			if c.verify && !rep.Verified {
				t.Fatalf("%s: --verify did not verify", path)
			}
		}
	}
}

// A graph whose pairs alone exceed the device limit known before the
// device starts has its ids compacted while it starts: the device is never
// asked to clean them whole, and the count and every figure of the graph
// equal those of the count that learns the limit from the device's
// refusal, whole and partitioned, on a GPU and on a CPU chosen late.
func TestCountFileCompactsWhileDeviceStarts(t *testing.T) {
	ctx := context.Background()
	lib := deviceLibrary(t)
	for _, g := range messyGraphs(t, 11, 5, 6) {
		path, want := g.path, g.want
		fwdBytes := gpu.BlockBytes(int64(len(want.Degree)), int64(len(want.Support)))
		for _, limit := range []int64{fwdBytes, fwdBytes / 4, fwdBytes / 40} {
			slots, tally := deviceSlots(t, lib, 1, uint64(limit), false)
			config := func(known uint64, s []worker.Slot) Config {
				cfg := testConfig(nil)
				cfg.Devices = func() ([]worker.Slot, string, error) {
					time.Sleep(20 * time.Millisecond) // a device's start
					return s, "lib", nil
				}
				cfg.DeviceLimit = known
				return cfg
			}
			late, err := CountFile(ctx, path, config(0, slots))
			if err != nil {
				t.Fatalf("%s limit %d: %v", path, limit, err)
			}
			if n := tally.residentIDs.Load(); n != 1 {
				t.Fatalf("%s limit %d: the device was asked %d times to clean the pairs whole, want 1", path, limit, n)
			}
			early, err := CountFile(ctx, path, config(uint64(limit), slots))
			if err != nil {
				t.Fatalf("%s limit %d known: %v", path, limit, err)
			}
			if n := tally.residentIDs.Load(); n != 1 {
				t.Fatalf("%s limit %d known: the device was asked to clean pairs that cannot fit it", path, limit)
			}
			// 32-bit pairs are numbered, not rewritten, and the device maps
			// them as it orients them in pieces, where the pieces fit.
			if marked, bin := tally.marked.Load(), strings.HasSuffix(path, ".bin"); marked != 0 && !bin || bin && limit == fwdBytes && marked != 1 {
				t.Fatalf("%s limit %d known: %d forward graphs built from numbered ids", path, limit, marked)
			}
			if late.Triangles != want.Total {
				t.Fatalf("%s limit %d: %d triangles, brute force %d", path, limit, late.Triangles, want.Total)
			}
			sameGraphReport(t, early, late)
			if early.DeviceMemory == nil || late.DeviceMemory == nil || early.DeviceMemory.RowRanges != late.DeviceMemory.RowRanges {
				t.Fatalf("%s limit %d: device figures %+v, without the limit known %+v", path, limit, early.DeviceMemory, late.DeviceMemory)
			}

			// A CPU chosen after the read counts the compacted ids on the
			// host, holding a subtask to the limit as well: a limit below
			// its least (partition.HostModel's reserve alone is 1 MiB) is
			// refused naming the least, which then counts.
			cpu, err := CountFile(ctx, path, config(uint64(limit), cpuSlots(1, "merge")))
			var least int64
			if err != nil {
				const says = "is below the least that can count this graph: "
				i := strings.Index(err.Error(), says)
				if i < 0 {
					t.Fatalf("%s limit %d on the CPU: %v", path, limit, err)
				}
				fmt.Sscanf(err.Error()[i+len(says):], "%d", &least)
				if cpu, err = CountFile(ctx, path, config(uint64(least), cpuSlots(1, "merge"))); err != nil {
					t.Fatalf("%s limit %d on the CPU, at the least stated, %d: %v", path, limit, least, err)
				}
			}
			sameGraphReport(t, cpu, late)

			// Partitioned, P chosen for the limit (at a quarter and more:
			// at a fortieth not even one edge's blocks fit): the device is
			// not asked for the input's ids, and orients the numbered ones
			// (where the pieces fit them) or the compacted ones once.
			if limit < fwdBytes/4 {
				continue
			}
			cfg := config(uint64(limit), slots)
			cfg.P, cfg.Budget, cfg.ModelFromDevice = 0, limit, true
			before, markedBefore := tally.counts(), tally.marked.Load()
			part, err := CountFilePartitioned(ctx, path, cfg)
			if err != nil {
				t.Fatalf("%s limit %d partitioned: %v", path, limit, err)
			}
			got, marked := tally.counts(), tally.marked.Load()-markedBefore
			if got[0] != before[0] || got[2]-before[2]+marked != 1 || marked == 1 != (limit == fwdBytes && strings.HasSuffix(path, ".bin")) {
				t.Fatalf("%s limit %d partitioned: calls on the device %v, before %v, %d from numbered ids: want none from input ids, one from numbered or compact ids",
					path, limit, got, before, marked)
			}
			sameGraphReport(t, part, late)
		}
	}
}
